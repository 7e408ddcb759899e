package report

import (
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/benchseal/benchseal/replay"
)

// flagText is a flag as the text, Markdown and HTML reports print it:
// YES or no with the evidence, or null with the reason.
func flagText(f replay.Flag) string {
	switch {
	case f.Set == nil:
		return NullText(f.Why)
	case *f.Set:
		return "YES: " + f.Why
	}
	return "no: " + f.Why
}

// flagWord is a flag in one word (YES, no or null), where a table has
// no room for its evidence.
func flagWord(f replay.Flag) string {
	switch {
	case f.Set == nil:
		return "null"
	case *f.Set:
		return "YES"
	}
	return "no"
}

// flagJSON is a flag as a JSON value.
func flagJSON(f replay.Flag) string {
	if f.Set == nil {
		return "null"
	}
	return strconv.FormatBool(*f.Set)
}

// rateText prints a rate (req/s) or null with the reason.
func rateText(v replay.Value, o *replay.Overload, key string) string {
	if why, ok := o.NullReason(key); ok && v.IsNull() {
		return NullText(why)
	}
	return Decimal(v, one, 3) + " req/s"
}

// trendText prints a trend: slope [95 % interval] per second, scaled.
func trendText(t replay.Trend, scale float64, unit string) string {
	if t.Slope.IsNull() {
		return NullText(t.Reason)
	}
	f := func(v replay.Value) string {
		x, ok := v.Float64()
		if !ok {
			return "-"
		}
		return strconv.FormatFloat(x/scale, 'f', 3, 64)
	}
	s := fmt.Sprintf("%s %s [95%% CI %s, %s] over %d values", f(t.Slope), unit, f(t.Low), f(t.High), t.Points)
	if t.Reason != "" {
		s += " (" + t.Reason + ")"
	}
	return s
}

// overloadRows prints a point's overload test after its other rows: the
// two flags first, then what they rest on.
func overloadRows(p *replay.PointResult) []row {
	o := p.Overload
	if o == nil {
		return nil
	}
	out := []row{
		{"overloaded", flagText(o.Overloaded), ""},
		{"generator-limited", flagText(o.GeneratorLimited), ""},
		{"fast failures", flagText(o.FastFailures), ""},
		{"arrival rate", "offered " + rateText(o.OfferedRate, o, "offered_rate") + "; achieved " + rateText(o.ArrivalRate, o, "arrival_rate"), "(" + o.Loop + " loop)"},
	}
	if o.OfferedShare != "" {
		out = append(out, row{"offered", o.OfferedShare, ""})
	}
	if why, ok := o.Reasons["completion_rate"]; ok {
		out = append(out, row{"completions", NullText(why), ""})
	} else {
		rej := ""
		if o.FitRejected > 0 {
			rej = fmt.Sprintf(" (%d rejected: not served, so not completions)", o.FitRejected)
		}
		out = append(out, row{"completions", fmt.Sprintf("%d ends of %d arrivals%s in the fit window (%s ms wide, from %s ms): completion rate %s req/s vs arrival rate %s req/s; backlog %s %%%s",
			o.Completions, o.Arrivals, rej, Decimal(replay.Int(o.FitEndNS-o.FitStartNS), nsToMS, 3), Decimal(replay.Int(o.FitStartNS), nsToMS, 3),
			Decimal(o.CompletionRate, one, 3), Decimal(o.FitArrivalRate, one, 3), Decimal(o.BacklogShare, hundred, 2), negativeBacklog(o)), ""})
	}
	outstanding := "peak " + Decimal(o.OutstandingPeak, one, 0)
	if why, ok := o.Reasons["outstanding_peak"]; ok {
		outstanding = "peak " + NullText(why)
	}
	outstanding += "; trend " + trendText(o.Outstanding, 1, "per s")
	if m, ok := o.OutstandingMean.Float64(); ok {
		outstanding += fmt.Sprintf(", mean %.3f", m)
	}
	out = append(out, row{"outstanding", outstanding, "requests"})
	lag := trendText(o.SendLag, 1e6, "ms/s")
	if !o.SendLagP99NS.IsNull() {
		lag = "p99 " + Decimal(o.SendLagP99NS, nsToMS, 3) + " ms; trend " + lag
	}
	out = append(out, row{"send-lag trend", lag, ""})
	if q := o.Queue; q != nil {
		out = append(out, row{"server queue trend (waiting requests)", trendText(*q, 1, "per s"), ""})
	}
	return out
}

