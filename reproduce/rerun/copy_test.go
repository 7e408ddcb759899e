package rerun

import (
	"math"
	"testing"
)

// TestQuantum: rounding to the nearest 10 µs, the same on both sides of 0.
func TestQuantum(t *testing.T) {
	for v, want := range map[int64]int64{0: 0, 4999: 0, 5000: 1, 14999: 1, -1: 0, -5000: 0, -5001: -1, -15001: -2} {
		if got := quantum(v); got != want {
			t.Errorf("quantum(%d) = %d, want %d", v, got, want)
		}
	}
}

// TestUnits: a·scale/b rounded to the nearest, -1 for a negative a, the
// largest int64 past it.
func TestUnits(t *testing.T) {
	for _, c := range []struct {
		a, b  int64
		scale uint64
		want  int64
	}{
		{0, 7, 10, 0}, {5, 100, 10, 1}, {4, 100, 10, 0}, {15, 100, 10, 2}, {100, 100, 10, 10},
		{-1, 100, 10, -1}, {math.MaxInt64, 1, 10, math.MaxInt64}, {1 << 40, 1 << 20, 1 << 30, 1 << 50},
	} {
		if got := units(c.a, c.b, c.scale); got != c.want {
			t.Errorf("units(%d, %d, %d) = %d, want %d", c.a, c.b, c.scale, got, c.want)
		}
	}
}
