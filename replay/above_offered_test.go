package replay

import (
	"math/big"
	"strings"
	"testing"
)

// TestAboveOffered: a goodput above the offered rate is explained by the
// window being shorter than requests ÷ rate; at or below it, or without
// an offered rate (closed loop), nothing is said.
func TestAboveOffered(t *testing.T) {
	pt := func(offered Value, goodput, throughput Value) *PointResult {
		return &PointResult{Point: "rate-200", Counts: Counts{Sent: 60},
			Scalars:  map[string]Value{"goodput": goodput, "request_throughput": throughput, "window_ns": Int(262_402_000)},
			Overload: &Overload{OfferedRate: offered, ArrivalRate: Exact(big.NewRat(241665, 1000))}}
	}
	r := func(x int64) Value { return Int(x) }
	if n := AboveOffered(pt(r(200), r(228), r(228))); !strings.Contains(n, "goodput 228.000 req/s is above the offered 200.000 req/s because its window (first send → last end, 262.402 ms) was shorter than its 60 requests take at the offered rate (300.000 ms): they were sent at 241.665 req/s") {
		t.Errorf("above: %q", n)
	}
	if n := AboveOffered(pt(r(200), Null, r(210))); !strings.Contains(n, "request_throughput 210.000") {
		t.Errorf("throughput above, no SLO: %q", n)
	}
	for _, c := range []*PointResult{pt(r(200), r(200), r(199)), pt(Null, r(228), r(228))} {
		if n := AboveOffered(c); n != "" {
			t.Errorf("note %q where none is due", n)
		}
	}
}