// negativeBacklog explains a backlog below 0: the served requests that
// ended in the fit window include some sent before it, so fewer were in
// flight at its end than at its start ("" when the backlog is not
// negative).
func negativeBacklog(o *replay.Overload) string {
	if o.Completions <= o.Arrivals {
		return ""
	}
	return fmt.Sprintf(" (negative: %d more ends than arrivals, because requests sent before the window, in the first quarter set aside, ended in it: fewer were in flight at its end than at its start)",
		o.Completions-o.Arrivals)
}

// overloadJSON writes results[].overload.
func (w *jw) overload(o *replay.Overload) {
	trend := func(k string, t replay.Trend) {
		w.key(k)
		w.open('{')
		w.kv("slope", Number(t.Slope))
		w.kv("low", Number(t.Low))
		w.kv("high", Number(t.High))
		w.kv("points", strconv.Itoa(t.Points))
		if t.Reason != "" {
			w.ks("reason", t.Reason)
		}
		w.close('}')
	}
	w.open('{')
	w.ks("loop", o.Loop)
	w.kv("overloaded", flagJSON(o.Overloaded))
	w.ks("overloaded_reason", o.Overloaded.Why)
	w.kv("generator_limited", flagJSON(o.GeneratorLimited))
	w.ks("generator_limited_reason", o.GeneratorLimited.Why)
	w.kv("offered_rate", Number(o.OfferedRate))
	if o.OfferedShare != "" {
		w.ks("offered_rate_share", o.OfferedShare)
	}
	w.kv("arrival_rate", Number(o.ArrivalRate))
	if o.FitEndNS > o.FitStartNS {
		w.kv("fit_start_ns", strconv.FormatInt(o.FitStartNS, 10))
		w.kv("fit_end_ns", strconv.FormatInt(o.FitEndNS, 10))
		w.kv("arrivals", strconv.FormatInt(o.Arrivals, 10))
		w.kv("completions", strconv.FormatInt(o.Completions, 10))
	} else {
		for _, k := range []string{"fit_start_ns", "fit_end_ns", "arrivals", "completions"} {
			w.kv(k, "null")
		}
	}
	w.kv("fit_arrival_rate", Number(o.FitArrivalRate))
	w.kv("completion_rate", Number(o.CompletionRate))
	w.kv("backlog_share", Number(o.BacklogShare))
	w.kv("outstanding_peak", Number(o.OutstandingPeak))
	w.kv("outstanding_mean", Number(o.OutstandingMean))
	trend("outstanding_trend_per_s", o.Outstanding)
	w.kv("send_lag_p99_ns", Number(o.SendLagP99NS))
	trend("send_lag_trend_ns_per_s", o.SendLag)
	if o.Queue != nil {
		trend("server_queue_trend_per_s", *o.Queue)
	} else {
		w.kv("server_queue_trend_per_s", "null")
	}
	w.key("null_reasons")
	w.open('{')
	for _, k := range slices.Sorted(maps.Keys(o.Reasons)) {
		w.ks(k, o.Reasons[k])
	}
	w.close('}')
	w.close('}')
}

// overloadCSV lists overload.KEY rows: the claimable keys as numbers
// (flags 1/0, empty when null), then each flag's reason as text.
func overloadCSV(o *replay.Overload) [][2]string {
	var out [][2]string
	for _, k := range replay.OverloadKeys {
		v, _ := o.Field(k)
		out = append(out, [2]string{"overload." + k, csvNum(v)})
	}
	out = append(out, [2]string{"overload.overloaded_reason", o.Overloaded.Why}, [2]string{"overload.generator_limited_reason", o.GeneratorLimited.Why})
	return out
}
