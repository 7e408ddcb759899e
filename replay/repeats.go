package replay

import (
	"fmt"
	"math/big"
	"slices"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/schema"
)

// CIConfidence is the confidence level of the across-repeat interval.
var CIConfidence = big.NewRat(95, 100)

// QuantileCIResult gives the order statistics bounding a distribution-free
// confidence interval of a quantile, as golang.org/x/perf/benchmath (via
// go-moremath stats.QuantileCI) computes them; orders are 1-based and may
// lie outside [1, N] (an unbounded side).
type QuantileCIResult struct {
	N                int
	LoOrder, HiOrder int
	// Confidence is the exact coverage Pr[LoOrder ≤ X < HiOrder].
	Confidence *big.Rat
	Ambiguous  bool
}

// MedianCI returns the confidence interval of the median of n samples at
// the given confidence. It follows go-moremath's exact-binomial branch
// (start at the lower mode, add the larger neighbouring probability,
// left-biased on ties, until the confidence is reached) with exact
// rational probabilities; go-moremath switches to a normal approximation
// above n = 30, this function stays exact for every n.
func MedianCI(n int, confidence *big.Rat) QuantileCIResult {
	res := QuantileCIResult{N: n}
	if confidence.Cmp(big.NewRat(1, 1)) >= 0 || n == 0 {
		res.Confidence = big.NewRat(1, 1)
		res.LoOrder, res.HiOrder = 0, n+1
		return res
	}
	den := new(big.Int).Lsh(big.NewInt(1), uint(n))
	pmf := func(k int) *big.Int {
		if k < 0 || k > n {
			return new(big.Int)
		}
		return new(big.Int).Binomial(int64(n), int64(k))
	}
	// Lower mode: ⌈(n+1)/2⌉ − 1.
	x := (n+1+1)/2 - 1
	accum := pmf(x)
	l, r := x, x+1
	lp, rp := pmf(l-1), pmf(r)
	res.Ambiguous = rp.Cmp(accum) == 0
	target := new(big.Rat).Mul(confidence, new(big.Rat).SetInt(den))
	less := func() bool { return new(big.Rat).SetInt(accum).Cmp(target) < 0 }
	for less() && (lp.Sign() > 0 || rp.Sign() > 0) {
		res.Ambiguous = lp.Cmp(rp) == 0
		if lp.Cmp(rp) >= 0 {
			accum.Add(accum, lp)
			l--
			lp = pmf(l - 1)
		} else {
			accum.Add(accum, rp)
			r++
			rp = pmf(r)
		}
	}
	res.Confidence = new(big.Rat).SetFrac(accum, den)
	l = max(l, 0)
	r = min(r, n+1)
	res.LoOrder, res.HiOrder = l, r
	return res
}

// medianSamplesNeeded is the smallest n with a bounded median interval.
func medianSamplesNeeded(confidence *big.Rat) (string, int) {
	for n := 2; n <= 50; n++ {
		ci := MedianCI(n, confidence)
		if ci.LoOrder > 0 && ci.HiOrder <= n {
			return ">=", n
		}
	}
	return ">", 50
}

// confString formats a confidence like benchmath's %v of a float64
// (digits.Shortest).
func confString(c *big.Rat) string {
	f, _ := c.Float64()
	return digits.Shortest(f)
}

// PartialRepeatsWarning starts the warning of a summary that is null
// because some repeat's value is undefined.
const PartialRepeatsWarning = "null: undefined in"

