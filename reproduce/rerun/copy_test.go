package rerun

import "testing"

// TestQuantum: rounding to the nearest 10 µs, the same on both sides of 0.
func TestQuantum(t *testing.T) {
	for v, want := range map[int64]int64{0: 0, 4999: 0, 5000: 1, 14999: 1, -1: 0, -5000: 0, -5001: -1, -15001: -2} {
		if got := quantum(v); got != want {
			t.Errorf("quantum(%d) = %d, want %d", v, got, want)
		}
	}
}
