// The clock uncertainty of metrics that combine shards.

package replay

import (
	"fmt"
	"math/big"

	"github.com/benchseal/benchseal/schema"
)

// Timeline is the clock uncertainty of a point × repeat of a run merged
// from shards. The window runs from the first send to the last end of a
// measured request, which may come from two shards whose timelines were placed by
// their wall clocks: it is known to ± UncertaintyNS
// (manifest.shards.timeline_uncertainty_ns), and so are the rates over
// it. Per-request latencies (TTFT, TPOT, ITL, E2E) are differences on one
// machine's monotonic clock and carry no such uncertainty.
//
// The uncertainty is the declared anchor error (the two largest members'
// kernel bounds, manifest.shards.timeline_uncertainty_ns) plus a drift
// term: after its anchor each shard's clock may run off true time by up
// to DriftPPM (the kernel's frequency tolerance, the rate at which it
// grows its own maximum error between synchronisations), so two of them
// may part by 2 × DriftPPM of the time elapsed since the run's epoch,
// taken at the window's end. Both rest on what the shards declared
// about their clocks: nothing in the records confirms them.
type Timeline struct {
	Shards int
	// UncertaintyNS is AnchorNS + DriftNS; null when a shard's clock gave
	// no bound (Reason).
	UncertaintyNS Value
	// AnchorNS is manifest.shards.timeline_uncertainty_ns (declared by
	// the shards); DriftNS the drift term.
	AnchorNS, DriftNS Value
	Reason            string
	// WindowNS, RequestThroughput and Goodput are the intervals the clock
	// uncertainty allows: [window − u, window + u] and the rates over
	// those ends (a high end null when window − u ≤ 0).
	WindowNS, RequestThroughput, Goodput Interval
}

// Interval is a closed range of values; an end is null when unknown.
type Interval struct{ Low, High Value }

// DriftPPM bounds, in parts per million, how fast a shard's clock may run
// off true time after it was read: the kernel's frequency tolerance
// (adjtimex MAXFREQ, 500 ppm), at which it grows its own maximum error.
const DriftPPM = 500

// timelineOf bounds pr's window and rates by the shards' timeline
// uncertainty; lastNS is the window's end (the point's last request end)
// in ns since the run's epoch (how long the shards' clocks may have
// drifted). nil when the run is not merged from shards.
func timelineOf(sh *schema.Shards, pr *PointResult, lastNS int64) *Timeline {
	if sh == nil {
		return nil
	}
	t := &Timeline{Shards: sh.Count, UncertaintyNS: Null, AnchorNS: Null, DriftNS: Null,
		WindowNS: Interval{Null, Null}, RequestThroughput: Interval{Null, Null}, Goodput: Interval{Null, Null}}
	if sh.TimelineUncertaintyNS == nil {
		t.Reason = sh.UncertaintyReason
		return t
	}
	anchor := *sh.TimelineUncertaintyNS
	// Two clocks, each up to DriftPPM off: ceil(2·DriftPPM·lastNS/10⁶).
	drift := int64(0)
	if lastNS > 0 {
		drift = (lastNS/1_000_000)*2*DriftPPM + ((lastNS%1_000_000)*2*DriftPPM+999_999)/1_000_000
	}
	u := anchor + drift
	t.AnchorNS, t.DriftNS, t.UncertaintyNS = Int(anchor), Int(drift), Int(u)
	wv := pr.Scalars[schema.MetricWindow]
	if !wv.IsInt() {
		t.Reason = "no window"
		return t
	}
	w := wv.Rat().Num().Int64()
	lo, hi := max(w-u, 0), w+u
	t.WindowNS = Interval{Int(lo), Int(hi)}
	rate := func(k string) Interval {
		v := pr.Scalars[k]
		if !v.IsExact() {
			return Interval{Null, Null}
		}
		// rate × w is the count; its bounds are count/(w ± u).
		count := new(big.Rat).Mul(v.Rat(), new(big.Rat).SetInt64(w))
		at := func(d int64) Value {
			if d <= 0 {
				return Null
			}
			return Exact(new(big.Rat).Quo(count, new(big.Rat).SetInt64(d)))
		}
		return Interval{at(hi), at(lo)}
	}
	t.RequestThroughput = rate(schema.MetricRequestThroughput)
	t.Goodput = rate(schema.MetricGoodput)
	if u > 0 && lo == 0 {
		t.Reason = fmt.Sprintf("the window (%d ns) is shorter than the clock uncertainty (%d ns)", w, u)
	}
	return t
}
