package capture

import "testing"

// TestWorkloadMeanIsNotTruncated: list:4,8,16 drawn 7, 8 and 5 times has
// mean 8.6; the manifest stated 8.
func TestWorkloadMeanIsNotTruncated(t *testing.T) {
	var items []Item
	for _, c := range []struct{ n, v int }{{7, 4}, {8, 8}, {5, 16}} {
		for range c.n {
			items = append(items, Item{OutputTokens: c.v})
		}
	}
	d := lengthDist(items, func(it *Item) int { return it.OutputTokens })
	if d.Mean != 8.6 || d.Min != 4 || d.Max != 16 {
		t.Fatalf("mean %v, min %d, max %d: want 8.6, 4, 16", d.Mean, d.Min, d.Max)
	}
}