// SummarizeValues returns the median and its distribution-free confidence
// interval over values, with benchstat's warning when the sample is too
// small for a bounded interval. When some values are undefined and others
// not, the summary is null with a warning saying so: a median of the
// remaining repeats would leave out the work of the others (an incomplete
// repeat's nulled throughputs, a repeat with no answer), and removing work
// must never raise a headline.
func SummarizeValues(vals []Value, confidence *big.Rat) Summary {
	undefined := 0
	for _, v := range vals {
		if v.IsNull() {
			undefined++
		}
	}
	if undefined > 0 && undefined < len(vals) {
		return Summary{Median: Null, CILow: Null, CIHigh: Null, Confidence: Null,
			Warnings: []string{fmt.Sprintf("%s %d of %d repeats: a median of the others would leave their work out", PartialRepeatsWarning, undefined, len(vals))}}
	}
	var xs []*big.Rat
	for _, v := range vals {
		switch v.k {
		case kindExact:
			xs = append(xs, v.r)
		case kindFloat:
			xs = append(xs, new(big.Rat).SetFloat64(v.f))
		case kindSqrt:
			f, _ := v.Float64()
			xs = append(xs, new(big.Rat).SetFloat64(f))
		}
	}
	s := Summary{N: len(xs), Median: Null, CILow: Null, CIHigh: Null, Confidence: Null}
	if len(xs) == 0 {
		return s
	}
	slices.SortFunc(xs, func(a, b *big.Rat) int { return a.Cmp(b) })
	n := len(xs)
	if n%2 == 1 {
		s.Median = Exact(xs[n/2])
	} else {
		m := new(big.Rat).Add(xs[n/2-1], xs[n/2])
		s.Median = Exact(m.Quo(m, big.NewRat(2, 1)))
	}
	ci := MedianCI(n, confidence)
	s.Confidence = Exact(ci.Confidence)
	if ci.LoOrder >= 1 {
		s.CILow = Exact(xs[ci.LoOrder-1])
	}
	if ci.HiOrder <= n {
		s.CIHigh = Exact(xs[ci.HiOrder-1])
	}
	if ci.LoOrder < 1 || ci.HiOrder > n {
		op, need := medianSamplesNeeded(confidence)
		s.Warnings = append(s.Warnings, fmt.Sprintf("need %s %d samples for confidence interval at level %s", op, need, confString(confidence)))
	}
	return s
}

// markTwins marks the repeats not shown independent (PointResult.TwinOf)
// and says so in the notes.
func markTwins(res *Result, twins []schema.RepeatTwin) {
	for _, tw := range twins {
		for _, p := range res.Results {
			if p.Point == tw.Point && p.Repeat == tw.Repeat {
				of := tw.Of
				p.TwinOf = &of
				res.Notes = append(res.Notes, tw.String()+" in the summaries across repeats, compare and decide")
			}
		}
	}
}

// Independent returns results without the repeats not shown independent
// of another (PointResult.TwinOf): each pair counts as one repeat.
func Independent(results []*PointResult) []*PointResult {
	out := make([]*PointResult, 0, len(results))
	for _, p := range results {
		if p.TwinOf == nil {
			out = append(out, p)
		}
	}
	return out
}

// summarise summarises each point over its repeats; a point with fewer
// results than the repeats declared (an incomplete run) has null
// summaries, for the same reason as in SummarizeValues. A repeat not
// shown independent of another counts as that one.
func summarise(results []*PointResult, repeats int) []PointSummary {
	var out []PointSummary
	byPoint := map[string][]*PointResult{}
	var order []string
	for _, r := range results {
		if _, ok := byPoint[r.Point]; !ok {
			order = append(order, r.Point)
		}
		byPoint[r.Point] = append(byPoint[r.Point], r)
	}
	for _, p := range order {
		ps := PointSummary{Point: p, Metrics: map[string]Summary{}}
		for _, m := range SummaryMetrics {
			var vals []Value
			for _, r := range Independent(byPoint[p]) {
				v, _ := r.Lookup(m)
				vals = append(vals, v)
			}
			for range repeats - len(byPoint[p]) {
				vals = append(vals, Null) // a repeat never run
			}
			ps.Metrics[m] = SummarizeValues(vals, CIConfidence)
		}
		out = append(out, ps)
	}
	return out
}
