package schema

import (
	"slices"
	"strings"
	"testing"
)

// closedLoop lays n requests of latency lat on conc workers, each sending
// its next request pause after its previous one ended.
func closedLoop(n, conc int, lat, pause int64) [][2]int64 {
	free := make([]int64, conc)
	spans := make([][2]int64, 0, n)
	for i := range n {
		w := i % conc
		s := free[w] + pause
		spans = append(spans, [2]int64{s, s + lat})
		free[w] = s + lat
	}
	return spans
}

// TestTurnaroundToleratesALoadedClient: the closed-loop turnaround test
// passes what honest captures on a loaded machine showed (median
// turnarounds up to 661 µs, idle shares up to 13 %, and more), and
// rejects pauses of milliseconds that leave workers idle a large share of
// the time.
func TestTurnaroundToleratesALoadedClient(t *testing.T) {
	cases := []struct {
		name       string
		lat, pause int64
		reject     bool
	}{
		{"back to back", 250_000, 5_000, false},
		{"661 µs pauses on 250 µs requests (idle 73 %)", 250_000, 661_000, false},
		{"1.9 ms pauses on 1 ms requests", 1_000_000, 1_900_000, false},
		{"3 ms pauses on 100 ms requests (idle 3 %)", 100_000_000, 3_000_000, false},
		{"5 ms pauses on 2.5 ms requests", 2_500_000, 5_000_000, true},
		{"50 ms pauses on 100 ms requests", 100_000_000, 50_000_000, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			spans := closedLoop(200, 16, c.lat, c.pause)
			msg := turnaroundProblem(slices.Values(spans), len(spans), 16)
			if got := msg != ""; got != c.reject {
				t.Fatalf("rejected = %v, want %v (%s)", got, c.reject, msg)
			}
			if c.reject && !strings.Contains(msg, "workers are idle") {
				t.Fatalf("message %q does not say the workers are idle", msg)
			}
		})
	}
}
