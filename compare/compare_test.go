package compare

import (
	"strings"
	"testing"

	"github.com/benchseal/benchseal/replay"
)

// A side whose metric is undefined in some repeat (every request of it
// failed, say) is not tested: testing the other repeats would leave out
// the one that failed. Before, the U test ran on a's four good repeats
// against b's five, called b significantly worse, and gave a the reason
// "undefined in every repeat".
func TestCompareDoesNotTestASideWithANullRepeat(t *testing.T) {
	a := fakeInput("a", []int64{100, 99, 98, 97, 0}, []int64{10, 10, 10, 10, 10})
	a.Result.Results[4].Scalars["goodput"] = replay.Null
	b := fakeInput("b", []int64{50, 51, 52, 50, 51}, []int64{10, 10, 10, 10, 10})
	for _, ins := range [][]*Input{{a, b}, {b, a}} {
		r, err := Compare(ins, Options{})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, c := range r.Comparisons {
			if c.Metric.Path != "goodput" {
				continue
			}
			found = true
			want := "a: undefined in 1 of 5 repeats (repeat 4): not tested"
			if c.Tested || c.Significant || c.Better || !strings.HasPrefix(c.Note, want) {
				t.Errorf("%s first: tested %v significant %v better %v, note %q, want prefix %q", ins[0].Name, c.Tested, c.Significant, c.Better, c.Note, want)
			}
			s := c.Base
			if ins[0] != a {
				s = c.Patch
			}
			if strings.Contains(s.NullReason, "every repeat") {
				t.Errorf("false reason %q", s.NullReason)
			}
		}
		if !found {
			t.Fatal("no goodput comparison")
		}
	}
}
