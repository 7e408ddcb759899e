// Whether the repeats of a point are measurements of their own.

package schema

import (
	"cmp"
	"fmt"
	"slices"

	"github.com/benchseal/benchseal/internal/digits"
)

// Independence test of repeats. Two repeats of a point under
// GeneratorBenchsealV1 send the same request numbers k = 0, 1, …; a real
// measurement of request k in one repeat and of request k in another are
// two readings of a live server's timing through the network stack and
// the client's clock. For each of two timings (end_ns − sent_ns and the
// first chunk's offset) the test takes the paired differences d_k between
// the two repeats and their spread about their own median,
// S = median |d_k − median d| (so a shift of a whole repeat by a constant
// cancels out and only per-request variation counts). A copy of a repeat
// with noise added has S of the noise's size whatever constant it was
// shifted by; two measurements have S of the server's own variation.
//
// A pair is not shown independent when, on either timing, S is below the
// largest of three floors:
//
//   - TwinToleranceNS (1 µs): below any scheduling noise of two machines
//     (an exact copy, or one shifted by a constant, has S = 0);
//   - TwinItemShare × the timing's spread across the point's requests
//     (median absolute deviation of the timing in the two repeats): the
//     scale-free floor, which holds whatever the latencies' unit;
//   - 1 ÷ TwinPeerRatio of the largest S among the point's pairs of
//     repeats: what honest repeats of the same run show. A forger who
//     keeps the copies' noise below what the real repeats differ by is
//     caught by it; one who adds more makes the copies differ from their
//     source request by request by at least that much, and their numbers
//     no longer collapse the interval across repeats.
//
// docs/format.md gives the false-positive rates measured on honest
// captures (simulator at time scales 0.001 and 1, c1 to c64, 2 to 8
// repeats, open and closed loop, and a real llama-server) that set the
// constants. What it cannot catch: every repeat of a point a copy of one
// run with noise of the size of real noise (no real pair to compare with,
// and the scale-free floor sits far below real noise so that honest
// repeats pass), or copies whose requests were renumbered; only
// server-side evidence tells those from a measurement.
const (
	// TwinToleranceNS is the absolute floor (ns) on the spread of the
	// paired differences of either timing.
	TwinToleranceNS = 1000
	// MinTwinPairs is the fewest requests two repeats must share (ok,
	// with chunks, same k) to be tested.
	MinTwinPairs = 16
	// TwinItemShare is the scale-free floor: the share of a timing's
	// spread across the point's requests below which the paired
	// differences' spread is a copy's.
	TwinItemShare = 1e-4
	// TwinPeerRatio is how many times smaller than the point's largest
	// paired spread a pair's may be before it is a copy's.
	TwinPeerRatio = 50
)

// Timing names of the independence test.
const (
	TimingE2E        = "end_ns − sent_ns"
	TimingFirstChunk = "the first chunk's offset"
)

// RepeatTwin names a repeat of a point that is not shown independent of
// an earlier repeat of the same point: over their Matched requests (same
// request number, both ok with chunks), the paired differences of Timing
// spread by SpreadNS, below FloorNS (Floor says which floor).
type RepeatTwin struct {
	Point             string
	Repeat, Of        int
	Matched           int
	Timing            string
	SpreadNS, FloorNS int64
	Floor             string
}

// String says what the test found, for a warning.
func (t RepeatTwin) String() string {
	return fmt.Sprintf("point %q repeat %d is not shown independent of repeat %d: over its %d requests numbered alike (ok with chunks), the differences of %s from repeat %d's spread by %s about their median, below %s (%s), closer than two measurements of a live server come; it counts as one repeat with repeat %d",
		t.Point, t.Repeat, t.Of, t.Matched, t.Timing, t.Of, Duration(t.SpreadNS), Duration(t.FloorNS), t.Floor, t.Of)
}

// reqTiming is one measured request's number and timings.
type reqTiming struct{ k, e2e, ttft int64 }

// RepeatTimings keeps, per point × repeat, the number, end_ns − sent_ns
// and first-chunk offset of each measured ok request with chunks (24
// bytes per such record), for the independence test.
type RepeatTimings struct {
	m       *Manifest
	repeats int
	cells   [][]reqTiming
	sorted  bool
}

// NewRepeatTimings returns a collector for the records of m, or nil when
// the test does not apply: fewer than two repeats, or not a run under
// GeneratorBenchsealV1 whose send and end times were measured (nothing
// numbers the requests alike, or says they were measured).
func NewRepeatTimings(m *Manifest) *RepeatTimings {
	if m == nil || m.Load.Repeats < 2 || m.Load.Generator != GeneratorBenchsealV1 ||
		m.Provenance.Field(FieldSent).Status != FieldMeasured || m.Provenance.Field(FieldEnd).Status != FieldMeasured {
		return nil
	}
	return &RepeatTimings{m: m, repeats: m.Load.Repeats, cells: make([][]reqTiming, len(m.Load.Points)*m.Load.Repeats)}
}

// Add takes one record of point index pi (a declared point; its repeat
// in range).
func (t *RepeatTimings) Add(pi int, rec *Record) {
	if t == nil || rec.Phase != PhaseMeasure || rec.Status != StatusOK || len(rec.ChunksNS) == 0 ||
		pi < 0 || pi >= len(t.m.Load.Points) || rec.Repeat < 0 || rec.Repeat >= t.repeats {
		return
	}
	k, ok := generatedIndex(rec.ID, rec.Point, rec.Repeat, 'm')
	if !ok {
		return
	}
	c := pi*t.repeats + rec.Repeat
	t.cells[c] = append(t.cells[c], reqTiming{k, rec.EndNS - rec.SentNS, rec.ChunksNS[0]})
	t.sorted = false
}

