package report

import (
	"html/template"
	"io"
	"math/big"
	"strings"

	"github.com/benchseal/benchseal/compare"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

// The compare and decide pages share the replay page's style sheet and
// chart template.
var (
	compareTemplate = template.Must(template.Must(htmlTemplate.Clone()).New("compare").Funcs(pageFuncs).Parse(compareSource))
	decideTemplate  = template.Must(template.Must(htmlTemplate.Clone()).New("decide").Funcs(pageFuncs).Parse(decideSource))
	// pageFuncs are the functions of every page template.
	pageFuncs = template.FuncMap{"statusClass": func(s string) string {
		if f := strings.Fields(s); len(f) > 0 {
			return "st-" + f[0]
		}
		return ""
	}}
)

type compareHTMLPage struct {
	*compareModel
	Charts []chartView
}

// CompareHTML writes a comparison as one self-contained HTML page (inline
// CSS and SVG, no script, nothing fetched): run identities, the guard,
// overlay charts with their values in tables, and the comparison tables.
func CompareHTML(out io.Writer, r *compare.Result) error {
	pg := &compareHTMLPage{compareModel: newCompareModel(r)}
	if r.Guard.Verdict != compare.Refused && len(r.Inputs) >= 2 {
		pg.Charts = overlayCharts(r.Inputs, r.Loads, nil)
	}
	return compareTemplate.ExecuteTemplate(out, "compare", pg)
}

type decideHTMLPage struct {
	*decideModel
	// Decision is the decision table turned: a row per field, a column
	// per configuration, the objective's row first.
	Decision fieldTable
	Charts   []chartView
}

// fieldTable is a table of one row per field and one column per
// configuration.
type fieldTable struct {
	Head []string
	Rows []fieldRow
}

type fieldRow struct {
	Name  string
	Cells []string
	// Num right-aligns the cells; Objective marks the objective's row.
	Num, Objective bool
}

// DecideHTML writes a decision as one self-contained HTML page: the
// answer, the decision table with the objective's row first, the
// objective's chart first, then the other overlay charts and the inputs.
func DecideHTML(out io.Writer, d *compare.Decision) error {
	pg := &decideHTMLPage{decideModel: newDecideModel(d)}
	obj := objectiveColumn(d.Objective)
	pg.Decision = decisionFields(pg.Table, obj)
	// A column is headed by the label, the configuration's name and
	// whether it won ("A c2.oci.tar (WINNER)").
	for i := range pg.Decision.Head {
		if i < len(d.Rows) {
			l := inputLabel(i)
			pg.Decision.Head[i] = l + " " + d.Rows[i].Name + strings.TrimPrefix(pg.Decision.Head[i], l)
		}
	}
	if d.Guard.Verdict != compare.Refused && len(d.Inputs) > 0 {
		pg.Charts = decideCharts(d, pg.Table)
	}
	return decideTemplate.ExecuteTemplate(out, "decide", pg)
}

// decisionFields turns the decision table t: one row per column of t, one
// column per configuration, so that every field of every configuration
// is in view however many fields there are. The objective's row comes
// first, then the best point, then the other headline values.
func decisionFields(t table, obj int) fieldTable {
	var ft fieldTable
	if len(t.Rows) == 0 {
		return ft
	}
	order := []int{obj, decPoint}
	for _, c := range []int{decGoodput, decCost, decCapacity, decEnergy} {
		if c != obj && c < len(t.Head) {
			order = append(order, c)
		}
	}
	order = append(order, decEvidence, decHardware, decErrors, decTokens, decPrefix, decRepeats, decNotes)
	for _, r := range t.Rows {
		ft.Head = append(ft.Head, r[decConfig])
	}
	for _, c := range order {
		fr := fieldRow{Name: t.Head[c], Num: t.Num[c], Objective: c == obj}
		if fr.Objective {
			fr.Name += ": the objective"
		}
		for _, r := range t.Rows {
			fr.Cells = append(fr.Cells, r[c])
		}
		ft.Rows = append(ft.Rows, fr)
	}
	return ft
}

// decideCharts are the decision's overlay charts with the objective's
// first: cost per good token by offered load (the declared price said),
// SLO attainment by offered load with the target and each configuration's
// capacity, or goodput by offered load.
func decideCharts(d *compare.Decision, t table) []chartView {
	ins := d.Inputs
	goodput := loadOverlay(ins, goodputOverlay, nil)
	attain := loadOverlay(ins, attainmentOverlay, d.Target)
	lat := latencyOverlays(ins)
	switch d.Objective {
	case compare.MinCostPerGoodToken:
		return append([]chartView{loadOverlay(ins, costOverlay(currencyOf(ins)), nil), goodput, attain}, lat...)
	case compare.MaxCapacity:
		var caps []string
		for i, r := range t.Rows {
			caps = append(caps, inputLabel(i)+" "+r[decCapacity])
		}
		attain.Caption = strings.TrimSpace(attain.Caption + " Per-repeat capacity at the target (in each repeat, the highest offered load up to which that repeat's attainment at every load meets it, when some load fails it; the median over the repeats, or in how many repeats each bound holds; " +
			capacityUnit(ins) + "): " + strings.Join(caps, "; ") + "." + medianCurveCapacities(ins))
		return append([]chartView{attain, goodput}, lat...)
	}
	return append([]chartView{goodput, attain}, lat...)
}

// medianCurveCapacities states replay's capacity of each input (the first
// crossing of the median attainment over the repeats at each rate), which
// is not the per-repeat capacity decide ranks; "" when some input has none
// (a sweep not over rates).
func medianCurveCapacities(ins []*compare.Input) string {
	var caps []string
	for i, in := range ins {
		if in.Result.Capacity == nil {
			return ""
		}
		caps = append(caps, inputLabel(i)+" "+capacityText(in.Result.Capacity))
	}
	return " Capacity of the median attainment curve, as replay prints it: " + strings.Join(caps, "; ") + "."
}

// medianAt is the median over the repeats of one point of a metric.
func medianAt(in *compare.Input, point, metric string) replay.Value {
	var vals []replay.Value
	for _, pr := range compare.Repeats(in.Result, point) {
		v, _ := pr.Lookup(metric)
		vals = append(vals, v)
	}
	return replay.SummarizeValues(vals, replay.CIConfidence).Median
}

// loadAxis says what the offered load of the inputs is measured in.
func loadAxis(ins []*compare.Input) (label, unit string) {
	if len(ins) > 0 && ins[0].Manifest.Load.Mode == "rate" {
		return "offered rate (req/s)", "req/s"
	}
	return "offered concurrency (requests in flight)", ""
}

// overlayCharts draws every configuration on the same axes, one colour
// each: latency against throughput across load points (with the SLO
// limits), goodput and SLO attainment against offered load (with the
// attainment target when given), and the TTFT and E2E distributions at
// each matched load.
func overlayCharts(ins []*compare.Input, loads []string, target *big.Rat) []chartView {
	charts := latencyOverlays(ins)
	charts = append(charts, loadOverlay(ins, goodputOverlay, nil), loadOverlay(ins, attainmentOverlay, target))
	for _, load := range loads {
		if sw := ins[0].Result.Sweep; sw != nil && len(sw.LimitsNS) > 0 {
			charts = append(charts, sweepOverlay(ins, load))
		}
		for _, key := range latencyChartKeys {
			d, _ := schema.SLOMetric(key)
			charts = append(charts, cdfChart(ins, load, d.Name, d.Label))
		}
	}
	return charts
}

// latencyOverlays are TTFT and E2E p50 against request throughput across
// load points, one line per configuration, with the SLO limits.
func latencyOverlays(ins []*compare.Input) []chartView {
	var charts []chartView
	slo := ins[0].Result.SLO
	for _, key := range latencyChartKeys {
		m, _ := schema.SLOMetric(key)
		p := plot{title: m.Label + " p50 against request throughput, across load points", xLabel: "request throughput (req/s)", yLabel: m.Label + " p50 (ms)",
			empty: "no load point has both values", caption: "One line per configuration through its load points in order of offered load (medians across repeats); up and to the left is worse."}
		xmax := new(big.Rat)
		for i, in := range ins {
			s := plotSeries{name: inputLabel(i) + " " + in.Name, class: seriesClass(i, false)}
			for _, pt := range compare.Points(in.Result) {
				x := ratOf(medianAt(in, pt, schema.MetricRequestThroughput))
				yv := medianAt(in, pt, schema.MetricPath(m.Name, "p50"))
				y := scaled(yv, nsToMS)
				if x == nil || y == nil {
					continue
				}
				if x.Cmp(xmax) > 0 {
					xmax = x
				}
				xl := Decimal(replay.Exact(x), one, 3)
				s.line = append(s.line, plotPt{x: x, y: y, xl: xl, val: Decimal(yv, nsToMS, 3),
					tip: inputLabel(i) + " " + pt + ": " + xl + " req/s, " + m.Label + " p50 " + Decimal(yv, nsToMS, 3) + " ms"})
			}
			p.series = append(p.series, s)
		}
		p.numericX(new(big.Rat), xmax, "req/s")
		if limit := slo.Limit(key); limit != nil {
			p.hlines = append(p.hlines, sloLimitLine(key, *limit))
		}
		charts = append(charts, p.layout())
	}
	return charts
}

// overlaySpec is a metric drawn against offered load: its path, the
// chart's title, y label and empty text, how a value prints (scale,
// places) and what a tooltip says beside it (the name and the unit).
type overlaySpec struct {
	metric, title, yLabel, empty, caption, tipName, tipUnit string
	scale                                                   *big.Rat
	places                                                  int
}

var (
	goodputOverlay = overlaySpec{metric: schema.MetricGoodput, title: schema.MetricLabel(schema.MetricGoodput) + " by offered load", yLabel: "goodput (req/s)", empty: "undefined at every point (no SLO set?)",
		tipName: schema.MetricGoodput, tipUnit: "req/s", scale: one, places: 3}
	attainmentOverlay = overlaySpec{metric: schema.MetricSLOAttainment, title: schema.MetricLabel(schema.MetricSLOAttainment) + " by offered load", yLabel: schema.MetricLabel(schema.MetricSLOAttainment) + " (% of declared)",
		empty: "undefined at every point (no SLO set?)", tipName: schema.MetricLabel(schema.MetricSLOAttainment), tipUnit: "% of declared", scale: hundred, places: 2}
)

// costOverlay is cost per million good tokens against offered load, in
// currency (the declared price's).
func costOverlay(currency string) overlaySpec {
	n := nameOf(replay.CostPerMillionGoodTokens, currency)
	return overlaySpec{metric: replay.CostPerMillionGoodTokens, title: schema.MetricLabel(replay.CostPerMillionGoodTokens) + " by offered load", yLabel: "cost (" + n.valueUnit() + ")",
		empty:   "undefined at every point (no declared price, cost.price_per_hour, or no good tokens)",
		caption: "The price per hour is the publisher's declared one (cost.price_per_hour), not measured; the good tokens it divides are measured. Lower is better.",
		tipName: "cost", tipUnit: n.valueUnit() + " at the declared price", scale: one, places: n.Places}
}

// loadOverlay draws one metric against offered load, one line per
// configuration through the medians across repeats, with the attainment
// target when given.
func loadOverlay(ins []*compare.Input, m overlaySpec, target *big.Rat) chartView {
	lx, lu := loadAxis(ins)
	p := plot{title: m.title, xLabel: lx, yLabel: m.yLabel, empty: m.empty,
		caption: strings.TrimSpace("Medians across repeats, one line per configuration. " + m.caption)}
	xmax := new(big.Rat)
	for i, in := range ins {
		s := plotSeries{name: inputLabel(i) + " " + in.Name, class: seriesClass(i, false)}
		for _, pt := range compare.Points(in.Result) {
			o, ok := compare.PointLoad(in.Manifest, pt)
			v := medianAt(in, pt, m.metric)
			if !ok || v.IsNull() {
				continue
			}
			x := new(big.Rat).SetFloat64(o.Value())
			if x.Cmp(xmax) > 0 {
				xmax = x
			}
			val := Decimal(v, m.scale, m.places)
			s.line = append(s.line, plotPt{x: x, y: scaled(v, m.scale), xl: o.String(), val: val,
				tip: inputLabel(i) + " " + o.String() + ": " + m.tipName + " " + val + " " + m.tipUnit})
		}
		p.series = append(p.series, s)
	}
	p.numericX(new(big.Rat), xmax, lu)
	if target != nil {
		p.hlines = append(p.hlines, refLine{y: new(big.Rat).Mul(target, hundred), label: "target " + Decimal(replay.Exact(target), hundred, 2) + " %"})
	}
	return p.layout()
}

// pointAt is the input's point offering load, "" when none does.
func pointAt(in *compare.Input, load string) string {
	for _, pt := range compare.Points(in.Result) {
		if o, ok := compare.PointLoad(in.Manifest, pt); ok && o.String() == load {
			return pt
		}
	}
	return ""
}

// sweepOverlay is goodput against the swept SLO limit at one offered
// load, one line per configuration (medians across repeats), with the
// SLO's own limit marked.
func sweepOverlay(ins []*compare.Input, load string) chartView {
	sw := ins[0].Result.Sweep
	p := plot{title: "Goodput by " + sw.Metric + " limit at " + load, xLabel: sw.Metric + " limit (ms)", yLabel: "goodput (req/s)",
		empty: "no defined goodput", caption: "Goodput each configuration would have under each " + sw.Metric + " limit, the other limits fixed (medians across repeats)."}
	var lo, hi *big.Rat
	for i, in := range ins {
		s := plotSeries{name: inputLabel(i) + " " + in.Name, class: seriesClass(i, false)}
		point := pointAt(in, load)
		if isw := in.Result.Sweep; isw != nil && point != "" {
			for j, lim := range isw.LimitsNS {
				var vals []replay.Value
				for _, row := range isw.Rows {
					if row.Point == point {
						vals = append(vals, row.Goodput[j])
					}
				}
				med := replay.SummarizeValues(vals, replay.CIConfidence).Median
				x := new(big.Rat).Mul(rat(lim), nsToMS)
				if lo == nil || x.Cmp(lo) < 0 {
					lo = x
				}
				if hi == nil || x.Cmp(hi) > 0 {
					hi = x
				}
				s.line = append(s.line, plotPt{x: x, y: ratOf(med), xl: Decimal(replay.Int(lim), nsToMS, 3), val: Decimal(med, one, 3),
					tip: inputLabel(i) + ", " + sw.Metric + " ≤ " + Decimal(replay.Int(lim), nsToMS, 3) + " ms: goodput " + Decimal(med, one, 3) + " req/s"})
			}
		}
		p.series = append(p.series, s)
	}
	if lo == nil {
		lo, hi = new(big.Rat), big.NewRat(1, 1)
	}
	p.numericX(lo, hi, "ms")
	if limit := ins[0].Result.SLO.Limit(sw.Metric); limit != nil {
		p.vline = new(big.Rat).Mul(rat(*limit), nsToMS)
		p.vlineAt = "SLO " + Decimal(replay.Int(*limit), nsToMS, 3) + " ms"
	}
	return p.layout()
}

// cdfChart is the distribution of one latency at one offered load, per
// configuration: the cumulative share of requests against the latency,
// drawn through the reported percentiles (0.1th … 99.9th, min and max),
// each the median across repeats.
func cdfChart(ins []*compare.Input, load, dist, name string) chartView {
	p := plot{title: name + " distribution at " + load, xLabel: name + " (ms)", yLabel: "requests at or below (%)", empty: "no defined " + name,
		caption: "Cumulative share of requests against " + name + ", through the reported percentiles (medians across repeats); further right is slower."}
	xmax := new(big.Rat)
	for i, in := range ins {
		s := plotSeries{name: inputLabel(i) + " " + in.Name, class: seriesClass(i, false)}
		if point := pointAt(in, load); point != "" {
			type q struct {
				key     string
				percent *big.Rat
			}
			qs := []q{{"min", new(big.Rat)}}
			for _, pc := range replay.Percentiles {
				qs = append(qs, q{pc.Key, big.NewRat(100*pc.Num, pc.Den)})
			}
			qs = append(qs, q{"max", big.NewRat(100, 1)})
			for _, qq := range qs {
				v := medianAt(in, point, dist+"."+qq.key)
				x := scaled(v, nsToMS)
				if x == nil {
					continue
				}
				if x.Cmp(xmax) > 0 {
					xmax = x
				}
				pl := Decimal(replay.Exact(qq.percent), one, 1) + " %"
				s.line = append(s.line, plotPt{x: x, y: qq.percent, xl: Decimal(v, nsToMS, 3) + " ms", val: pl,
					tip: inputLabel(i) + ": " + pl + " of requests ≤ " + Decimal(v, nsToMS, 3) + " ms"})
			}
		}
		p.series = append(p.series, s)
	}
	p.numericX(new(big.Rat), xmax, "ms")
	cv := p.layout()
	// The values as one row per percentile, one column per configuration.
	if len(cv.Table.Rows) > 0 {
		t := dataTable{Head: []string{"requests at or below (%)"}}
		byShare := map[string][]string{}
		var shares []string
		for i, s := range p.series {
			t.Head = append(t.Head, inputLabel(i)+" "+name+" (ms)")
			for _, pt := range s.line {
				if _, ok := byShare[pt.val]; !ok {
					shares = append(shares, pt.val)
					byShare[pt.val] = make([]string, len(p.series))
				}
				byShare[pt.val][i] = strings.TrimSuffix(pt.xl, " ms")
			}
		}
		t.Text = make([]bool, len(t.Head))
		for _, sh := range shares {
			row := []string{sh}
			for _, v := range byShare[sh] {
				if v == "" {
					v = "-"
				}
				row = append(row, v)
			}
			t.Rows = append(t.Rows, row)
		}
		cv.Table = t
	}
	return cv
}
