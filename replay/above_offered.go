// The note on a point whose goodput or throughput exceeds its offered load.

package replay

import (
	"fmt"
	"math/big"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/schema"
)

// AboveOffered says why a point's goodput (or request throughput)
// exceeds its offered rate: its window was shorter than its requests ÷
// the rate. The rate is the schedule's mean, but a seeded random
// schedule of few arrivals spans its own length and is not rescaled, and
// any window holds one gap fewer than its requests plus the last
// latency. "" when neither exceeds it, or the point has no offered rate
// (a closed loop).
func AboveOffered(p *PointResult) string {
	if p.Overload == nil {
		return ""
	}
	off := p.Overload.OfferedRate.Rat()
	if off == nil || off.Sign() <= 0 {
		return ""
	}
	for _, k := range []string{schema.MetricGoodput, schema.MetricRequestThroughput} {
		v := p.Scalars[k]
		if r := v.Rat(); r == nil || r.Cmp(off) <= 0 {
			continue
		}
		why := "its window was shorter than its requests ÷ the offered rate"
		if w := p.Scalars[schema.MetricWindow]; !w.IsNull() && p.Counts.Sent > 0 {
			take := new(big.Rat).Quo(big.NewRat(1000*int64(p.Counts.Sent), 1), off)
			why = fmt.Sprintf("its window (first send → last end, %s ms) was shorter than its %d requests take at the offered rate (%s ms)",
				valueText(w, big.NewRat(1, 1e6)), p.Counts.Sent, digits.Rat(take, 3))
		}
		if a := p.Overload.ArrivalRate; !a.IsNull() {
			why += fmt.Sprintf(": they were sent at %s req/s", valueText(a, big.NewRat(1, 1)))
		}
		return fmt.Sprintf("point %s repeat %d: %s %s req/s is above the offered %s req/s because %s (the offered rate is the schedule's mean: a seeded random schedule spans its own length, not rescaled to requests ÷ rate, and any schedule's window holds one gap fewer than its requests plus the last request's latency)",
			p.Point, p.Repeat, k, valueText(v, big.NewRat(1, 1)), digits.Rat(off, 3), why)
	}
	return ""
}

// valueText is v·scale to three places as report prints it (its exact
// value, or a float's, rounded once, half to even: internal/digits).
func valueText(v Value, scale *big.Rat) string {
	r := v.Rat()
	if r == nil {
		f, _ := v.Float64()
		if r = new(big.Rat).SetFloat64(f); r == nil {
			return "-" // NaN or ±Inf
		}
	}
	return digits.Rat(new(big.Rat).Mul(r, scale), 3)
}
