package compare

import (
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
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

// rateInput is fakeInput turned into a rate-mode run whose points offer
// these rates, each capped at concurrency 8 (SGLang's and vLLM's
// --max-concurrency).
func rateInput(name string, rates ...float64) *Input {
	in := fakeInput(name, []int64{10, 11, 12, 10}, []int64{50, 51, 52, 50})
	in.Manifest.Load.Mode = schema.ModeRate
	one := in.Result.Results
	in.Manifest.Load.Points, in.Result.Results = nil, nil
	for _, r := range rates {
		p := fmt.Sprintf("rate-%v", r)
		in.Manifest.Load.Points = append(in.Manifest.Load.Points, schema.Point{Name: p, Rate: r, Arrival: schema.ArrivalPoisson, Concurrency: 8})
		for _, pr := range one {
			c := *pr
			c.Point = p
			in.Result.Results = append(in.Result.Results, &c)
		}
	}
	return in
}

// In rate mode the offered load is the rate and arrival process, with the
// concurrency cap a further attribute: rate 1 and rate 100 req/s capped at
// 8 are two loads (they were both "concurrency 8" and were compared), and
// the two points of one SGLang run (rate 4 and 8, capped at 8) no longer
// collide (the second was dropped as "a second point with the same
// offered load").
func TestCompareMatchesRatePointsByRateNotByCap(t *testing.T) {
	r, err := Compare([]*Input{rateInput("a", 1), rateInput("b", 100)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Comparisons) != 0 || len(r.Loads) != 0 || len(r.Unmatched) != 2 || r.Unmatched[0].Load != "rate 100 req/s poisson, max concurrency 8" {
		t.Errorf("rate 1 against rate 100: loads %q, %d comparisons, unmatched %+v", r.Loads, len(r.Comparisons), r.Unmatched)
	}
	r, err = Compare([]*Input{rateInput("a", 4, 8), rateInput("b", 4, 8)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"rate 4 req/s poisson, max concurrency 8", "rate 8 req/s poisson, max concurrency 8"}
	if !slices.Equal(r.Loads, want) || len(r.Unmatched) != 0 {
		t.Errorf("sglang's two points: loads %q, unmatched %+v", r.Loads, r.Unmatched)
	}
	// The same rate under another cap is another load, and the reason
	// says which point of the baseline was near.
	c := rateInput("c", 4)
	c.Manifest.Load.Points[0].Concurrency = 16
	r, _ = Compare([]*Input{rateInput("a", 4), c}, Options{})
	if len(r.Comparisons) != 0 || len(r.Unmatched) != 2 || !strings.Contains(r.Unmatched[0].Reason, "a's point rate-4 offers rate 4 req/s poisson, max concurrency 8: the same rate with another concurrency cap") {
		t.Errorf("cap 16 against cap 8: %+v", r.Unmatched)
	}
	// Concurrency mode is keyed on the concurrency alone.
	if o, _ := PointLoad(fakeInput("d", []int64{1}, []int64{1}).Manifest, "c8"); o.String() != "concurrency 8" || o.Value() != 8 {
		t.Errorf("concurrency mode: %q %v", o.String(), o.Value())
	}
	if o, _ := PointLoad(rateInput("e", 2.5).Manifest, "rate-2.5"); o.Value() != 2.5 {
		t.Errorf("rate mode value %v", o.Value())
	}
}

// TestCompareOfEqualRepeatsSaysSoInItsOwnWords: two runs whose repeats all
// hold one value (ttft p50 10 ms everywhere) warn that there is no
// difference to test, not with the statistics library's error text.
func TestCompareOfEqualRepeatsSaysSoInItsOwnWords(t *testing.T) {
	a := fakeInput("a", []int64{100, 99, 98, 97}, []int64{10, 10, 10, 10})
	b := fakeInput("b", []int64{50, 51, 52, 50}, []int64{10, 10, 10, 10})
	r, err := Compare([]*Input{a, b}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.Comparisons {
		if c.Metric.Path != "ttft_ns.p50" {
			continue
		}
		if !slices.Contains(c.Warnings, "every repeat of both runs has the same value: there is no difference to test") ||
			slices.ContainsFunc(c.Warnings, func(w string) bool { return strings.Contains(w, "stats:") }) {
			t.Fatalf("warnings %q", c.Warnings)
		}
		return
	}
	t.Fatal("no ttft_ns.p50 comparison")
}
