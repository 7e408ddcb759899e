package artifact

import (
	"math"
	"testing"

	"github.com/benchseal/benchseal/servermetrics"
)

// TestSmallestSum: the k smallest observations of a histogram sum to at
// least their buckets' lower edges: 0 for the first bucket, the last
// finite edge for those above it.
func TestSmallestSum(t *testing.T) {
	// 10 observations: 2 in (0, 0.01], 3 in (0.01, 0.1], 4 in (0.1, 1], 1 above 1.
	h := &servermetrics.HistogramDelta{Count: 10, Under: []servermetrics.EdgeShare{{Edge: 0.01, Share: 0.2}, {Edge: 0.1, Share: 0.5}, {Edge: 1, Share: 0.9}}}
	for _, tc := range []struct {
		k    int64
		want float64
	}{
		{1, 0}, {2, 0}, {3, 0.01}, {5, 0.03}, {6, 0.13}, {9, 0.43}, {10, 1.43}, {12, 3.43},
	} {
		if got := smallestSum(h, tc.k); got < tc.want-1e-12 || got > tc.want+1e-12 {
			t.Errorf("smallestSum(k=%d) = %g, want %g", tc.k, got, tc.want)
		}
	}
}

// TestLargestSum: the m largest observations sum to at most their
// buckets' upper edges, and without bound when one may lie above the last
// finite edge.
func TestLargestSum(t *testing.T) {
	// 10 observations: 2 in (0, 0.01], 3 in (0.01, 0.1], 5 in (0.1, 1].
	h := &servermetrics.HistogramDelta{Count: 10, Under: []servermetrics.EdgeShare{{Edge: 0.01, Share: 0.2}, {Edge: 0.1, Share: 0.5}, {Edge: 1, Share: 1}}}
	for _, tc := range []struct {
		m    int64
		want float64
	}{
		{0, 0}, {1, 1}, {5, 5}, {6, 5.1}, {8, 5.3}, {9, 5.31}, {10, 5.32},
	} {
		if got := largestSum(h, tc.m); math.Abs(got-tc.want) > 1e-12 {
			t.Errorf("largestSum(m=%d) = %g, want %g", tc.m, got, tc.want)
		}
	}
	h.Under[2].Share = 0.9 // one observation above 1
	if got := largestSum(h, 1); !math.IsInf(got, 1) {
		t.Errorf("largestSum with one above the last edge = %g, want +Inf", got)
	}
}
