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

// HTML writes the report as one self-contained HTML page: inline CSS and
// inline SVG charts, no script, no external resource. Every string from
// the run (point names, notes, currency) is escaped by html/template, so a
// hostile manifest renders as text. Numbers go through Decimal and Number
// as in the other formats; the output is byte-identical for equal input.
func HTML(out io.Writer, r *replay.Result) error {
	return htmlTemplate.Execute(out, newHTMLPage(r))
}

// HTMLRun is HTML with the run's identity in the header: run id, evidence
// class, model, hardware, engine, boundary, SLO and its source, how the
// input was checked, and the declared unknowns. in.Result must be r.
func HTMLRun(out io.Writer, r *replay.Result, in *compare.Input) error {
	pg := newHTMLPage(r)
	pg.Identity = []identityView{newIdentity("run", in)}
	if in.External() {
		pg.References = []referenceView{newReference(in)}
	}
	return htmlTemplate.Execute(out, pg)
}

var htmlTemplate = template.Must(template.New("report").Funcs(pageFuncs).Parse(htmlSource + identitySource))

type htmlPage struct {
	Identity                                 []identityView
	References                               []referenceView
	Schema, Definitions, Boundary, SLO, Cost string
	Meanings                                 []string
	Notes                                    []string
	Incomplete                               string
	Charts                                   []chartView
	Summary                                  []summaryView
	Footnotes                                []string
	Capacity                                 *capacityView
	Points                                   []pointView
	ColdMeaning                              string
}

type summaryView struct {
	Point string
	Rows  []summaryRow
	// Meanings is set when a row is a tpot or itl metric.
	Meanings bool
}

type summaryRow struct {
	Metric, Unit, Median, Low, High, N string
	Marks                              []string
}

type capacityView struct {
	Target, Rate, NullReason, MaxPassing, NonMonotone string
	Rows                                              [][]string
}

type pointView struct {
	Point, Repeat string
	Counts        []countRow
	Scalars       []scalarRow
	DistKeys      []string
	Dists         []distRow
	// Cold and ColdDists are the cold column (empty: no warmup records).
	Cold      []scalarRow
	ColdDists []distRow
	// Sessions and SessionDists are the session column (empty: no record
	// names a session); Prefix the expected against reported prefix-cache
	// tokens (empty: none expected).
	Sessions     []scalarRow
	SessionDists []distRow
	Prefix       []scalarRow
	// Server holds the server column's rows (empty: no scrapes stored).
	Server []serverRow
	// Energy holds the accelerator energy column's rows (empty: no
	// accelerator scrapes stored).
	Energy []serverRow
}

type serverRow struct{ Metric, Value, Unit string }

type countRow struct{ Key, Value string }

type scalarRow struct {
	Metric, Value, Unit string
	// Text is set for a sentence rather than one number.
	Text bool
}

type distRow struct {
	Name  string
	Cells []string
	Unit  string
	// Null, when set, replaces the cells (spanning Span columns).
	Null string
	Span int
}

func newHTMLPage(r *replay.Result) *htmlPage {
	pg := &htmlPage{
		Schema: r.Schema, Definitions: definitionsLine(r), Boundary: boundaryLine(r.Boundary), SLO: sloLine(r),
		Meanings:    []string{MeaningsFor(r.Definitions)[schema.MetricTPOT], MeaningsFor(r.Definitions)[schema.MetricITL]},
		Notes:       r.Notes,
		Charts:      htmlCharts(r),
		ColdMeaning: ColdMeaning,
	}
	if r.Incomplete != nil {
		pg.Incomplete = r.Incomplete.Line()
	}
	if r.Cost != nil {
		pg.Cost = priceText(r.Cost) + " per hour over each measurement window"
	}
	notes := map[string]string{}
	for _, ps := range r.Summary {
		sv := summaryView{Point: ps.Point}
		for _, m := range replay.SummaryMetrics {
			s := ps.Metrics[m]
			scale, unit, places := summaryUnit(m)
			row := summaryRow{Metric: nameOf(m, "").Name + " (" + unit + ")", Unit: unit, Median: Decimal(s.Median, scale, places),
				Low: Decimal(s.CILow, scale, places), High: Decimal(s.CIHigh, scale, places), N: Number(replay.Int(int64(s.N)))}
			for _, w := range s.Warnings {
				mark, ok := notes[w]
				if !ok {
					pg.Footnotes = append(pg.Footnotes, w)
					mark = Number(replay.Int(int64(len(pg.Footnotes))))
					notes[w] = mark
				}
				row.Marks = append(row.Marks, mark)
			}
			if strings.HasPrefix(m, schema.MetricTPOT+".") || strings.HasPrefix(m, schema.MetricITL+".") {
				sv.Meanings = true
			}
			sv.Rows = append(sv.Rows, row)
		}
		pg.Summary = append(pg.Summary, sv)
	}
	if c := r.Capacity; c != nil {
		cv := &capacityView{Target: Decimal(replay.Exact(c.Target), hundred, 2), Rate: Decimal(c.Rate, one, 3), NullReason: c.NullReason, MaxPassing: Decimal(c.MaxPassingRate, one, 3), NonMonotone: c.NonMonotone}
		for i := range c.Points {
			cv.Rows = append(cv.Rows, []string{c.Points[i], Decimal(c.Rates[i], one, 3), Decimal(c.Attainment[i], hundred, 2), Decimal(c.Goodput[i], one, 3)})
		}
		pg.Capacity = cv
	}
	for _, p := range r.Results {
		pg.Points = append(pg.Points, newPointView(p, r.Cost))
	}
	return pg
}

