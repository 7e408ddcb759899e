package report

import (
	"fmt"
	"strconv"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/replay"
)

// Undecided is how every text report (text, Markdown, HTML) names an
// overloaded flag the overload test could not decide (JSON: null, CSV:
// empty, with overloaded_reason): the value in a row or column of the
// flag, "overload undecided" in a list of a point's flags. A null
// generator-limited or fast-failures flag is not undecided (a closed
// loop has no schedule to fall behind) and stays null.
const Undecided = "undecided"

// flagText is a flag as the text, Markdown and HTML reports print it:
// YES or no with the evidence, or null with the reason (an overloaded
// flag: Undecided with the reason).
func flagText(f replay.Flag, overloaded bool) string {
	switch {
	case f.Set == nil && overloaded:
		return Undecided + " (" + f.Why + ")"
	case f.Set == nil:
		return NullText(f.Why)
	case *f.Set:
		return "YES: " + f.Why
	}
	return "no: " + f.Why
}

// flagWord is a flag in one word (YES, no, null or, of an overloaded
// flag, Undecided), where a table has no room for its evidence.
func flagWord(f replay.Flag, overloaded bool) string {
	switch {
	case f.Set == nil && overloaded:
		return Undecided
	case f.Set == nil:
		return "null"
	case *f.Set:
		return "YES"
	}
	return "no"
}

// flagJSON is a flag as a JSON value.
func flagJSON(f replay.Flag) num {
	if f.Set == nil {
		return "null"
	}
	return num(strconv.FormatBool(*f.Set))
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
		return digits.Trend(x / scale) // as replay's overload evidence
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
		{"overloaded", flagText(o.Overloaded, true), ""},
		{"generator-limited", flagText(o.GeneratorLimited, false), ""},
		{"fast failures", flagText(o.FastFailures, false), ""},
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
		outstanding += ", mean " + digits.Trend(m)
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

// trendJSON is an overload trend.
type trendJSON struct {
	Slope  num  `json:"slope"`
	Low    num  `json:"low"`
	High   num  `json:"high"`
	Points num  `json:"points"`
	Reason text `json:"reason,omitempty"`
}

func newTrendJSON(t replay.Trend) trendJSON {
	return trendJSON{num(Number(t.Slope)), num(Number(t.Low)), num(Number(t.High)), num(strconv.Itoa(t.Points)), text(t.Reason)}
}

// overloadJSON is results[].overload.
type overloadJSON struct {
	Loop                   text       `json:"loop"`
	Overloaded             num        `json:"overloaded"`
	OverloadedReason       text       `json:"overloaded_reason"`
	GeneratorLimited       num        `json:"generator_limited"`
	GeneratorLimitedReason text       `json:"generator_limited_reason"`
	OfferedRate            num        `json:"offered_rate"`
	OfferedShare           text       `json:"offered_rate_share,omitempty"`
	ArrivalRate            num        `json:"arrival_rate"`
	FitStartNS             num        `json:"fit_start_ns"`
	FitEndNS               num        `json:"fit_end_ns"`
	Arrivals               num        `json:"arrivals"`
	Completions            num        `json:"completions"`
	FitArrivalRate         num        `json:"fit_arrival_rate"`
	CompletionRate         num        `json:"completion_rate"`
	BacklogShare           num        `json:"backlog_share"`
	OutstandingPeak        num        `json:"outstanding_peak"`
	OutstandingMean        num        `json:"outstanding_mean"`
	OutstandingTrend       trendJSON  `json:"outstanding_trend_per_s"`
	SendLagP99NS           num        `json:"send_lag_p99_ns"`
	SendLagTrend           trendJSON  `json:"send_lag_trend_ns_per_s"`
	QueueTrend             *trendJSON `json:"server_queue_trend_per_s"`
	NullReasons            object     `json:"null_reasons"`
}

func newOverloadJSON(o *replay.Overload) overloadJSON {
	j := overloadJSON{Loop: text(o.Loop), Overloaded: flagJSON(o.Overloaded), OverloadedReason: text(o.Overloaded.Why),
		GeneratorLimited: flagJSON(o.GeneratorLimited), GeneratorLimitedReason: text(o.GeneratorLimited.Why),
		OfferedRate: num(Number(o.OfferedRate)), OfferedShare: text(o.OfferedShare), ArrivalRate: num(Number(o.ArrivalRate)),
		FitStartNS: "null", FitEndNS: "null", Arrivals: "null", Completions: "null",
		FitArrivalRate: num(Number(o.FitArrivalRate)), CompletionRate: num(Number(o.CompletionRate)), BacklogShare: num(Number(o.BacklogShare)),
		OutstandingPeak: num(Number(o.OutstandingPeak)), OutstandingMean: num(Number(o.OutstandingMean)), OutstandingTrend: newTrendJSON(o.Outstanding),
		SendLagP99NS: num(Number(o.SendLagP99NS)), SendLagTrend: newTrendJSON(o.SendLag), NullReasons: sortedObject(o.Reasons)}
	if o.FitEndNS > o.FitStartNS {
		j.FitStartNS, j.FitEndNS, j.Arrivals, j.Completions = intNum(o.FitStartNS), intNum(o.FitEndNS), intNum(o.Arrivals), intNum(o.Completions)
	}
	if o.Queue != nil {
		q := newTrendJSON(*o.Queue)
		j.QueueTrend = &q
	}
	return j
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
