package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

// FormatBrief is the default text of replay: the run's header lines, one
// table row per point and repeat (and per point, the median across its
// repeats with the bounds of its interval) holding the headline metrics,
// a legend, and the notes. Text is the full detail (replay --detail).
const FormatBrief Format = "brief"

// briefColumn is one metric column of the brief table: its heading, unit,
// the metric path in a point's result (a scalar name, or a distribution
// key and field) and its summary metric across repeats. Each is printed
// with the scale and places the detail report prints it with.
type briefColumn struct {
	head, unit string
	// dist and field name a distribution's percentile ("" dist: the
	// scalar named summary).
	dist, field string
	summary     string
	// slo marks a column that exists only under an SLO.
	slo bool
	// energy names one of replay.EnergySummaryKeys: a column of the
	// point's accelerator energy (only for a run with accelerator
	// scrapes), printed as the detail report prints it (five significant
	// digits).
	energy string
}

// briefEnergyColumn is the brief table's energy column: J per good token.
var briefEnergyColumn = briefColumn{head: "J/good tok", unit: "J", energy: "j_per_good_token", slo: true}

// briefColumns are the headline metrics, in table order.
var briefColumns = []briefColumn{
	{head: schema.MetricGoodput, unit: "req/s", summary: schema.MetricGoodput, slo: true},
	{head: "attain", unit: "%", summary: schema.MetricSLOAttainment, slo: true},
	{head: "req/s", unit: "req/s", summary: schema.MetricRequestThroughput},
	{head: "ttft p50", unit: "ms", dist: schema.MetricTTFT, field: "p50", summary: schema.MetricPath(schema.MetricTTFT, "p50")},
	{head: "ttft p99", unit: "ms", dist: schema.MetricTTFT, field: "p99", summary: schema.MetricPath(schema.MetricTTFT, "p99")},
	{head: "e2e p99", unit: "ms", dist: schema.MetricE2E, field: "p99", summary: schema.MetricPath(schema.MetricE2E, "p99")},
	{head: "tpot p50", unit: "ms", dist: schema.MetricTPOT, field: "p50", summary: schema.MetricPath(schema.MetricTPOT, "p50")},
}

// briefTable collects the rows of the brief table with what its legend
// must explain: the reasons of null cells and the warnings of medians.
type briefTable struct {
	cols     []briefColumn
	rows     [][]string
	nulls    [][2]string // column heading, reason; first-seen order
	warnings []string    // numbered footnotes of the medians
	flags    map[string]bool
	ci       bool // some median has a bound
}

// cell formats v as the detail report does (summaryUnit gives the scale
// and places of every headline metric) or "null", noting why.
func (t *briefTable) cell(c briefColumn, v replay.Value, why string) string {
	if v.IsNull() {
		if why != "" && !slices.Contains(t.nulls, [2]string{c.head, why}) {
			t.nulls = append(t.nulls, [2]string{c.head, why})
		}
		return "null"
	}
	if c.energy != "" {
		return sigValue(v)
	}
	scale, _, places := summaryUnit(c.summary)
	return Decimal(v, scale, places)
}

// pointRow is the row of one point and repeat.
func (t *briefTable) pointRow(p *replay.PointResult) []string {
	row := []string{p.Point, fmt.Sprint(p.Repeat)}
	for _, c := range t.cols {
		var v replay.Value
		path := c.summary
		if c.energy != "" {
			row = append(row, t.cell(c, replay.EnergyValue(p.Energy, c.energy), energyReason(p.Energy)))
			continue
		}
		if c.dist != "" {
			v, _ = p.Dists[c.dist].Field(c.field)
			path = c.dist + "." + c.field
		} else {
			v = p.Scalars[c.summary]
		}
		why, _ := p.NullReason(path)
		row = append(row, t.cell(c, v, why))
	}
	return append(row, t.pointFlags(p))
}

// pointFlags names the flags of a point and repeat: the overload test's
// (the detail report's rows hold their evidence) and declared requests
// without a record.
func (t *briefTable) pointFlags(p *replay.PointResult) string {
	var fl []string
	add := func(name string) {
		fl = append(fl, name)
		t.flags[name] = true
	}
	if p.Counts.NotSent > 0 {
		add("incomplete")
	}
	if o := p.Overload; o != nil {
		switch {
		case o.Overloaded.Set == nil:
			add(overloadUndecided)
		case *o.Overloaded.Set:
			add("OVERLOADED")
		}
		if o.GeneratorLimited.True() {
			add("GEN-LIMITED")
		}
		if o.FastFailures.True() {
			add("FAST-FAIL")
		}
	}
	return strings.Join(fl, " ")
}

