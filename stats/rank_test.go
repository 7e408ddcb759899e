package stats

import (
	"math"
	"testing"
)

func TestNearestRank(t *testing.T) {
	for _, c := range []struct {
		n, a, b, want int64
	}{
		{1, 999, 1000, 1},      // one sample: every quantile is it
		{0, 50, 100, 1},        // no samples: rank 1 (callers check n)
		{100, 50, 100, 50},     // ⌈50⌉
		{101, 50, 100, 51},     // ⌈50.5⌉
		{100, 99, 100, 99},     //
		{1000, 999, 1000, 999}, // p99.9
		{1000, 1, 1000, 1},     // p0.1
		{1001, 1, 1000, 2},     // ⌈1.001⌉
		{4, 1, 4, 1},           // exact quarter
		{5, 1, 4, 2},           // ⌈1.25⌉
		{100, 0, 100, 1},       // min
		{100, 100, 100, 100},   // max
		{math.MaxInt64, 999, 1000, 9214148664817921032}, // a·n overflows int64
	} {
		if got := NearestRank(c.n, c.a, c.b); got != c.want {
			t.Errorf("NearestRank(%d, %d, %d) = %d, want %d", c.n, c.a, c.b, got, c.want)
		}
	}
}
