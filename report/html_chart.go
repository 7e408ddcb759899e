package report

import (
	"math/big"
	"slices"
	"strings"

	"github.com/benchseal/benchseal/compare"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

// pointTicks are the categorical x ticks of the load points, in run order.
// latencyChartKeys are the SLO limits whose metrics the replay and
// compare reports chart against load, with the limit drawn: TTFT and E2E
// latency (TPOT, whose one-token rule a line cannot show, is left out).
var latencyChartKeys = []string{schema.SLOTTFT, schema.SLOE2E}

func pointTicks(points []string) (x0, x1 *big.Rat, ticks []xTick) {
	for i, p := range points {
		ticks = append(ticks, xTick{x: rat(int64(i)), label: p, full: p})
	}
	return big.NewRat(-1, 2), new(big.Rat).Sub(rat(int64(len(points))), big.NewRat(1, 2)), ticks
}

// byPoint groups the results by point, in run order.
func byPoint(r *replay.Result) (points []string, reps map[string][]*replay.PointResult) {
	reps = map[string][]*replay.PointResult{}
	for _, p := range r.Results {
		if _, ok := reps[p.Point]; !ok {
			points = append(points, p.Point)
		}
		reps[p.Point] = append(reps[p.Point], p)
	}
	return points, reps
}

// metricSeries is one summary metric across points: the median line and
// every repeat's value.
func metricSeries(r *replay.Result, name, class, metric string, scale *big.Rat, unit string) plotSeries {
	points, reps := byPoint(r)
	s := plotSeries{name: name, class: class}
	meds := map[string]replay.Summary{}
	for _, ps := range r.Summary {
		meds[ps.Point] = ps.Metrics[metric]
	}
	for i, pt := range points {
		x := rat(int64(i))
		med := meds[pt]
		s.line = append(s.line, plotPt{x: x, y: scaled(med.Median, scale), xl: pt, val: Decimal(med.Median, scale, 3),
			tip: pt + ": " + name + " " + Decimal(med.Median, scale, 3) + " " + unit + " (median of " + Number(replay.Int(int64(med.N))) + " repeats)"})
		for _, pr := range reps[pt] {
			v, _ := pr.Lookup(metric)
			repeat := "repeat " + Number(replay.Int(int64(pr.Repeat)))
			rep := pt + " " + repeat + ": " + name + " "
			if v.IsNull() {
				why, ok := pr.NullReason(metric)
				if !ok {
					why = "undefined in this repeat"
				}
				s.reps = append(s.reps, plotPt{x: x, null: true, tip: rep + NullText(why), val: repeat + " " + NullText(why)})
				continue
			}
			s.reps = append(s.reps, plotPt{x: x, y: scaled(v, scale), tip: rep + Decimal(v, scale, 3) + " " + unit})
		}
	}
	// A series null everywhere (goodput without an SLO) is not drawn at
	// all, and the caption says why: no crosses for it.
	if !slices.ContainsFunc(s.reps, func(p plotPt) bool { return p.y != nil }) {
		for i := range s.reps {
			s.reps[i].null = false
		}
	}
	return s
}

const repeatsCaption = "Lines join the medians across repeats (filled dots); hollow dots are the single repeats. The table under each chart lists the medians."

// flagShades are the shades of the load points flagged in any repeat,
// and the caption sentence that explains them ("" when none is).
func flagShades(r *replay.Result) ([]shade, string) {
	points, reps := byPoint(r)
	var out []shade
	for i, pt := range points {
		line := compare.FlagLine(reps[pt])
		if line == "" {
			continue
		}
		class := "generator-limited"
		if strings.Contains(line, "overloaded") {
			class = "overloaded"
		}
		out = append(out, shade{x: rat(int64(i)), class: class, label: pt + ": " + line, line: line})
	}
	if len(out) == 0 {
		return nil, ""
	}
	return out, "Shaded points are flagged (red: overloaded, arrivals outran completions; amber: generator-limited, the client did not keep its schedule): their numbers describe a load the point did not sustain."
}

func htmlCharts(r *replay.Result) []chartView {
	points, _ := byPoint(r)
	if len(points) == 0 {
		return nil
	}
	shades, shadeCaption := flagShades(r)
	x0, x1, ticks := pointTicks(points)
	xLabel := "load point (run order)"
	tput := plot{title: "Goodput and request throughput by load point", yLabel: "throughput (req/s)", xLabel: xLabel,
		x0: x0, x1: x1, xTicks: ticks, categorical: true, empty: "no defined throughput",
		caption: "Goodput counts the requests meeting the SLO; request throughput every ok request with content. " + repeatsCaption}
	if !r.SLO.Any() {
		tput.caption = "Goodput is undefined: no SLO is set. " + repeatsCaption
	}
	tput.shades = shades
	tput.caption = strings.TrimSpace(tput.caption + " " + shadeCaption)
	// Goodput is drawn last so that it shows where it equals throughput.
	tput.series = []plotSeries{
		metricSeries(r, schema.MetricLabel(schema.MetricRequestThroughput), seriesClass(1, false), schema.MetricRequestThroughput, one, "req/s"),
		metricSeries(r, schema.MetricLabel(schema.MetricGoodput), seriesClass(0, false), schema.MetricGoodput, one, "req/s"),
	}
	charts := []chartView{tput.layout()}
	for _, key := range latencyChartKeys {
		d, _ := schema.SLOMetric(key)
		lat := plot{title: d.Label + " p50 and p99 by load point", yLabel: d.Label + " (ms)", xLabel: xLabel,
			x0: x0, x1: x1, xTicks: ticks, categorical: true, empty: "no defined " + key + " (n = 0 at every point)",
			caption: strings.TrimSpace(repeatsCaption + " " + shadeCaption), shades: shades}
		lat.series = []plotSeries{
			metricSeries(r, d.Label+" p50", seriesClass(0, false), schema.MetricPath(d.Name, "p50"), nsToMS, "ms"),
			metricSeries(r, d.Label+" p99", seriesClass(1, true), schema.MetricPath(d.Name, "p99"), nsToMS, "ms"),
		}
		if limit := r.SLO.Limit(key); limit != nil {
			lat.hlines = append(lat.hlines, sloLimitLine(key, *limit))
		}
		charts = append(charts, lat.layout())
	}
	if r.Sweep != nil && len(r.Sweep.LimitsNS) > 0 {
		charts = append(charts, sweepChart(r))
	}
	return append(charts, energyCharts(r)...)
}

// sweepChart is goodput against the swept limit, one line per point (the
// median across its repeats).
func sweepChart(r *replay.Result) chartView {
	sw := r.Sweep
	lims := make([]*big.Rat, len(sw.LimitsNS))
	for i, l := range sw.LimitsNS {
		lims[i] = new(big.Rat).Mul(rat(l), nsToMS)
	}
	lo, hi := lims[0], lims[len(lims)-1]
	p := plot{title: "Goodput by " + sw.Metric + " limit", yLabel: "goodput (req/s)", xLabel: sw.Metric + " limit (ms)",
		x0: lo, x1: hi, empty: "no defined goodput",
		caption: "Goodput under each " + sw.Metric + " limit, the other limits fixed. " + repeatsCaption}
	if sw.Metric == schema.SLOTPOT {
		p.caption += " " + MeaningsFor(r.Definitions)[schema.MetricTPOT] + "."
	}
	p.numericX(lo, hi, "ms")
	var order []string
	rows := map[string][]replay.SweepRow{}
	for _, row := range sw.Rows {
		if _, ok := rows[row.Point]; !ok {
			order = append(order, row.Point)
		}
		rows[row.Point] = append(rows[row.Point], row)
	}
	for i, pt := range order {
		s := plotSeries{name: pt, class: seriesClass(i, false)}
		for j, x := range lims {
			var vals []replay.Value
			for _, row := range rows[pt] {
				v := row.Goodput[j]
				vals = append(vals, v)
				s.reps = append(s.reps, plotPt{x: x, y: ratOf(v),
					tip: pt + " repeat " + Number(replay.Int(int64(row.Repeat))) + ", " + sw.Metric + " ≤ " + Decimal(replay.Int(sw.LimitsNS[j]), nsToMS, 3) + " ms: goodput " + Decimal(v, one, 3) + " req/s"})
			}
			med := replay.SummarizeValues(vals, replay.CIConfidence)
			s.line = append(s.line, plotPt{x: x, y: ratOf(med.Median), xl: Decimal(replay.Int(sw.LimitsNS[j]), nsToMS, 3), val: Decimal(med.Median, one, 3),
				tip: pt + ", " + sw.Metric + " ≤ " + Decimal(replay.Int(sw.LimitsNS[j]), nsToMS, 3) + " ms: goodput " + Decimal(med.Median, one, 3) + " req/s (median of " + Number(replay.Int(int64(med.N))) + " repeats)"})
		}
		p.series = append(p.series, s)
	}
	if limit := r.SLO.Limit(sw.Metric); limit != nil {
		p.vline = new(big.Rat).Mul(rat(*limit), nsToMS)
		p.vlineAt = "SLO " + Decimal(replay.Int(*limit), nsToMS, 3) + " ms"
	}
	return p.layout()
}
