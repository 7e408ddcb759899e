package report

import (
	"encoding/json"
	"fmt"
	"math"
	"strings"

	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/servermetrics"
)

// serverRows prints a point's server column (nil: the run stored no
// scrapes) as rows of their own, after the client's: the engine's own
// timers, never merged into the client columns.
func serverRows(p *replay.PointResult) []row {
	sc := p.Server
	if sc == nil {
		return nil
	}
	if sc.Column == nil {
		return []row{{"server", NullText(sc.Reason), ""}}
	}
	c := sc.Column
	out := []row{{"server", fmt.Sprintf("%s /metrics, %d scrapes: the engine's own timers, not merged into the client columns above; percentiles are bucket-interpolated estimates [bucket edges]", c.Engine, sc.Scrapes), ""}}
	for _, h := range c.Histograms {
		label := "server " + h.Role
		if h.Role == servermetrics.RoleTPOT || h.Role == servermetrics.RoleITL {
			// Not the client's tpot/itl: the engine's own histogram.
			label += " (engine's own " + h.Metric + ")"
		}
		out = append(out, row{label, serverHist(h), "ms"})
	}
	for _, a := range sc.Attainment {
		out = append(out, row{"server slo " + a.Metric + " ≤ " + Decimal(replay.Int(a.LimitNS), nsToMS, 3) + " ms", serverAttain(a), ""})
	}
	if g := sc.ClientMinusServerTTFTNS; g != nil {
		out = append(out, row{"client − server ttft", fmt.Sprintf("%.3f ms (mean difference: %s)", *g/1e6, replay.ServerGapLabel), ""})
	} else if sc.GapReason != "" {
		out = append(out, row{"client − server ttft", NullText(sc.GapReason), ""})
	}
	if len(c.Counters) > 0 {
		var parts []string
		for _, d := range c.Counters {
			parts = append(parts, fmt.Sprintf("%s %s", d.Role, trimFloat(d.Delta)))
		}
		out = append(out, row{"server counts", strings.Join(parts, "; "), "(increase over the point)"})
	}
	if len(c.Gauges) > 0 {
		var parts []string
		for _, g := range c.Gauges {
			parts = append(parts, gaugeText(g))
		}
		out = append(out, row{"server gauges", strings.Join(parts, "; "), ""})
	}
	for _, a := range c.Absent {
		out = append(out, row{"server " + a.Role, NullText(a.Reason), ""})
	}
	return out
}

// gaugeText prints a gauge's peak and slope over the scrapes inside the
// point's load; a null one reads NullText with its reason (once when
// peak and slope share it).
func gaugeText(g servermetrics.GaugePeak) string {
	if g.Peak == nil {
		if g.SlopeReason == g.PeakReason {
			return g.Role + " peak and slope " + NullText(g.PeakReason)
		}
		return g.Role + " peak " + NullText(g.PeakReason) + " slope " + NullText(g.SlopeReason)
	}
	s := fmt.Sprintf("%s peak %s", g.Role, trimFloat(*g.Peak))
	if g.Slope != nil {
		return s + fmt.Sprintf(" slope %s/s", trimFloat(*g.Slope))
	}
	return s + " slope " + NullText(g.SlopeReason)
}

// serverGaugeCSV lists a point's server gauges as CSV metric/value
// pairs: peak and slope per role, and the reason of each null one.
func serverGaugeCSV(sc *replay.ServerColumn) [][2]string {
	if sc == nil || sc.Column == nil {
		return nil
	}
	var out [][2]string
	num := func(f *float64) replay.Value {
		if f == nil {
			return replay.Null
		}
		return replay.Float(*f)
	}
	for _, g := range sc.Column.Gauges {
		k := "server.gauge." + g.Role
		out = append(out, [2]string{k + ".peak", csvNum(num(g.Peak))}, [2]string{k + ".slope_per_s", csvNum(num(g.Slope))})
		if g.PeakReason != "" {
			out = append(out, [2]string{"null_reason." + k + ".peak", g.PeakReason})
		}
		if g.SlopeReason != "" {
			out = append(out, [2]string{"null_reason." + k + ".slope_per_s", g.SlopeReason})
		}
	}
	return out
}

