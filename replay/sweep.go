package replay

import (
	"fmt"
	"math/big"
	"slices"
	"time"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/schema"
)

// SweepSpec asks for goodput as a function of one SLO limit from FromNS
// to ToNS (inclusive), the other limits fixed: Steps limits spread evenly,
// or, with Steps 0, round limits (see Limits).
type SweepSpec struct {
	// Metric is the swept limit, one of schema.SLOKeys.
	Metric       string
	FromNS, ToNS int64
	Steps        int
}

// MaxRoundIntervals bounds the number of intervals of a round sweep (a
// --sweep-slo without :steps); replay's help states it.
const MaxRoundIntervals = 20

func (s *SweepSpec) check() error {
	if !slices.Contains(schema.SLOKeys, s.Metric) {
		return badInput("sweep metric %q is not %s", s.Metric, orList(schema.SLOKeys))
	}
	rng := time.Duration(s.FromNS).String() + ".." + time.Duration(s.ToNS).String()
	switch {
	case s.FromNS < 0 || s.ToNS < s.FromNS:
		return badInput("sweep range %s: want 0 ≤ FROM ≤ TO", rng)
	case s.Steps < 0 || s.Steps > 10000:
		return badInput("sweep range %s in %d steps: want 1 to 10000 steps", rng, s.Steps)
	case s.Steps == 1 && s.FromNS != s.ToNS:
		return badInput("sweep range %s in 1 step: one step needs FROM = TO", rng)
	}
	return nil
}

// Limits returns the swept limits: From + ⌊(To−From)·i/(Steps−1)⌋; with
// Steps 0, From, every multiple of a round step (1, 2 or 5 × 10^k ns, the
// smallest giving at most 20 intervals) strictly between From and To, and
// To — so that limits read 100 ms, 200 ms, … rather than 152.632 ms.
func (s *SweepSpec) Limits() []int64 {
	if s.Steps == 0 {
		return s.roundLimits()
	}
	if s.Steps == 1 {
		return []int64{s.FromNS}
	}
	out := make([]int64, s.Steps)
	span := big.NewInt(s.ToNS - s.FromNS)
	for i := range out {
		v := new(big.Int).Mul(span, big.NewInt(int64(i)))
		v.Quo(v, big.NewInt(int64(s.Steps-1)))
		out[i] = s.FromNS + v.Int64()
	}
	return out
}

func (s *SweepSpec) roundLimits() []int64 {
	if s.ToNS == s.FromNS {
		return []int64{s.FromNS}
	}
	step := roundStep(s.ToNS - s.FromNS)
	out := []int64{s.FromNS}
	for v := (s.FromNS/step + 1) * step; v < s.ToNS; v += step {
		out = append(out, v)
	}
	return append(out, s.ToNS)
}

// roundStep returns the smallest of 1, 2, 5, 10, 20, 50, … ns that divides
// span into at most MaxRoundIntervals intervals.
func roundStep(span int64) int64 {
	for p := int64(1); ; p *= 10 {
		for _, m := range []int64{1, 2, 5} {
			if (span+MaxRoundIntervals-1)/MaxRoundIntervals <= p*m {
				return p * m
			}
		}
	}
}

// Sweep is goodput and attainment as a function of one SLO limit.
type Sweep struct {
	Metric   string
	LimitsNS []int64
	Rows     []SweepRow
}

// SweepRow is one point and repeat of a sweep: Goodput[i] and
// Attainment[i] under LimitsNS[i].
type SweepRow struct {
	Point      string
	Repeat     int
	Goodput    []Value
	Attainment []Value
}

// null empties every goodput and attainment of the sweep (the records
// cannot determine the swept metric).
func (sw *Sweep) null() {
	for i := range sw.Rows {
		for j := range sw.Rows[i].Goodput {
			sw.Rows[i].Goodput[j], sw.Rows[i].Attainment[j] = Null, Null
		}
	}
}

func buildSweep(spec *SweepSpec, groups map[groupKey]*group, order []groupKey) *Sweep {
	sw := &Sweep{Metric: spec.Metric, LimitsNS: spec.Limits()}
	for _, k := range order {
		g := groups[k]
		slices.SortFunc(g.sweepVals, cmpFrac)
		row := SweepRow{Point: k.point, Repeat: k.repeat}
		w, _, _, _ := g.measuredWindow(k)
		for _, lim := range sw.LimitsNS {
			// count of values ≤ lim
			c, _ := slices.BinarySearchFunc(g.sweepVals, frac{lim, 1}, func(a, b frac) int {
				if cmpFrac(a, b) <= 0 {
					return -1
				}
				return 1
			})
			good := g.sweepConst + int64(c)
			row.Goodput = append(row.Goodput, perSecond(big.NewInt(good), w))
			row.Attainment = append(row.Attainment, ratio(big.NewInt(good), big.NewInt(g.counts.Declared())))
		}
		sw.Rows = append(sw.Rows, row)
	}
	return sw
}

// Capacity is the capacity of a rate sweep by the first-crossing rule
// (FirstCrossing) over the median SLO attainment across repeats of each
// rate: the highest tested rate such that every tested rate up to it
// meets the target, when some tested rate fails it. When every tested
// rate meets the target the test did not bound the capacity (it is at
// least the highest rate tested: null, "never crossed"); when the lowest
// fails it is below the lowest rate tested (null). The same rule as
// compare's decide.
type Capacity struct {
	Target *big.Rat
	// Rates and Attainment are the curve, by increasing rate.
	Points     []string
	Rates      []Value
	Attainment []Value
	Goodput    []Value
	// Rate is the capacity, Null when the sweep does not bound it;
	// NullReason then says why.
	Rate       Value
	NullReason string
	// MaxPassingRate is the highest rate whose attainment meets the
	// target, Null when none does (when Rate is Null because every rate
	// passed, the lower bound of the capacity). Above Rate when the
	// attainment is not monotone.
	MaxPassingRate Value
	// NonMonotone says, when a rate above a failing one meets the target
	// again, which ("" when the curve crosses the target once): that
	// rate is not the capacity.
	NonMonotone string
}

