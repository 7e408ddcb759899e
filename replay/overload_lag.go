package replay

import (
	"cmp"
	"fmt"
	"math/big"
	"slices"

	"github.com/benchseal/benchseal/internal/digits"
)

// sortLags sorts the held [scheduled, lag] pairs by scheduled, in place:
// the group is finished.
func sortLags(lags [][2]int64) {
	slices.SortFunc(lags, func(a, b [2]int64) int { return cmp.Compare(a[0], b[0]) })
}

// msText is ns in ms as report prints it (internal/digits: half to even).
func msText(ns int64) string { return digits.Milliseconds(ns) }

// sendLag sets the send-lag trend and the generator-limited flag.
func (d *overloadData) sendLag(c *overloadCfg, o *Overload, lagDist Dist) {
	if c.loop == LoopClosed {
		na := "not applicable: a closed loop sends each request when an earlier one ends; there is no schedule to keep"
		o.SendLag.Reason = na
		o.GeneratorLimited = Flag{Why: na}
		return
	}
	if c.noLag != "" {
		o.SendLag.Reason = c.noLag
		o.GeneratorLimited = Flag{Why: c.noLag}
		return
	}
	if d.nLags() == 0 || lagDist.N == 0 {
		why := "no measured request has scheduled_ns"
		o.SendLag.Reason = why
		o.GeneratorLimited = Flag{Why: why}
		return
	}
	lags := d.sortedLags()
	var x0, x1 float64 // the first and last x
	pts := func(yield func(x, y float64) bool) {
		for l := range lags {
			if !yield(float64(l[0])/1e9, float64(l[1])) {
				return
			}
		}
	}
	first := true
	for l := range lags {
		if first {
			x0, first = float64(l[0])/1e9, false
		}
		x1 = float64(l[0]) / 1e9
	}
	o.SendLag = fitTrendSeq(pts, int(d.nLags()))
	p99 := lagDist.P[slices.IndexFunc(Percentiles, func(p Percentile) bool { return p.Key == "p99" })]
	o.SendLagP99NS = p99
	bound := new(big.Rat).SetInt64(GeneratorLagBoundNS)
	if p99.Rat().Cmp(bound) > 0 {
		o.GeneratorLimited = setFlag(true, fmt.Sprintf("send_lag p99 %s ms > %s ms: the client did not keep the schedule", msText(p99.Rat().Num().Int64()), msText(GeneratorLagBoundNS)))
		return
	}
	if o.SendLag.Significant() {
		s, _ := o.SendLag.Slope.Float64()
		span := x1 - x0
		if s*span > float64(GeneratorLagBoundNS) {
			o.GeneratorLimited = setFlag(true, fmt.Sprintf("send lag rose by %s ms over the point (slope significant at 95 %%), more than %s ms: the client fell behind the schedule", digits.Float(s*span/1e6, digits.MillisecondPlaces), msText(GeneratorLagBoundNS)))
			return
		}
	}
	o.GeneratorLimited = setFlag(false, fmt.Sprintf("send_lag p99 %s ms ≤ %s ms and no significant rise beyond it", msText(p99.Rat().Num().Int64()), msText(GeneratorLagBoundNS)))
}
