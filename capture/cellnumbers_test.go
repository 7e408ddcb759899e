package capture

import (
	"slices"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// TestWarmupShowsTheNumberOfTheCellItWarms: progress numbered a warmup
// with the previous cell's number ([0/9] for the first warmup, [3/9]
// for the warmup of the fourth cell).
func TestWarmupShowsTheNumberOfTheCellItWarms(t *testing.T) {
	w, m := schema.PhaseWarmup, schema.PhaseMeasure
	var cells []*cell
	for _, ph := range []string{w, m, m, w, m, m, w, m} {
		cells = append(cells, &cell{phase: ph})
	}
	nos, n := cellNumbers(cells)
	if want := []int{1, 1, 2, 3, 3, 4, 5, 5}; !slices.Equal(nos, want) || n != 5 {
		t.Fatalf("numbers %v of %d, want %v of 5", nos, n, want)
	}
}