// Crossing is the first-crossing rule applied to SLO attainment over
// increasing offered load (DistServe's find_intersection without the
// interpolation): the capacity is the highest tested load L such that
// every tested load ≤ L meets the target. A passing load above a failing
// one does not count: noise alone makes attainment non-monotone, and a
// capacity above a failing load is not bounded by the test.
type Crossing struct {
	// Capacity is the capacity; nil when the lowest load fails the
	// target (Below) or every load meets it (Never).
	Capacity *big.Rat
	// MaxPassing is the highest load meeting the target, FirstFail the
	// lowest failing it (nil when none).
	MaxPassing, FirstFail *big.Rat
	// Never: every tested load meets the target, so the test did not
	// bound the capacity. Below: the lowest tested load fails it.
	Never, Below bool
}

// NonMonotone reports whether some load above the first failing one
// meets the target.
func (c Crossing) NonMonotone() bool {
	return c.FirstFail != nil && c.MaxPassing != nil && c.MaxPassing.Cmp(c.FirstFail) > 0
}

// NonMonotoneText says which load passes above which failing one, in the
// unit given ("" when the curve is monotone).
func (c Crossing) NonMonotoneText(unit string) string {
	if !c.NonMonotone() {
		return ""
	}
	return fmt.Sprintf("SLO attainment is not monotone: %s%s meets the target above %s%s, which fails it; the capacity counts only the loads below the first failing one",
		digits.RatAway(c.MaxPassing, 3), unit, digits.RatAway(c.FirstFail, 3), unit)
}

// FirstCrossing applies the rule to loads and their attainments (the same
// length, none nil), in any order.
func FirstCrossing(loads, attainment []*big.Rat, target *big.Rat) Crossing {
	idx := make([]int, len(loads))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return loads[a].Cmp(loads[b]) })
	var c Crossing
	for _, i := range idx {
		if attainment[i].Cmp(target) < 0 {
			if c.FirstFail == nil {
				c.FirstFail = loads[i]
			}
			continue
		}
		c.MaxPassing = loads[i]
	}
	if len(idx) == 0 {
		return c
	}
	for _, i := range idx {
		if c.FirstFail != nil && loads[i].Cmp(c.FirstFail) >= 0 {
			break
		}
		c.Capacity = loads[i]
	}
	switch {
	case c.FirstFail == nil:
		c.Never, c.Capacity = true, nil
	case c.Capacity == nil:
		c.Below = true
	}
	return c
}

func capacity(m *schema.Manifest, res *Result, target *big.Rat) *Capacity {
	if !res.SLO.Any() {
		return nil
	}
	type pt struct {
		name string
		rate *big.Rat
		att  Value
		gp   Value
	}
	var pts []pt
	for _, p := range m.Load.Points {
		if p.Rate <= 0 {
			continue
		}
		var att, gp []Value
		for _, r := range res.Results {
			if r.Point == p.Name {
				att = append(att, r.Scalars[schema.MetricSLOAttainment])
				gp = append(gp, r.Scalars[schema.MetricGoodput])
			}
		}
		if len(att) == 0 {
			continue
		}
		pts = append(pts, pt{p.Name, new(big.Rat).SetFloat64(p.Rate), SummarizeValues(att, CIConfidence).Median, SummarizeValues(gp, CIConfidence).Median})
	}
	if len(pts) == 0 {
		return nil
	}
	slices.SortStableFunc(pts, func(a, b pt) int { return a.rate.Cmp(b.rate) })
	c := &Capacity{Target: target, Rate: Null, MaxPassingRate: Null}
	var rates, atts []*big.Rat
	undefined := false
	for _, p := range pts {
		c.Points = append(c.Points, p.name)
		c.Rates = append(c.Rates, Exact(p.rate))
		c.Attainment = append(c.Attainment, p.att)
		c.Goodput = append(c.Goodput, p.gp)
		if a := p.att.Rat(); a != nil {
			rates, atts = append(rates, p.rate), append(atts, a)
		} else {
			undefined = true
		}
	}
	x := FirstCrossing(rates, atts, target)
	if x.MaxPassing != nil {
		c.MaxPassingRate = Exact(x.MaxPassing)
	}
	c.NonMonotone = x.NonMonotoneText(" req/s")
	switch {
	case undefined:
		c.NullReason = "the SLO attainment of some rate is undefined"
	case x.MaxPassing == nil:
		c.NullReason = "no tested rate meets the SLO attainment target: capacity below the lowest rate tested (" + digits.RatAway(pts[0].rate, 3) + " req/s)"
	case x.Below:
		c.NullReason = "the lowest tested rate fails the SLO attainment target: capacity below the lowest rate tested (" + digits.RatAway(pts[0].rate, 3) + " req/s)"
	case x.Never:
		c.NullReason = "the SLO attainment target is met at every tested rate: capacity not bounded by the test (≥ " + digits.RatAway(c.MaxPassingRate.Rat(), 3) + " req/s, never crossed)"
	default:
		c.Rate = Exact(x.Capacity)
	}
	return c
}