// summaryRows are a point's median row and, when some bound exists, the
// rows of its interval's bounds. The median row carries flags, every flag
// of the point's repeats: a median over an overloaded repeat is no
// cleaner than the repeat.
func (t *briefTable) summaryRows(ps replay.PointSummary, flags []string) [][]string {
	med := []string{ps.Point, "median"}
	low := []string{"", "ci low"}
	high := []string{"", "ci high"}
	var marks []string
	bounded := false
	for _, c := range t.cols {
		s := ps.Metrics[c.summary]
		if c.energy != "" {
			s = ps.Energy[c.energy]
		}
		if s.Median.IsNull() {
			med = append(med, "null")
		} else {
			med = append(med, t.cell(c, s.Median, ""))
		}
		for _, w := range s.Warnings {
			i := slices.Index(t.warnings, w)
			if i < 0 {
				t.warnings = append(t.warnings, w)
				i = len(t.warnings) - 1
			}
			if m := fmt.Sprintf("(%d)", i+1); !slices.Contains(marks, m) {
				marks = append(marks, m)
			}
		}
		if !s.CILow.IsNull() || !s.CIHigh.IsNull() {
			bounded = true
		}
		if c.energy != "" {
			low, high = append(low, sigValue(s.CILow)), append(high, sigValue(s.CIHigh))
			continue
		}
		scale, _, places := summaryUnit(c.summary)
		low = append(low, Decimal(s.CILow, scale, places))
		high = append(high, Decimal(s.CIHigh, scale, places))
	}
	med = append(med, strings.TrimSpace(strings.Join(flags, " ")+" "+strings.Join(marks, "")))
	if !bounded {
		return [][]string{med}
	}
	t.ci = true
	return [][]string{med, append(low, ""), append(high, "")}
}

// Brief writes the default text of replay (FormatBrief). Every number in
// it is printed as Text prints the same number.
func Brief(out io.Writer, r *replay.Result) error {
	var b strings.Builder
	writeHeaderText(&b, r)
	if r.Incomplete != nil {
		fmt.Fprintf(&b, "%s\n", r.Incomplete.Line())
	}
	if r.Cost != nil {
		fmt.Fprintf(&b, "cost: %s per hour over each measurement window (cost columns: --detail)\n", priceText(r.Cost))
	}
	if r.Sweep != nil {
		writeSweepText(&b, r)
		writeNotes(&b, r)
		_, err := io.WriteString(out, b.String())
		return err
	}
	t := &briefTable{flags: map[string]bool{}}
	for _, c := range briefColumns {
		if !c.slo || r.SLO.Any() {
			t.cols = append(t.cols, c)
		}
	}
	if r.SLO.Any() && slices.ContainsFunc(r.Results, func(p *replay.PointResult) bool { return p.Energy != nil }) {
		t.cols = append(t.cols, briefEnergyColumn)
	}
	repeats := map[string]int{}
	for _, p := range r.Results {
		repeats[p.Point]++
	}
	var pointFlags []string // the flags of the point's repeats so far
	for i, p := range r.Results {
		row := t.pointRow(p)
		t.rows = append(t.rows, row)
		for _, f := range strings.Fields(row[len(row)-1]) {
			if !slices.Contains(pointFlags, f) {
				pointFlags = append(pointFlags, f)
			}
		}
		last := i+1 == len(r.Results) || r.Results[i+1].Point != p.Point
		if !last {
			continue
		}
		flags := pointFlags
		pointFlags = nil
		if repeats[p.Point] < 2 {
			continue
		}
		for _, ps := range r.Summary {
			if ps.Point == p.Point {
				t.rows = append(t.rows, t.summaryRows(ps, flags)...)
			}
		}
	}
	if len(r.Results) == 0 {
		b.WriteString("\nno point has a measured record\n")
	} else {
		b.WriteByte('\n')
		t.write(&b)
		t.writeLegend(&b, r)
	}
	writeBriefExtras(&b, r)
	writeNotes(&b, r)
	_, err := io.WriteString(out, b.String())
	return err
}