func serverHist(h servermetrics.HistogramDelta) string {
	if h.Mean == nil {
		return fmt.Sprintf("n %s  (no observations)", trimFloat(h.Count))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "n %s  mean %.3f", trimFloat(h.Count), *h.Mean*1e3)
	for _, e := range h.Estimates {
		fmt.Fprintf(&b, "  ~p%s ", trimFloat(e.Quantile*100))
		switch {
		case e.Value != nil:
			fmt.Fprintf(&b, "%.3f [%.3f, %.3f]", *e.Value*1e3, e.Lo*1e3, *e.Hi*1e3)
		case e.Hi != nil: // bounds only (servermetrics.Estimate)
			fmt.Fprintf(&b, "in [%.3f, %.3f]", e.Lo*1e3, *e.Hi*1e3)
		default:
			fmt.Fprintf(&b, "> %.3f", e.Lo*1e3)
		}
	}
	return b.String()
}

// serverAttain prints one server attainment: exact at a bucket edge,
// otherwise the bounds at the neighbouring edges, always labelled.
func serverAttain(a replay.ServerAttainment) string {
	if a.Reason != "" {
		return NullText(a.Reason)
	}
	pct := func(v float64) string { return fmt.Sprintf("%.2f %%", v*100) }
	edge := func(e *float64, none string) string {
		if e == nil {
			return none
		}
		return "≤ " + trimFloat(*e*1e3) + " ms"
	}
	of := fmt.Sprintf(" of %s observations of %s", trimFloat(a.Count), a.Histogram)
	if a.A.Exact {
		return "exactly " + pct(a.A.Lo) + of + " (the limit is a bucket edge; per limit, not joint)"
	}
	return fmt.Sprintf("between %s (%s) and %s (%s)%s (the limit lies between bucket edges: bounded only; per limit, not joint)",
		pct(a.A.Lo), edge(a.A.LoEdge, "no edge below"), pct(a.A.Hi), edge(a.A.HiEdge, "+Inf"), of)
}

func trimFloat(v float64) string {
	if v == math.Trunc(v) && math.Abs(v) < 1e15 {
		return fmt.Sprintf("%.0f", v)
	}
	return fmt.Sprintf("%.4g", v)
}

// serverJSON is a point's server column as JSON: {"column": ... | null,
// "reason": ..., "scrapes": n, "client_minus_server_ttft_mean_ns": ...,
// "client_minus_server_ttft_label": ...}.
func serverJSON(sc *replay.ServerColumn) string {
	type attain struct {
		Metric    string   `json:"metric"`
		LimitNS   int64    `json:"limit_ns"`
		Histogram string   `json:"histogram"`
		Count     float64  `json:"count"`
		Exact     *bool    `json:"exact"`
		Lo        *float64 `json:"lo"`
		Hi        *float64 `json:"hi"`
		LoEdge    *float64 `json:"lo_le"`
		HiEdge    *float64 `json:"hi_le"`
		Reason    string   `json:"reason,omitempty"`
	}
	var att []attain
	for _, a := range sc.Attainment {
		j := attain{Metric: a.Metric, LimitNS: a.LimitNS, Histogram: a.Histogram, Count: a.Count, Reason: a.Reason}
		if a.Reason == "" {
			j.Exact, j.Lo, j.Hi, j.LoEdge, j.HiEdge = &a.A.Exact, &a.A.Lo, &a.A.Hi, a.A.LoEdge, a.A.HiEdge
		}
		att = append(att, j)
	}
	label := ""
	if len(att) > 0 {
		label = replay.ServerAttainmentLabel
	}
	v := struct {
		Column     *servermetrics.Column `json:"column"`
		Reason     string                `json:"reason,omitempty"`
		Scrapes    int                   `json:"scrapes"`
		Gap        *float64              `json:"client_minus_server_ttft_mean_ns"`
		Label      string                `json:"client_minus_server_ttft_label"`
		GapWhy     string                `json:"client_minus_server_ttft_reason,omitempty"`
		Attain     []attain              `json:"slo_attainment,omitempty"`
		AttainWhat string                `json:"slo_attainment_label,omitempty"`
	}{sc.Column, sc.Reason, sc.Scrapes, sc.ClientMinusServerTTFTNS, replay.ServerGapLabel, sc.GapReason, att, label}
	b, err := json.Marshal(v)
	if err != nil {
		// Only a NaN or an infinity fails, and Parse and Delta admit
		// neither.
		return `{"column":null,"reason":"not representable in JSON"}`
	}
	return string(b)
}
