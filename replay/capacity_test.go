package replay

import (
	"math/big"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// The first-crossing rule: the capacity is the highest tested load up to
// which every tested load meets the target; a passing load above a failing
// one never counts (before, [1, 0.5, 1] at 4/8/16 gave capacity 16).
func TestFirstCrossingStopsAtTheFirstFailingLoad(t *testing.T) {
	r := func(n int64) *big.Rat { return big.NewRat(n, 1) }
	pc := func(n int64) *big.Rat { return big.NewRat(n, 100) }
	tests := []struct {
		name                  string
		loads, att            []*big.Rat
		capacity, max, fail   *big.Rat
		never, below, nonMono bool
	}{
		{"crossed once", []*big.Rat{r(4), r(8), r(16)}, []*big.Rat{pc(100), pc(100), pc(50)}, r(8), r(8), r(16), false, false, false},
		{"pass above a fail", []*big.Rat{r(4), r(8), r(16)}, []*big.Rat{pc(100), pc(50), pc(100)}, r(4), r(16), r(8), false, false, true},
		{"unsorted input", []*big.Rat{r(16), r(4), r(8)}, []*big.Rat{pc(100), pc(100), pc(50)}, r(4), r(16), r(8), false, false, true},
		{"every load passes", []*big.Rat{r(4), r(8)}, []*big.Rat{pc(90), pc(95)}, nil, r(8), nil, true, false, false},
		{"none passes", []*big.Rat{r(4), r(8)}, []*big.Rat{pc(89), pc(10)}, nil, nil, r(4), false, true, false},
		{"lowest fails, a higher passes", []*big.Rat{r(4), r(8)}, []*big.Rat{pc(50), pc(100)}, nil, r(8), r(4), false, true, true},
		{"a tie at one load, one fails", []*big.Rat{r(4), r(8), r(8)}, []*big.Rat{pc(100), pc(100), pc(50)}, r(4), r(8), r(8), false, false, false},
	}
	eq := func(a, b *big.Rat) bool { return (a == nil) == (b == nil) && (a == nil || a.Cmp(b) == 0) }
	for _, tc := range tests {
		c := FirstCrossing(tc.loads, tc.att, big.NewRat(9, 10))
		if !eq(c.Capacity, tc.capacity) || !eq(c.MaxPassing, tc.max) || !eq(c.FirstFail, tc.fail) || c.Never != tc.never || c.Below != tc.below || c.NonMonotone() != tc.nonMono {
			t.Errorf("%s: %+v non-monotone %v", tc.name, c, c.NonMonotone())
		}
	}
}

// replay's capacity line of a rate sweep follows the rule and says when
// the attainment is not monotone.
func TestReplayCapacityIsTheFirstCrossing(t *testing.T) {
	m := &schema.Manifest{Load: schema.Load{Mode: schema.ModeRate, Points: []schema.Point{
		{Name: "r4", Rate: 4, Arrival: schema.ArrivalPoisson}, {Name: "r8", Rate: 8, Arrival: schema.ArrivalPoisson}, {Name: "r16", Rate: 16, Arrival: schema.ArrivalPoisson}}}}
	ttft := int64(1e9)
	res := &Result{SLO: SLOSpec{TTFTNS: &ttft}}
	for i, a := range []int64{100, 50, 100} {
		res.Results = append(res.Results, &PointResult{Point: m.Load.Points[i].Name, Scalars: map[string]Value{"slo_attainment": Frac(a, 100), "goodput": Int(1)}})
	}
	c := capacity(m, res, big.NewRat(9, 10))
	if c.Rate.Rat() == nil || c.Rate.Rat().Cmp(big.NewRat(4, 1)) != 0 || c.MaxPassingRate.Rat().Cmp(big.NewRat(16, 1)) != 0 ||
		!strings.Contains(c.NonMonotone, "16.000 req/s meets the target above 8.000 req/s, which fails it") {
		t.Errorf("capacity %v, max passing %v, non-monotone %q", c.Rate, c.MaxPassingRate, c.NonMonotone)
	}
	res.Results[0].Scalars["slo_attainment"] = Frac(50, 100)
	c = capacity(m, res, big.NewRat(9, 10))
	if !c.Rate.IsNull() || !strings.Contains(c.NullReason, "the lowest tested rate fails") || c.NonMonotone == "" {
		t.Errorf("lowest fails: capacity %v, reason %q, non-monotone %q", c.Rate, c.NullReason, c.NonMonotone)
	}
}
