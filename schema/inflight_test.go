package schema

import (
	"math/rand/v2"
	"slices"
	"testing"
)

// closedLoopSpans lays n requests on conc workers, each sending its next
// request gap ns (plus jitter) after its previous one ended, and returns
// them in request-number order (sorted by send, then each moved by up
// to window places), with some ending the instant they are sent.
func closedLoopSpans(rng *rand.Rand, n, conc int, gap, lat int64, window int) [][2]int64 {
	free := make([]int64, conc)
	var spans [][2]int64
	for range n {
		w := slices.Index(free, slices.Min(free))
		s := free[w] + rng.Int64N(gap+1)
		e := s + rng.Int64N(lat+1)
		if rng.IntN(50) == 0 {
			e = s
		}
		free[w] = e
		spans = append(spans, [2]int64{s, e})
	}
	slices.SortStableFunc(spans, func(a, b [2]int64) int { return int(a[0] - b[0]) })
	keys := make([]int, len(spans))
	order := make([]int, len(spans))
	for i := range spans {
		keys[i], order[i] = i+rng.IntN(window+1), i
	}
	slices.SortStableFunc(order, func(a, b int) int { return keys[a] - keys[b] })
	out := make([][2]int64, len(spans))
	for i, o := range order {
		out[i] = spans[o]
	}
	return out
}

// TestSpanStreamMatchesHeldSpans: a cell swept as its spans come answers
// what sorting all its spans does (peaks, late start, turnaround test),
// and a cell whose sends leave the reorder window says so.
func TestSpanStreamMatchesHeldSpans(t *testing.T) {
	defer func(a, b int) { logSpans, reorderSpans = a, b }(logSpans, reorderSpans)
	logSpans, reorderSpans = 64, 32
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		n, conc  int
		gap, lat int64
		window   int
	}{
		{n: 500, conc: 4, gap: 10, lat: 1000, window: 8},
		{n: 2000, conc: 16, gap: 50_000, lat: 5_000_000, window: 20},
		{n: 2000, conc: 16, gap: 9_000_000, lat: 3_000_000, window: 20},
		{n: 3000, conc: 1, gap: 5_000_000, lat: 1_000_000, window: 0},
		{n: 1000, conc: 64, gap: 0, lat: 3, window: 30},
		{n: 1000, conc: 4, gap: 3, lat: 0, window: 2},
	}
	turns := false
	for _, tc := range cases {
		for claimed := range []int64{0, 1, 2} {
			conc := int64(tc.conc) / (1 + int64(claimed)) // a declared concurrency at or under the one run
			spans := closedLoopSpans(rng, tc.n, tc.conc, tc.gap, tc.lat, tc.window)
			var cell offeredCell
			var log SpanLog
			for _, s := range spans {
				cell.add(s[0], s[1], conc)
				log.Add(s[0], s[1])
			}
			got, want := cell.spans(), heldSpans{&log}
			if _, ok := got.(*spanStream); !ok || got.unordered() {
				t.Fatalf("%+v: the cell did not stream (%T, unordered %v)", tc, got, got.unordered())
			}
			if got.spanCount() != want.spanCount() || got.peak() != want.peak() || got.peakInstant() != want.peakInstant() || got.late() != want.late() {
				t.Errorf("%+v conc %d: stream %d %d %d %v, held %d %d %d %v", tc, conc, got.spanCount(), got.peak(), got.peakInstant(), got.late(),
					want.spanCount(), want.peak(), want.peakInstant(), want.late())
			}
			if want.peak() <= conc {
				g, w := got.turnaround(conc), want.turnaround(conc)
				if g != w {
					t.Errorf("%+v conc %d: turnaround\n stream %q\n held   %q", tc, conc, g, w)
				}
				turns = turns || w != ""
			}
		}
	}
	if !turns {
		t.Error("no case failed the turnaround test")
	}
	var cell offeredCell
	for i := range 200 {
		s := int64(i) * 10
		if i == 150 {
			s = 0 // sent before the 100 released since
		}
		cell.add(s, s+5, 2)
	}
	if cs := cell.spans(); !cs.unordered() {
		t.Error("a span sent before those released did not mark the cell unordered")
	}
}

// TestPeakInFlightSweptMatchesSorted: the peak swept as the spans come is
// the peak of sorting them, and spans out of send order beyond the
// reorder window are reported, not answered.
func TestPeakInFlightSweptMatchesSorted(t *testing.T) {
	defer func(b int) { reorderSpans = b }(reorderSpans)
	reorderSpans = 32
	rng := rand.New(rand.NewPCG(3, 4))
	for _, tc := range []struct {
		n, conc  int
		gap, lat int64
		window   int
	}{
		{n: 500, conc: 4, gap: 10, lat: 1000, window: 8},
		{n: 2000, conc: 16, gap: 50_000, lat: 5_000_000, window: 20},
		{n: 1000, conc: 64, gap: 0, lat: 3, window: 30},
		{n: 1000, conc: 4, gap: 3, lat: 0, window: 2},
	} {
		spans := closedLoopSpans(rng, tc.n, tc.conc, tc.gap, tc.lat, tc.window)
		got, ok := PeakInFlightSwept(slices.Values(spans))
		if want := PeakInFlightSeq(slices.Values(spans), len(spans)); !ok || got != want {
			t.Errorf("%+v: swept peak %d (ok %v), sorted %d", tc, got, ok, want)
		}
	}
	spans := closedLoopSpans(rng, 500, 4, 10, 1000, 0)
	spans = append(spans, [2]int64{spans[0][0] - 1, spans[0][0]})
	if _, ok := PeakInFlightSwept(slices.Values(spans)); ok {
		t.Error("a span sent before the whole window was swept anyway")
	}
}
