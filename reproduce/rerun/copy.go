package rerun

import (
	"crypto/sha256"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"math/bits"

	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/schema"
)

// ErrRepeatsTimings is the condition of CheckNotACopy's refusal: the
// reproduction's records repeat the original's timings or their shapes.
var ErrRepeatsTimings = errors.New("the reproduction's records repeat the original's timings")

// CopyQuantumNS is the resolution, in ns, at which a record's timings
// are compared with the original's by CheckNotACopy: 10 µs. Re-ordering
// records or adding a few ns to their timestamps leaves a copy's
// fingerprints equal, while another run's differ: a request's latency
// varies from run to run by far more than 10 µs on any server.
const CopyQuantumNS = 10_000

// CopyShareLimit is the share of a reproduction's ok records whose
// fingerprints occur in the original at which CheckNotACopy refuses it.
// Two honest runs of the same test (capture, concurrency 2 and 4, 12
// requests + 2 warmup, 4 repeats, 112 ok records each) against one
// simulator over HTTP shared 1 of 112 fingerprints (0.9 %), and two
// in-process simulator runs (capture --simulate) 0 of 112; a copy of the
// original shares all of them, re-ordered or with up to 3 ns added to
// every end_ns about 99.97 % (a 3 ns shift crosses a 10 µs rounding
// boundary for 3 in 10 000 values). The shapes (shapeOf) of two honest
// runs shared none either: two captures against one benchseal simulate
// --listen server (concurrency 2 and 4, 12 requests + 2 warmup, 4
// repeats, default outputs) 0 of 112, two capture --simulate runs 0 of
// 112, a capture --simulate original (16 output tokens) and its
// reproduce over HTTP 0 of 56; that original's records moved to the
// reproduction's send times and scaled by 0.98 or 0.995 shared 56 of 56
// shapes (and 0 fingerprints), with ±20 µs on every chunk or 30 µs of
// jitter on the first chunk and end 54 of 56. 25 % lies far from both.
const CopyShareLimit = 0.25

// fingerprint is what of an ok record another run does not repeat: its
// first content chunk's and its end's offsets from its send, rounded to
// CopyQuantumNS (the first chunk -1 when it has none), its output tokens
// and its number of content chunks. Absolute times are left out: a copy
// moves them freely.
type fingerprint struct {
	first, end, tokens int64
	chunks             int
}

func fingerprintOf(r *schema.Record) fingerprint {
	f := fingerprint{first: -1, end: quantum(r.EndNS - r.SentNS), tokens: r.OutputTokens, chunks: len(r.ChunksNS)}
	if len(r.ChunksNS) > 0 {
		f.first = quantum(r.ChunksNS[0])
	}
	return f
}

// quantum is v rounded to the nearest multiple of CopyQuantumNS, in
// those units (floor division for negative v, so that the rounding is the
// same on both sides of 0).
func quantum(v int64) int64 {
	q := v + CopyQuantumNS/2
	d := q / CopyQuantumNS
	if q%CopyQuantumNS < 0 {
		d--
	}
	return d
}

// ShapeQuantum and FirstQuantum are the resolutions of a record's
// chunk-gap shape (shapeOf): each gap between chunks rounded to
// 1/ShapeQuantum (10 %) of the record's mean gap, and its first chunk's
// offset from the send to 1/FirstQuantum (2 %) of its span from the send
// to the end.
const (
	ShapeQuantum = 10
	FirstQuantum = 50
)

// MinShapeChunks is the fewest content chunks a record needs for its
// shape to count: with fewer, the few rounded shares of two runs' records
// agree by chance too often.
const MinShapeChunks = 4

// MinIrregularGaps is the fewest gaps between chunks that must differ
// from their mean (rounded, by at least 1/ShapeQuantum of it) for a
// record's shape to count: a server whose every gap is the same (benchseal
// simulate --time-scale 2: 76 of 112 shapes of two honest runs alike
// with none required) gives every record of the same output length the
// same shape whichever run it is of.
const MinIrregularGaps = 3

// shape is what of an ok record's timing survives an affine re-timing
// (every offset from the send scaled by one factor, the whole moved in
// time): its output tokens, its content chunks, and the SHA-256 of its
// rounded shares (shapeOf).
type shape struct {
	tokens int64
	chunks int
	gaps   [sha256.Size]byte
}

// shapeOf is r's shape and whether it has one (at least MinShapeChunks
// content chunks, a positive span and time from the first chunk to the
// last, at least MinIrregularGaps gaps off their mean): the first chunk's offset as a share of the span, and each gap
// between chunks as a share of the mean one (the time from the first
// chunk to the last over the gaps), rounded. Scaling every offset by one
// factor leaves each share equal (to the ns the scaled times are rounded
// to); moving every chunk by the same µs leaves the gaps equal; another
// run's gaps differ gap by gap.
func shapeOf(r *schema.Record) (shape, bool) {
	cs := r.ChunksNS
	span := r.EndNS - r.SentNS
	if len(cs) < MinShapeChunks || span <= 0 || cs[len(cs)-1] <= cs[0] {
		return shape{}, false
	}
	gaps := uint64(len(cs) - 1)
	h := sha256.New()
	var buf [8]byte
	binary.LittleEndian.PutUint64(buf[:], uint64(units(cs[0], span, FirstQuantum)))
	h.Write(buf[:])
	irregular := 0
	for i := 1; i < len(cs); i++ {
		u := units(cs[i]-cs[i-1], cs[len(cs)-1]-cs[0], gaps*ShapeQuantum)
		if u != ShapeQuantum {
			irregular++
		}
		binary.LittleEndian.PutUint64(buf[:], uint64(u))
		h.Write(buf[:])
	}
	if irregular < MinIrregularGaps {
		return shape{}, false
	}
	s := shape{tokens: r.OutputTokens, chunks: len(cs)}
	h.Sum(s.gaps[:0])
	return s, true
}