// maxTwinPeers bounds the earlier repeats each repeat is compared with
// (the ones just before it), so a point of many repeats costs at most
// maxTwinPeers comparisons per repeat.
const maxTwinPeers = 64

// pairSpread is, for two repeats of a point, how many request numbers
// both hold and, per timing (e2e, first chunk), the spread of their
// paired differences and of the timing across the requests.
type pairSpread struct {
	matched int
	s, w    [2]int64
}

// Twins returns the repeats not shown independent of an earlier one of
// their point (each named once, with the first such repeat).
func (t *RepeatTimings) Twins() []RepeatTwin {
	if t == nil {
		return nil
	}
	t.sort()
	var out []RepeatTwin
	var buf []int64
	for pi, p := range t.m.Load.Points {
		spreads := map[[2]int]pairSpread{}
		var most [2]int64
		for b := 1; b < t.repeats; b++ {
			for a := max(0, b-maxTwinPeers); a < b; a++ {
				ps := pairStats(t.cells[pi*t.repeats+a], t.cells[pi*t.repeats+b], &buf)
				if ps.matched < MinTwinPairs {
					continue
				}
				spreads[[2]int{a, b}] = ps
				most[0], most[1] = max(most[0], ps.s[0]), max(most[1], ps.s[1])
			}
		}
		for b := 1; b < t.repeats; b++ {
			for a := max(0, b-maxTwinPeers); a < b; a++ {
				ps, ok := spreads[[2]int{a, b}]
				if !ok {
					continue
				}
				if tw, ok := twinOf(ps, most); ok {
					tw.Point, tw.Repeat, tw.Of = p.Name, b, a
					out = append(out, tw)
					break
				}
			}
		}
	}
	return out
}

// twinOf tests one pair's spreads against the three floors, e2e first.
func twinOf(ps pairSpread, most [2]int64) (RepeatTwin, bool) {
	for i, timing := range []string{TimingE2E, TimingFirstChunk} {
		floor, why := int64(TwinToleranceNS), "the 1 µs floor"
		if f := int64(TwinItemShare * float64(ps.w[i])); f > floor {
			floor, why = f, fmt.Sprintf("%s of the timing's spread across the requests, %s", digits.Shortest(TwinItemShare), Duration(ps.w[i]))
		}
		if f := most[i] / TwinPeerRatio; f > floor {
			floor, why = f, fmt.Sprintf("1/%d of the largest such spread between two repeats of the point, %s", TwinPeerRatio, Duration(most[i]))
		}
		if ps.s[i] < floor {
			return RepeatTwin{Matched: ps.matched, Timing: timing, SpreadNS: ps.s[i], FloorNS: floor, Floor: why}, true
		}
	}
	return RepeatTwin{}, false
}

func (t *RepeatTimings) sort() {
	if !t.sorted {
		for _, c := range t.cells {
			slices.SortFunc(c, func(a, b reqTiming) int { return cmp.Compare(a.k, b.k) })
		}
		t.sorted = true
	}
}

// pairStats matches x and y (sorted by k) by request number and returns
// the spreads twinOf tests; buf is scratch space.
func pairStats(x, y []reqTiming, buf *[]int64) pairSpread {
	var ps pairSpread
	var xi, yj []int // matched indices
	i, j := 0, 0
	for i < len(x) && j < len(y) {
		switch {
		case x[i].k < y[j].k:
			i++
		case x[i].k > y[j].k:
			j++
		default:
			xi, yj = append(xi, i), append(yj, j)
			i++
			j++
		}
	}
	ps.matched = len(xi)
	if ps.matched == 0 {
		return ps
	}
	for t := range 2 {
		get := func(r reqTiming) int64 {
			if t == 0 {
				return r.e2e
			}
			return r.ttft
		}
		d := (*buf)[:0]
		for n := range xi {
			d = append(d, get(x[xi[n]])-get(y[yj[n]]))
		}
		ps.s[t] = medianAbsDev(d)
		d = d[:0]
		for n := range xi {
			d = append(d, get(x[xi[n]]), get(y[yj[n]]))
		}
		ps.w[t] = medianAbsDev(d)
		*buf = d
	}
	return ps
}

// medianAbsDev returns the median of |v − median v| (v reordered).
func medianAbsDev(v []int64) int64 {
	slices.Sort(v)
	m := median(v)
	for i, x := range v {
		if x -= m; x < 0 {
			x = -x
		}
		v[i] = x
	}
	slices.Sort(v)
	return median(v)
}

// median of the sorted v (the lower of the two middle values' mean).
func median(v []int64) int64 {
	n := len(v)
	if n%2 == 1 {
		return v[n/2]
	}
	return v[n/2-1] + (v[n/2]-v[n/2-1])/2
}

// Spreads returns, for repeats a and b of point index pi, how many
// request numbers both hold (ok, with chunks) and the spread of their
// paired differences per timing (e2e, first chunk) and of the timings
// across the requests: the figures Twins tests.
func (t *RepeatTimings) Spreads(pi, a, b int) (matched int, spread, across [2]int64) {
	t.sort()
	var buf []int64
	ps := pairStats(t.cells[pi*t.repeats+a], t.cells[pi*t.repeats+b], &buf)
	return ps.matched, ps.s, ps.w
}
