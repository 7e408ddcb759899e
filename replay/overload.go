package replay

import (
	"time"

	"github.com/benchseal/benchseal/schema"
)

// The overload test (docs/replay.md, "Overload"). Its constants are part
// of the contract: changing one changes which points are flagged.
const (
	// OverloadTolerancePercent is how far arrivals may exceed
	// completions over the fit window (as a share of the arrivals), and
	// how large a significant rise of the outstanding count must be (as a
	// share of its mean), before a point is overloaded.
	OverloadTolerancePercent = 10
	// OverloadWindows is the number of equal windows the fit window is
	// cut into; the outstanding count is averaged over each.
	OverloadWindows = 20
	// OverloadMinArrivals is the fewest arrivals in the fit window the
	// test judges.
	OverloadMinArrivals = 20
	// GeneratorLagBoundNS bounds the send lag (sent − scheduled) of an
	// open loop: a p99 above it, or a significant rise by more than it,
	// flags the point generator-limited.
	GeneratorLagBoundNS = int64(10 * time.Millisecond)
	// TrendConfidence is the coverage of every trend's interval.
	TrendConfidence = 0.95
	// FastFailureDivisor: a failed request (error or timeout) that ended
	// in under 1/FastFailureDivisor of the median end − sent of the
	// point's successful requests failed "at once": the server did not
	// serve it (load shed, or an SLO miss made an instant error), so the
	// overload test counts it as it counts a rejection.
	FastFailureDivisor = 10
	// FastFailurePercent is the share of measured requests failing at once
	// from which a point is flagged fast-failures.
	FastFailurePercent = 1
)

// FastFailuresFlag names a point with failures far faster than its
// successful requests (Overload.FastFailures).
const FastFailuresFlag = "fast-failures"

// Loops of a load point.
const (
	LoopOpen   = "open"   // rate mode: requests follow a schedule
	LoopClosed = "closed" // concurrency mode: a request follows an end
)

// OverloadKeys are the claim paths overload.KEY, in output order. The two
// flags are 1 (set) or 0 (not set) as numbers.
var OverloadKeys = schema.ClaimOverloadKeys

// Trend is a least-squares slope over a point with its interval at
// TrendConfidence (stats.LinearFit); every value is null, with Reason,
// when it cannot be fitted.
type Trend struct {
	Slope, Low, High Value
	// Points is how many values the line was fitted to.
	Points int
	Reason string
}

// Significant reports whether the interval lies wholly above 0.
func (t Trend) Significant() bool {
	l, ok := t.Low.Float64()
	return ok && l > 0
}

// Flag is a yes/no finding: Set is nil when the records cannot decide
// it (never false in its place), and Why gives the evidence, or why it is
// undecided or not applicable.
type Flag struct {
	Set *bool
	Why string
}

// True reports whether the flag is set.
func (f Flag) True() bool { return f.Set != nil && *f.Set }

// Value is the flag as a claimable number: 1, 0 or null.
func (f Flag) Value() Value {
	switch {
	case f.Set == nil:
		return Null
	case *f.Set:
		return Int(1)
	}
	return Int(0)
}

func setFlag(set bool, why string) Flag { return Flag{Set: &set, Why: why} }

// Overload describes whether a point × repeat kept up with its load: the
// offered and achieved arrival rate, completions against arrivals, the
// outstanding requests over time, the send lag's trend and, with server
// metrics, the engine's waiting queue; and the two flags derived from
// them.
type Overload struct {
	// Loop is LoopOpen or LoopClosed.
	Loop string
	// OfferedRate is the declared rate (req/s; null for a closed loop),
	// in a shard run the shard's share of it; ArrivalRate the achieved
	// one, (sent − 1) ÷ (last − first send).
	OfferedRate, ArrivalRate Value
	// OfferedShare, in a shard run, says OfferedRate is the shard's share
	// of the point's rate and how it was taken ("" otherwise).
	OfferedShare string
	// FitStartNS and FitEndNS bound the fit window in the run's clock:
	// the arrival span without its first quarter, where the load settles.
	FitStartNS, FitEndNS int64
	// Arrivals counts the sends inside the fit window, Completions the
	// ends of served requests (any status but rejected: a rejected
	// request is an arrival that was not served) and FitRejected the
	// rejected arrivals; FitArrivalRate and CompletionRate are them per
	// second; BacklogShare is (arrivals − completions) ÷ arrivals.
	Arrivals, Completions, FitRejected int64
	FitArrivalRate, CompletionRate     Value
	BacklogShare                       Value
	OutstandingPeak, OutstandingMean   Value
	Outstanding, SendLag               Trend
	SendLagP99NS                       Value
	Queue                              *Trend
	Overloaded, GeneratorLimited       Flag
	// FastFailures is set when more than FastFailurePercent of the
	// measured requests failed at once (FastFailureDivisor); FastFailed
	// counts them. They are not served requests in the test: they never
	// count as completions and count with the rejections in rule 0.
	FastFailures             Flag
	FastFailed               int64
	clientJudged, clientOver bool
	// loadFromNS and loadToNS are the measured requests' first send and
	// last end (loadOK false when there are none or no times): the span
	// a server gauge's scrapes must fall in to describe the point.
	loadFromNS, loadToNS int64
	loadOK               bool
	// missing counts declared requests without a record (incomplete
	// runs): such a point cannot be shown to have kept up.
	missing int64
	// Reasons maps a key of OverloadKeys (or "outstanding", "send_lag",
	// "fit") to why it is null.
	Reasons map[string]string
}

// Field returns overload.KEY as a value (flags as 1/0).
func (o *Overload) Field(key string) (Value, bool) {
	switch key {
	case "overloaded":
		return o.Overloaded.Value(), true
	case "generator_limited":
		return o.GeneratorLimited.Value(), true
	case "offered_rate":
		return o.OfferedRate, true
	case "arrival_rate":
		return o.ArrivalRate, true
	case "completion_rate":
		return o.CompletionRate, true
	case "backlog_share":
		return o.BacklogShare, true
	case "outstanding_peak":
		return o.OutstandingPeak, true
	case "outstanding_slope_per_s":
		return o.Outstanding.Slope, true
	case "send_lag_slope_ns_per_s":
		return o.SendLag.Slope, true
	}
	return Null, false
}

// NullReason says why overload.KEY is null.
func (o *Overload) NullReason(key string) (string, bool) {
	switch key {
	case "overloaded":
		if o.Overloaded.Set == nil {
			return o.Overloaded.Why, true
		}
	case "generator_limited":
		if o.GeneratorLimited.Set == nil {
			return o.GeneratorLimited.Why, true
		}
	case "outstanding_slope_per_s":
		if o.Outstanding.Slope.IsNull() {
			return o.Outstanding.Reason, true
		}
	case "send_lag_slope_ns_per_s":
		if o.SendLag.Slope.IsNull() {
			return o.SendLag.Reason, true
		}
	}
	r, ok := o.Reasons[key]
	return r, ok
}

// Flags names the flags set on a point ("overloaded",
// "generator-limited"), for claims and decisions.
func (o *Overload) Flags() []string {
	if o == nil {
		return nil
	}
	var out []string
	if o.Overloaded.True() {
		out = append(out, "overloaded")
	}
	if o.GeneratorLimited.True() {
		out = append(out, "generator-limited")
	}
	if o.FastFailures.True() {
		out = append(out, FastFailuresFlag)
	}
	return out
}
