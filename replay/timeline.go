// The clock uncertainty of metrics that combine shards.

package replay

import (
	"fmt"
	"math/big"

	"github.com/benchseal/benchseal/schema"
)

// Timeline is the clock uncertainty of a point × repeat of a run merged
// from shards. The window runs from the first send to the last final
// token, which may come from two shards whose timelines were placed by
// their wall clocks: it is known to ± UncertaintyNS
// (manifest.shards.timeline_uncertainty_ns), and so are the rates over
// it. Per-request latencies (TTFT, TPOT, ITL, E2E) are differences on one
// machine's monotonic clock and carry no such uncertainty.
type Timeline struct {
	Shards int
	// UncertaintyNS is null when a shard's clock gave no bound (Reason).
	UncertaintyNS Value
	Reason        string
	// WindowNS, RequestThroughput and Goodput are the intervals the clock
	// uncertainty allows: [window − u, window + u] and the rates over
	// those ends (a high end null when window − u ≤ 0).
	WindowNS, RequestThroughput, Goodput Interval
}

// Interval is a closed range of values; an end is null when unknown.
type Interval struct{ Low, High Value }

// timelineOf bounds pr's window and rates by the shards' timeline
// uncertainty; nil when the run is not merged from shards.
func timelineOf(sh *schema.Shards, pr *PointResult) *Timeline {
	if sh == nil {
		return nil
	}
	t := &Timeline{Shards: sh.Count, UncertaintyNS: Null,
		WindowNS: Interval{Null, Null}, RequestThroughput: Interval{Null, Null}, Goodput: Interval{Null, Null}}
	if sh.TimelineUncertaintyNS == nil {
		t.Reason = sh.UncertaintyReason
		return t
	}
	u := *sh.TimelineUncertaintyNS
	t.UncertaintyNS = Int(u)
	wv := pr.Scalars["window_ns"]
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
	t.RequestThroughput = rate("request_throughput")
	t.Goodput = rate("goodput")
	if u > 0 && lo == 0 {
		t.Reason = fmt.Sprintf("the window (%d ns) is shorter than the clock uncertainty (%d ns)", w, u)
	}
	return t
}