// units is a·scale/b rounded to the nearest integer (b > 0), in integer
// arithmetic so that every platform rounds alike: -1 for a negative a,
// math.MaxInt64 past int64.
func units(a, b int64, scale uint64) int64 {
	if a < 0 {
		return -1
	}
	hi, lo := bits.Mul64(uint64(a), 2*scale)
	lo, carry := bits.Add64(lo, uint64(b), 0)
	hi += carry
	d := 2 * uint64(b)
	if hi >= d {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, d)
	return int64(min(q, math.MaxInt64))
}

// tally is what a run's ok records hold for CheckNotACopy: the count of
// each fingerprint and of each shape, the ok records and the ok records
// with a shape.
type tally struct {
	prints  map[fingerprint]int
	shapes  map[shape]int
	n, nShp int
}

// fingerprints counts the fingerprints and shapes of a run's ok records.
func fingerprints(r schema.Run) (*tally, error) {
	it, err := r.OpenRecords()
	if err != nil {
		return nil, err
	}
	defer it.Close()
	t := &tally{prints: map[fingerprint]int{}, shapes: map[shape]int{}}
	for {
		rec, err := it.Next()
		if err == io.EOF {
			return t, nil
		}
		if err != nil {
			return nil, err
		}
		if rec.Status != schema.StatusOK {
			continue
		}
		t.prints[fingerprintOf(rec)]++
		t.n++
		if s, ok := shapeOf(rec); ok {
			t.shapes[s]++
			t.nShp++
		}
	}
}

// shared is how many of repro's counted items the original's match, each
// original item matched once.
func shared[K comparable](orig, repro map[K]int) int {
	n := 0
	for k, c := range repro {
		n += min(c, orig[k])
	}
	return n
}

// copied says whether n shared of m is a copy's share: at least
// CopyShareLimit of them, and at least 2 (the one a one-record run has).
func copied(n, m int) bool {
	return m > 0 && float64(n) >= CopyShareLimit*float64(m) && n >= min(m, 2)
}

// CheckNotACopy refuses a reproduction whose ok records repeat the
// original's, whatever the order of the records, their ids and their
// absolute times: when at least CopyShareLimit of them (and at least 2,
// or the one a one-record run has) have a fingerprint the original's ok
// records have (each original record matched once), or when as large a
// share of those with a chunk-gap shape (shapeOf) have one of the
// original's shapes, which holds for the original's records re-timed by
// one factor. It reads each run's records once and holds one entry per
// distinct fingerprint and shape of the original.
func CheckNotACopy(orig, repro schema.Run) error {
	of, err := fingerprints(orig)
	if err != nil {
		return fmt.Errorf("read the original's records: %w", err)
	}
	rf, err := fingerprints(repro)
	if err != nil {
		return fmt.Errorf("read the reproduction's records: %w", err)
	}
	if n := shared(of.prints, rf.prints); copied(n, rf.n) {
		return errcond.Errorf(ErrRepeatsTimings, "%d of %d ok records repeat the original's timings to %d µs (first chunk and end after the send, output tokens, chunks): a reproduction is another run", n, rf.n, CopyQuantumNS/1000)
	}
	if n := shared(of.shapes, rf.shapes); copied(n, rf.nShp) {
		return errcond.Errorf(ErrRepeatsTimings, "%d of %d ok records with %d or more chunks, %d gaps off their mean, repeat the shape of the original's timings (output tokens, chunks, the first chunk to %d %% of the request's time, each gap between chunks to %d %% of their mean): the original's records re-timed by one factor are no other run", n, rf.nShp, MinShapeChunks, MinIrregularGaps, 100/FirstQuantum, 100/ShapeQuantum)
	}
	return nil
}

// CheckAnotherRun refuses the original's own run offered as its
// reproduction: a reproduction is another run, with its own run id,
// start time and records (CheckNotACopy).
func CheckAnotherRun(orig, repro schema.Run) error {
	om, rm := orig.Manifest(), repro.Manifest()
	switch {
	case rm.RunID == om.RunID:
		return fmt.Errorf("run_id %q is the original's: a reproduction is another run", rm.RunID)
	case rm.StartTime != "" && rm.StartTime == om.StartTime:
		return fmt.Errorf("start_time %s is the original's: a reproduction is another run", rm.StartTime)
	}
	return CheckNotACopy(orig, repro)
}
