// Whether the repeats of a point are measurements of their own.

package schema

import (
	"cmp"
	"fmt"
	"slices"
)

// Independence test of repeats. Two repeats of a point under
// GeneratorBenchsealV1 send the same request numbers k = 0, 1, …; a real
// measurement of request k in one repeat and of request k in another are
// two readings of a live server's timing through the network stack and
// the client's clock, whose end_ns − sent_ns and first-chunk offset differ
// by the scheduling noise of both machines: microseconds at least on any
// machine (loopback alone varies by several), however similar the
// prompts. A repeat copied from another with noise added below that
// (nanoseconds, to defeat the exact fingerprint of checkCopies) agrees
// with it within TwinToleranceNS on both timings for most requests.
// Honest captures against benchseal's simulator at time scales 0.001 and 1,
// closed and open loop, c1 to c64, had at most a few percent of their
// matched requests that close (TestHonestRepeatsAreIndependent in
// verify/independence_test.go: at most 1 of 64); the
// test needs TwinShare of them, and at least MinTwinPairs matched
// requests, so an honest pair crosses it only if half its requests fall
// within 1 µs of their twin on both timings at once.
//
// What it cannot catch: a copy with noise of the size of real noise (tens
// of microseconds), or one whose requests were renumbered; only
// server-side evidence tells those from a measurement.
const (
	// TwinToleranceNS is how close (in ns) two readings of request k
	// must be, on end_ns − sent_ns and on the first chunk's offset, to
	// count as the same reading.
	TwinToleranceNS = 1000
	// MinTwinPairs is the fewest requests two repeats must share (ok,
	// with chunks, same k) to be tested.
	MinTwinPairs = 16
	// TwinShare is the share of shared requests within TwinToleranceNS
	// at which two repeats are not shown independent.
	TwinShare = 0.5
)

// RepeatTwin names a repeat of a point that is not shown independent of
// an earlier repeat of the same point: Close of its Matched requests
// (same request number, both ok with chunks) agree with those of Of
// within TwinToleranceNS on both end_ns − sent_ns and the first chunk.
type RepeatTwin struct {
	Point          string
	Repeat, Of     int
	Close, Matched int
}

// String says what the test found, for a warning.
func (t RepeatTwin) String() string {
	return fmt.Sprintf("point %q repeat %d is not shown independent of repeat %d: %d of its %d requests (numbered alike, ok with chunks) agree with repeat %d's within %d ns on both end_ns − sent_ns and the first chunk's offset, closer than two measurements of a live server come; it counts as one repeat with repeat %d",
		t.Point, t.Repeat, t.Of, t.Close, t.Matched, t.Of, TwinToleranceNS, t.Of)
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

// Twins returns the repeats not shown independent of an earlier one of
// their point (each named once, with the first such repeat).
func (t *RepeatTimings) Twins() []RepeatTwin {
	if t == nil {
		return nil
	}
	if !t.sorted {
		for _, c := range t.cells {
			slices.SortFunc(c, func(a, b reqTiming) int { return cmp.Compare(a.k, b.k) })
		}
		t.sorted = true
	}
	var out []RepeatTwin
	for pi, p := range t.m.Load.Points {
		for b := 1; b < t.repeats; b++ {
			for a := max(0, b-maxTwinPeers); a < b; a++ {
				closeN, matched := twinCount(t.cells[pi*t.repeats+a], t.cells[pi*t.repeats+b])
				if matched >= MinTwinPairs && float64(closeN) >= TwinShare*float64(matched) {
					out = append(out, RepeatTwin{Point: p.Name, Repeat: b, Of: a, Close: closeN, Matched: matched})
					break
				}
			}
		}
	}
	return out
}

// twinCount counts the request numbers x and y (sorted by k) share, and
// those whose two timings agree within TwinToleranceNS.
func twinCount(x, y []reqTiming) (closeN, matched int) {
	abs := func(v int64) int64 {
		if v < 0 {
			return -v
		}
		return v
	}
	i, j := 0, 0
	for i < len(x) && j < len(y) {
		switch {
		case x[i].k < y[j].k:
			i++
		case x[i].k > y[j].k:
			j++
		default:
			matched++
			if abs(x[i].e2e-y[j].e2e) < TwinToleranceNS && abs(x[i].ttft-y[j].ttft) < TwinToleranceNS {
				closeN++
			}
			i++
			j++
		}
	}
	return closeN, matched
}

// Agreement returns, for repeats a and b of point index pi, how many
// request numbers both hold (ok, with chunks) and how many of those agree
// within TwinToleranceNS on both timings: the counts Twins tests.
func (t *RepeatTimings) Agreement(pi, a, b int) (closeN, matched int) {
	t.Twins() // sorts the cells
	return twinCount(t.cells[pi*t.repeats+a], t.cells[pi*t.repeats+b])
}
