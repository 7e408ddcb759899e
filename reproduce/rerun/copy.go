package rerun

import (
	"fmt"
	"io"

	"github.com/benchseal/benchseal/schema"
)

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
// boundary for 3 in 10 000 values). 25 % lies far from both.
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

// fingerprints counts the fingerprints of a run's ok records.
func fingerprints(r schema.Run) (map[fingerprint]int, int, error) {
	it, err := r.OpenRecords()
	if err != nil {
		return nil, 0, err
	}
	defer it.Close()
	out := map[fingerprint]int{}
	n := 0
	for {
		rec, err := it.Next()
		if err == io.EOF {
			return out, n, nil
		}
		if err != nil {
			return nil, 0, err
		}
		if rec.Status != schema.StatusOK {
			continue
		}
		out[fingerprintOf(rec)]++
		n++
	}
}

// CheckNotACopy refuses a reproduction whose ok records repeat the
// original's: when at least CopyShareLimit of them (and at least 2, or
// the one a one-record run has) have a fingerprint the original's ok
// records have (each original record matched once), whatever the order of
// the records, their ids and their absolute times. It reads each run's
// records once and holds one entry per distinct fingerprint of the
// original.
func CheckNotACopy(orig, repro schema.Run) error {
	of, _, err := fingerprints(orig)
	if err != nil {
		return fmt.Errorf("read the original's records: %w", err)
	}
	rf, m, err := fingerprints(repro)
	if err != nil {
		return fmt.Errorf("read the reproduction's records: %w", err)
	}
	n := 0
	for f, c := range rf {
		n += min(c, of[f])
	}
	if m > 0 && float64(n) >= CopyShareLimit*float64(m) && n >= min(m, 2) {
		return fmt.Errorf("%d of %d ok records repeat the original's timings to %d µs (first chunk and end after the send, output tokens, chunks): a reproduction is another run", n, m, CopyQuantumNS/1000)
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