// write lays the table out: the point left-aligned, numbers right-aligned
// under a heading and a unit line, two spaces apart, the flags last.
func (t *briefTable) write(b *strings.Builder) {
	head := []string{"point", "repeat"}
	units := []string{"", ""}
	for _, c := range t.cols {
		head = append(head, c.head)
		units = append(units, c.unit)
	}
	head = append(head, "flags")
	units = append(units, "")
	all := append([][]string{head, units}, t.rows...)
	width := make([]int, len(head))
	for _, row := range all {
		for i, c := range row {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	for _, row := range all {
		var line strings.Builder
		for i, c := range row {
			pad := strings.Repeat(" ", width[i]-len([]rune(c)))
			switch {
			case i == 0:
				line.WriteString(c + pad)
			case i == len(row)-1:
				if c != "" {
					line.WriteString("  " + c)
				}
			default:
				line.WriteString("  " + pad + c)
			}
		}
		b.WriteString(strings.TrimRight(line.String(), " ") + "\n")
	}
}

// overloadUndecided names, among a point's flags, an overloaded flag the
// overload test could not decide (Undecided).
const overloadUndecided = "overload " + Undecided

// briefFlagMeanings explain the flags column, in the order printed.
var briefFlagMeanings = []struct{ flag, meaning string }{
	{"OVERLOADED", "the overload test found the server falling behind the arrivals"},
	{overloadUndecided, "the overload test could not decide"},
	{"GEN-LIMITED", "the load generator did not keep its schedule"},
	{"FAST-FAIL", "many requests failed at once"},
	{"incomplete", "declared requests have no record (counted as not sent and as SLO misses)"},
}

// writeLegend says what the columns, the median rows, the footnotes and
// the flags mean, and where the rest is.
func (t *briefTable) writeLegend(b *strings.Builder, r *replay.Result) {
	b.WriteString("\n")
	if r.SLO.Any() {
		b.WriteString("goodput: requests meeting the SLO per second; attain: SLO attainment, % of declared requests\n")
	}
	b.WriteString("req/s: request throughput; ttft, e2e, tpot: percentiles of the point and repeat, in ms\n")
	if slices.Contains(t.cols, briefEnergyColumn) {
		fmt.Fprintf(b, "J/good tok: accelerator energy per output token of the requests meeting the SLO, in J (%s; bounds: --detail)\n", energyBoundary(r))
	}
	fmt.Fprintf(b, "%s\n", MeaningsFor(r.Definitions)[schema.MetricTPOT])
	if len(r.Summary) > 0 && slices.ContainsFunc(t.rows, func(row []string) bool { return row[1] == "median" }) {
		b.WriteString("median: across the point's repeats (mean of the middle two for an even count); its flags are its repeats'\n")
		if t.ci {
			b.WriteString("ci low, ci high: the median's 95% interval; -: a side these repeats do not bound (one bound: one-sided)\n")
		}
	}
	writeWindowSources(b, r)
	for i, w := range t.warnings {
		fmt.Fprintf(b, "(%d) %s\n", i+1, w)
	}
	for _, n := range t.nulls {
		fmt.Fprintf(b, "null %s: %s\n", n[0], n[1])
	}
	for _, f := range briefFlagMeanings {
		if t.flags[f.flag] {
			fmt.Fprintf(b, "%s: %s (the evidence: --detail)\n", f.flag, f.meaning)
		}
	}
	b.WriteString("every metric, percentile and count of each point and repeat: --detail\n")
}

// writeWindowSources says, beside the rates, which window they divide
// by when it is not the measured one (an import's stored tool window):
// the qualification the detail prints on its window line.
func writeWindowSources(b *strings.Builder, r *replay.Result) {
	var sources []string
	cells := map[string][]string{}
	for _, p := range r.Results {
		if p.WindowSource == "" {
			continue
		}
		if _, ok := cells[p.WindowSource]; !ok {
			sources = append(sources, p.WindowSource)
		}
		cells[p.WindowSource] = append(cells[p.WindowSource], fmt.Sprintf("%s/%d", p.Point, p.Repeat))
	}
	for _, src := range sources {
		which := strings.Join(cells[src], ", ")
		if len(cells[src]) == len(r.Results) {
			which = "every row"
		}
		fmt.Fprintf(b, "rates of %s: over %s\n", which, src)
	}
}

// capacityText is a rate sweep's capacity, or null with its reason.
func capacityText(c *replay.Capacity) string {
	if c.Rate.IsNull() {
		return "null (" + c.NullReason + ")"
	}
	return Decimal(c.Rate, one, 3) + " req/s"
}

// writeBriefExtras writes what the table leaves out and the user asked
// for: the capacity line and each MLPerf check.
func writeBriefExtras(b *strings.Builder, r *replay.Result) {
	if c := r.Capacity; c != nil {
		fmt.Fprintf(b, "capacity at attainment %s (highest offered rate up to which every rate's median attainment meets it): %s (max passing rate %s)\n", Decimal(replay.Exact(c.Target), one, 3), capacityText(c), Decimal(c.MaxPassingRate, one, 3))
		if c.NonMonotone != "" {
			fmt.Fprintf(b, "  %s\n", c.NonMonotone)
		}
	}
	for _, p := range r.Results {
		if m := p.MLPerf; m != nil {
			fmt.Fprintf(b, "mlperf %s/%d: %s\n", p.Point, p.Repeat, mlperfLine(m))
		}
	}
	for _, p := range r.Results {
		if s := p.Sessions; s != nil {
			fmt.Fprintf(b, "sessions %s/%d: %s\n", p.Point, p.Repeat, sessionBrief(s))
		}
		if t := prefixText(p.PrefixExpected); t != "" {
			fmt.Fprintf(b, "prefix cache %s/%d: %s\n", p.Point, p.Repeat, t)
		}
	}
}

// writeNotes writes the result's notes, one a line.
func writeNotes(b *strings.Builder, r *replay.Result) {
	for _, n := range r.Notes {
		fmt.Fprintf(b, "note: %s\n", n)
	}
}

// energyReason is why a point has no energy number ("" when the column
// holds one, or says its own reason per number).
func energyReason(c *replay.EnergyColumn) string {
	switch {
	case c == nil:
		return "the point has no accelerator scrapes"
	case c.Reason != "":
		return c.Reason
	}
	return c.PerGoodToken.Reason
}

// energyBoundary is the boundary of the run's first energy column.
func energyBoundary(r *replay.Result) string {
	for _, p := range r.Results {
		if p.Energy != nil && p.Energy.Boundary != "" {
			return p.Energy.Boundary
		}
	}
	return "boundary not known: no point measured energy"
}