// summaryUnit is how a summary metric prints: as in the point tables.
func summaryUnit(m string) (*big.Rat, string, int) {
	switch {
	case strings.Contains(m, "_ns."):
		return nsToMS, "ms", 3
	case m == schema.MetricSLOAttainment:
		return hundred, "% of declared", 2
	}
	return one, schema.MetricUnit(m), ratePlaces
}

// newPointView lays out one point × repeat; cost is the run's declared
// price (nil: none), whose currency the cost rows carry.
func newPointView(p *replay.PointResult, cost *replay.CostSpec) pointView {
	pv := pointView{Point: p.Point, Repeat: Number(replay.Int(int64(p.Repeat))), DistKeys: replay.CoreDistKeys}
	for _, k := range replay.CountKeys {
		v, _ := p.Count(k)
		pv.Counts = append(pv.Counts, countRow{k, Number(v)})
	}
	add := func(m string, v replay.Value, scale *big.Rat, places int, unit string) {
		k := m
		if m == "window" {
			k = schema.MetricWindow
		}
		if why, ok := p.NullReasons[k]; ok {
			pv.Scalars = append(pv.Scalars, scalarRow{Metric: nameOf(k, "").Name, Value: NullText(why), Text: true})
			return
		}
		pv.Scalars = append(pv.Scalars, scalarRow{Metric: nameOf(k, "").Name, Value: Decimal(v, scale, places), Unit: unit})
	}
	add("window", p.Scalars[schema.MetricWindow], nsToMS, 3, "ms")
	if p.WindowSource != "" {
		pv.Scalars[len(pv.Scalars)-1].Unit += " (" + p.WindowSource + ")"
	}
	for _, k := range []string{schema.MetricRequestThroughput, schema.MetricGoodput, schema.MetricSmoothGoodput} {
		add(k, p.Scalars[k], one, ratePlaces, rateUnit(k))
	}
	for _, k := range []string{schema.MetricOutputTokenThroughput, schema.MetricTotalTokenThroughput, schema.MetricTokenGoodput} {
		add(k, p.Scalars[k], one, ratePlaces, schema.MetricUnit(k))
	}
	for _, k := range []string{replay.CostPerMillionOutputTokens, replay.CostPerMillionGoodTokens} {
		if v := p.Scalars[k]; !v.IsNull() {
			add(k, v, one, 4, declaredPriceUnit(cost))
		}
	}
	add(schema.MetricSLOAttainment, p.Scalars[schema.MetricSLOAttainment], hundred, 2, "% of declared")
	add(schema.MetricSLOAttainmentOK, p.Scalars[schema.MetricSLOAttainmentOK], hundred, 2, "% of ok")
	if why, ok := p.NullReasons["stalls"]; ok {
		pv.Scalars = append(pv.Scalars, scalarRow{Metric: "Stalls", Text: true, Value: NullText(why)})
	} else {
		pv.Scalars = append(pv.Scalars, scalarRow{Metric: "Stalls", Text: true, Value: Number(replay.Int(p.Stalls.Count)) + " gaps > " +
			Decimal(replay.Int(p.Stalls.ThresholdNS), nsToMS, 3) + " ms in " + Number(replay.Int(p.Stalls.Requests)) + " requests; max gap " +
			Decimal(p.Stalls.MaxGapNS, nsToMS, 3) + " ms"})
	}
	if m := p.MLPerf; m != nil {
		pv.Scalars = append(pv.Scalars, scalarRow{Metric: "MLPerf server check", Value: mlperfLine(m), Text: true})
	}
	for _, rw := range overloadRows(p) {
		pv.Scalars = append(pv.Scalars, scalarRow{Metric: rw.metric, Value: strings.TrimSpace(rw.value + " " + rw.unit), Text: true})
	}
	for _, k := range distOrder(p) {
		d := p.Dists[k]
		scale, unit, name := distUnit(k)
		if h, ok := distNames[k]; ok {
			name = h
		}
		row := distRow{Name: name, Unit: unit}
		if why, ok := p.NullReasons[k]; ok {
			row.Null, row.Span = NullText(why), len(replay.CoreDistKeys)
			pv.Dists = append(pv.Dists, row)
			continue
		}
		row.Cells = distCells(d, scale)
		pv.Dists = append(pv.Dists, row)
	}
	if p.Cold != nil {
		pv.Cold, pv.ColdDists = coldView(p.Cold)
	}
	if p.Sessions != nil {
		pv.Sessions, pv.SessionDists = sessionView(p.Sessions)
	}
	if t := prefixText(p.PrefixExpected); t != "" {
		pv.Prefix = []scalarRow{{Metric: "Prefix cache", Value: t, Text: true}}
	}
	for _, r := range serverRows(p) {
		pv.Server = append(pv.Server, serverRow{r.metric, r.value, r.unit})
	}
	for _, r := range energyRows(p) {
		pv.Energy = append(pv.Energy, serverRow{r.metric, r.value, r.unit})
	}
	return pv
}

// declaredPriceUnit is the unit of a cost per 1M tokens: the declared
// price's currency, and that the price is the publisher's declared one.
func declaredPriceUnit(c *replay.CostSpec) string {
	cur := "currency not stated"
	if c != nil && c.Currency != "" {
		cur = c.Currency
	}
	return cur + ", at the declared price"
}
