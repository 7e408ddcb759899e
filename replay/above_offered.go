// The note on a point whose goodput or throughput exceeds its offered load.

package replay

import (
	"fmt"

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
		x, _ := v.Float64()
		o, _ := p.Overload.OfferedRate.Float64()
		why := "its window was shorter than its requests ÷ the offered rate"
		if w, ok := p.Scalars[schema.MetricWindow].Float64(); ok && p.Counts.Sent > 0 {
			why = fmt.Sprintf("its window (first send → last end, %.3f ms) was shorter than its %d requests take at the offered rate (%.3f ms)",
				w/1e6, p.Counts.Sent, float64(p.Counts.Sent)/o*1e3)
		}
		if a, ok := p.Overload.ArrivalRate.Float64(); ok {
			why += fmt.Sprintf(": they were sent at %.3f req/s", a)
		}
		return fmt.Sprintf("point %s repeat %d: %s %.3f req/s is above the offered %.3f req/s because %s (the offered rate is the schedule's mean: a seeded random schedule spans its own length, not rescaled to requests ÷ rate, and any schedule's window holds one gap fewer than its requests plus the last request's latency)",
			p.Point, p.Repeat, k, x, o, why)
	}
	return ""
}
