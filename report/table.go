package report

import (
	"encoding/csv"
	"fmt"
	"io"
	"maps"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

// Format names an output format.
type Format string

// Output formats.
const (
	FormatText     Format = "text"
	FormatJSON     Format = "json"
	FormatCSV      Format = "csv"
	FormatMarkdown Format = "markdown"
	FormatHTML     Format = "html"
)

// Write renders r in format f.
func Write(out io.Writer, f Format, r *replay.Result) error {
	switch f {
	case FormatJSON:
		return JSON(out, r)
	case FormatCSV:
		return CSV(out, r)
	case FormatMarkdown:
		return Markdown(out, r)
	case FormatHTML:
		return HTML(out, r)
	case FormatText, "":
		return Text(out, r)
	case FormatBrief:
		return Brief(out, r)
	}
	return fmt.Errorf("report: unknown format %q", f)
}

var (
	nsToMS  = big.NewRat(1, 1_000_000)
	one     = big.NewRat(1, 1)
	hundred = big.NewRat(100, 1)
)

// row is one metric line of a point and repeat.
type row struct{ metric, value, unit string }

// NullText is how a metric the records cannot determine reads in text,
// Markdown and HTML: the word null and the reason, never a number.
func NullText(reason string) string { return "null (" + reason + ")" }

// scalarRows lists the scalar lines of a point and repeat: counts, window,
// rates, costs, attainment, stalls and the MLPerf check. A metric the
// records cannot determine reads NullText; smooth goodput, when not asked
// for, is left out (a note says so once).
func scalarRows(p *replay.PointResult) []row {
	var out []row
	c := p.Counts
	count := func(k string) string {
		if why, ok := p.NullReasons["counts."+k]; ok {
			return NullText(why)
		}
		v, _ := p.Counts.Field(k)
		return strconv.FormatInt(v, 10)
	}
	declared := ""
	if c.NotSent > 0 {
		declared = fmt.Sprintf("declared %d = sent %d + not sent %d (misses in SLO attainment); ", c.Declared(), c.Sent, c.NotSent)
	}
	out = append(out, row{"counts", declared + fmt.Sprintf("sent %d = ok %d + error %d + timeout %d + cancelled %d + rejected %d; warmup %d set aside; ok without content %d; one-token %s; good %s",
		c.Sent, c.OK, c.Error, c.Timeout, c.Cancelled, c.Rejected, c.Warmup, c.OKNoContent, count("one_token"), count("good")), ""})
	add := func(k, name string, scale *big.Rat, places int, unit string) {
		if why, ok := p.NullReasons[k]; ok {
			out = append(out, row{name, NullText(why), ""})
			return
		}
		out = append(out, row{name, Decimal(p.Scalars[k], scale, places), unit})
	}
	add(schema.MetricWindow, "window", nsToMS, 3, "ms")
	if p.WindowSource != "" {
		out[len(out)-1].unit += " (" + p.WindowSource + ")"
	}
	for _, k := range []string{schema.MetricRequestThroughput, schema.MetricGoodput, schema.MetricSmoothGoodput} {
		if _, why := p.NullReasons[k]; k == schema.MetricSmoothGoodput && p.Scalars[k].IsNull() && !why {
			continue
		}
		add(k, k, one, ratePlaces, rateUnit(k))
	}
	for _, k := range []string{schema.MetricOutputTokenThroughput, schema.MetricTotalTokenThroughput, schema.MetricTokenGoodput} {
		add(k, k, one, ratePlaces, schema.MetricUnit(k))
	}
	for _, k := range []string{replay.CostPerMillionOutputTokens, replay.CostPerMillionGoodTokens} {
		if _, why := p.NullReasons[k]; why || !p.Scalars[k].IsNull() {
			add(k, k, one, 4, "per 1M tokens")
		}
	}
	if t := p.Timeline; t != nil {
		out = append(out, timelineRow(t))
	}
	add(schema.MetricSLOAttainment, schema.MetricSLOAttainment, hundred, 2, "% of declared")
	add(schema.MetricSLOAttainmentOK, schema.MetricSLOAttainmentOK, hundred, 2, "% of ok")
	if why, ok := p.NullReasons["stalls"]; ok {
		out = append(out, row{"stalls", NullText(why), ""})
	} else {
		out = append(out, row{"stalls", fmt.Sprintf("%s > %s ms in %s; max gap %s", digits.Count(p.Stalls.Count, "gap", "gaps"), Decimal(replay.Int(p.Stalls.ThresholdNS), nsToMS, 3), digits.Count(p.Stalls.Requests, "request", "requests"), Decimal(p.Stalls.MaxGapNS, nsToMS, 3)), "ms"})
	}
	if m := p.MLPerf; m != nil {
		out = append(out, row{"mlperf", mlperfLine(m), ""})
	}
	return out
}

// rateUnit is the unit of a rate scalar printed among the request rates,
// as the metrics table states it: smooth goodput is Σ benefit (output
// tokens less the lateness penalty, arXiv 2410.14257) per second, so
// tok/s; the others req/s.
func rateUnit(k string) string { return schema.MetricUnit(k) }

// mlperfLine is the MLPerf server check on one line: the verdict, the
// p99s with their unit (+∞ when the p99 is a failed query), the
// overlatency counts and queries, then the reasons.
func mlperfLine(m *replay.MLPerfCheck) string {
	v := "INVALID"
	if m.Valid {
		v = "VALID"
	}
	p99 := func(x replay.Value, failed bool) string {
		if failed {
			return "+∞ (a failed query)"
		}
		return Decimal(x, nsToMS, 3) + " ms"
	}
	s := fmt.Sprintf("%s: ttft p99 %s, tpot p99 %s, over %d/%d, queries %d", v,
		p99(m.TTFTP99NS, m.TTFTP99Failed), p99(m.TPOTP99NS, m.TPOTP99Failed), m.TTFTOver, m.TPOTOver, m.Queries)
	if m.Failed > 0 {
		s += fmt.Sprintf(" (%d failed)", m.Failed)
	}
	if len(m.Reasons) > 0 {
		s += "; " + strings.Join(m.Reasons, "; ")
	}
	return s
}

// distLine is one distribution of a point and repeat, formatted.
type distLine struct {
	name string
	// cells hold the values of replay.CoreDistKeys; nil when null is set.
	cells []string
	unit  string
	// null is the reason the records cannot determine it ("" if they can).
	null string
}

// distLines lists the distributions of a point and repeat with their
// unit (distUnit). Distributions without any sample and without a reason
// are returned by name in empty, so that a report names them once rather
// than printing a row of dashes.
func distLines(p *replay.PointResult) (lines []distLine, empty []string) {
	for _, k := range distOrder(p) {
		d := p.Dists[k]
		scale, unit, name := distUnit(k)
		if why, ok := p.NullReasons[k]; ok {
			lines = append(lines, distLine{name: name, unit: unit, null: why})
			continue
		}
		if d.N == 0 {
			empty = append(empty, name)
			continue
		}
		lines = append(lines, distLine{name: name, unit: unit, cells: distCells(d, scale)})
	}
	return lines, empty
}

// distCells formats the replay.CoreDistKeys of d: n as an integer, the
// others scaled (ns to ms, or as is) to three places.
func distCells(d replay.Dist, scale *big.Rat) []string {
	var cells []string
	for _, f := range replay.CoreDistKeys {
		v, _ := d.Field(f)
		if f == "n" {
			cells = append(cells, Number(v))
			continue
		}
		cells = append(cells, Decimal(v, scale, 3))
	}
	return cells
}

// distUnit returns how a distribution is shown: one in ns in ms (named
// without the _ns suffix); a peer's extra distribution of rates (e.g.
// GuideLLM's requests_per_second) as is, per second.
func distUnit(k string) (scale *big.Rat, unit, name string) {
	if strings.HasSuffix(k, "_ns") {
		return nsToMS, "ms", strings.TrimSuffix(k, "_ns")
	}
	if strings.HasSuffix(k, "_per_second") {
		return one, "per s", k
	}
	return one, "", k
}

// noSamples names, in one line, the distributions without any sample.
func noSamples(empty []string) string {
	return strings.Join(empty, ", ") + ": no samples in this run"
}

// rows lists every line of a point and repeat for the text report.
func rows(p *replay.PointResult) []row {
	out := scalarRows(p)
	lines, empty := distLines(p)
	var ds []row
	for _, l := range lines {
		if l.null != "" {
			ds = append(ds, row{l.name, NullText(l.null), ""})
			continue
		}
		ds = append(ds, row{l.name, distText(l.cells), l.unit})
	}
	if len(empty) > 0 {
		ds = append(ds, row{"(not shown)", noSamples(empty), ""})
	}
	return slices.Insert(out, distInsertAt(out), ds...)
}

// distInsertAt is where distributions go among the scalar rows: after
// the attainment lines, before stalls (and the MLPerf check).
func distInsertAt(out []row) int {
	for i, r := range out {
		if r.metric == "stalls" {
			return i
		}
	}
	return len(out)
}

// priceText is the manifest's price with its currency, or says that
// none was stated.
func priceText(c *replay.CostSpec) string {
	if c.Currency == "" {
		return c.Text + " (currency not stated)"
	}
	return c.Text + " " + c.Currency
}

// sloLine is the SLO a report states: each limit, the one-token rule and
// where the SLO came from.
func sloLine(r *replay.Result) string { return sloLineSwept(r, "") }

// sweepSLOLine is the SLO line of a text sweep, which prints the sweep
// alone: the swept limit reads "swept (the tables below)", since its
// value in the SLO plays no part in them.
func sweepSLOLine(r *replay.Result) string { return sloLineSwept(r, r.Sweep.Metric) }

// sloLineSwept is the SLO line with the limit named swept ("" none)
// replaced by the word swept.
func sloLineSwept(r *replay.Result, swept string) string {
	if !r.SLO.Any() && swept == "" {
		return "none" // no limit: no source to name, no one-token rule to apply
	}
	lim := func(name string, p *int64) string {
		if name == swept {
			return name + " swept (the tables below)"
		}
		if p == nil {
			return name + " -"
		}
		return name + " " + Decimal(replay.Int(*p), nsToMS, 3) + " ms"
	}
	src := r.SLO.Source
	if src == "flag" {
		src = "--slo, which replaces the manifest's SLO"
		if len(r.SLO.NotApplied) > 0 {
			src = "--slo; manifest limits " + strings.Join(r.SLO.NotApplied, ", ") + " not applied"
		}
	}
	pol := r.SLO.OneToken
	if o := r.SLO.OverriddenOneToken; o != "" {
		pol += " (" + r.Definitions + "'s own rule; the SLO states " + o + ")"
	}
	var lims []string
	for _, k := range schema.SLOKeys {
		lims = append(lims, lim(k, r.SLO.Limit(k)))
	}
	return fmt.Sprintf("%s, %s %s (from %s)", strings.Join(lims, ", "), schema.SLOOneToken, pol, src)
}

// definitionsLine names a replay's definitions and the version they were
// computed under: "benchseal (version benchseal/2026.12)".
func definitionsLine(r *replay.Result) string {
	if r.DefinitionsVersion == "" {
		return r.Definitions
	}
	line := r.Definitions + " (version " + r.DefinitionsVersion + ")"
	if d := knownDefect(r); d != "" {
		line += "; known defect of this version: " + d
	}
	return line
}

// knownDefect returns the known defect of the version r was computed
// under ("" when none is known), so that a replay under an old version
// never reads as a clean result: the same fixed text verify prints.
func knownDefect(r *replay.Result) string {
	v, err := replay.LookupVersion(r.Definitions, r.DefinitionsVersion)
	if err != nil {
		return ""
	}
	return v.Defect
}

// writeBuildText writes a build's lines (schema.Build.Lines) after
// label, nothing when b is nil.
func writeBuildText(b *strings.Builder, label string, bd *schema.Build) {
	if bd == nil {
		return
	}
	fmt.Fprintf(b, "%s: %s (%s)\n", label, strings.Join(bd.Lines(), "; "), schema.BuildUnchecked)
}

// writeHeaderText writes the lines every text report opens with: the
// definitions, boundary, SLO (under a sweep, the swept limit reads
// "swept", not the value the table replaces), plan and builds.
func writeHeaderText(b *strings.Builder, r *replay.Result) {
	slo := sloLine(r)
	if r.Sweep != nil {
		slo = sweepSLOLine(r)
	}
	fmt.Fprintf(b, "definitions: %s\nboundary: %s\nslo: %s\nplan: %s\n", definitionsLine(r), boundaryLine(r.Boundary), slo, planLine(r.Plan))
	writeBuildText(b, "client build", r.ClientBuild)
	writeBuildText(b, "importer build", r.ImporterBuild)
}

// Text writes a human-readable report.
func Text(out io.Writer, r *replay.Result) error {
	var b strings.Builder
	writeHeaderText(&b, r)
	if r.Incomplete != nil {
		fmt.Fprintf(&b, "%s\n", r.Incomplete.Line())
	}
	if r.Cost != nil {
		fmt.Fprintf(&b, "cost: %s per hour over each measurement window\n", priceText(r.Cost))
	}
	fmt.Fprintf(&b, "%s\n%s\n", MeaningsFor(r.Definitions)[schema.MetricTPOT], MeaningsFor(r.Definitions)[schema.MetricITL])
	if r.Sweep != nil {
		// A sweep is asked for on its own: the table, not the whole
		// report before it (--output json or html give both).
		writeSweepText(&b, r)
		for _, n := range r.Notes {
			fmt.Fprintf(&b, "note: %s\n", n)
		}
		_, err := io.WriteString(out, b.String())
		return err
	}
	for _, p := range r.Results {
		fmt.Fprintf(&b, "\npoint %s repeat %d\n", p.Point, p.Repeat)
		for _, rw := range slices.Concat(rows(p), coldRows(p), sessionRows(p), serverRows(p), energyRows(p), overloadRows(p)) {
			fmt.Fprintf(&b, "  %-24s %s %s\n", rw.metric, rw.value, rw.unit)
		}
	}
	writeSummaryText(&b, r)
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	_, err := io.WriteString(out, b.String())
	return err
}

func writeSummaryText(b *strings.Builder, r *replay.Result) {
	for _, ps := range r.Summary {
		fmt.Fprintf(b, "\nsummary of point %s across repeats (median [95%% CI])\n", ps.Point)
		for _, m := range replay.SummaryMetrics {
			s := ps.Metrics[m]
			scale, unit, places := summaryUnit(m)
			fmt.Fprintf(b, "  %-24s %s [%s, %s] %s n=%d", summaryName(m), Decimal(s.Median, scale, places), Decimal(s.CILow, scale, places), Decimal(s.CIHigh, scale, places), unit, s.N)
			if len(s.Warnings) > 0 {
				fmt.Fprintf(b, " (%s)", strings.Join(s.Warnings, "; "))
			}
			b.WriteByte('\n')
		}
		for _, k := range energySummaryKeys(ps) {
			s := ps.Energy[k]
			fmt.Fprintf(b, "  %-24s %s %s %s n=%d", energySummaryName(k), sigValue(s.Median), intervalText(s, sigValue), energySummaryUnit(r, ps.Point, k), s.N)
			if len(s.Warnings) > 0 {
				fmt.Fprintf(b, " (%s)", strings.Join(s.Warnings, "; "))
			}
			b.WriteByte('\n')
		}
	}
	if c := r.Capacity; c != nil {
		fmt.Fprintf(b, "\ncapacity at attainment %s (highest offered rate up to which every rate's median attainment meets it): %s (max passing rate %s)\n", Decimal(replay.Exact(c.Target), one, 3), capacityText(c), Decimal(c.MaxPassingRate, one, 3))
		if c.NonMonotone != "" {
			fmt.Fprintf(b, "  %s\n", c.NonMonotone)
		}
		for i := range c.Points {
			fmt.Fprintf(b, "  %-12s rate %s  attainment %s  goodput %s\n", c.Points[i], Decimal(c.Rates[i], one, 3), Decimal(c.Attainment[i], one, 4), Decimal(c.Goodput[i], one, 3))
		}
	}
}

func writeSweepText(b *strings.Builder, r *replay.Result) {
	sw := r.Sweep
	if sw == nil {
		return
	}
	fmt.Fprintf(b, "\nsweep of the %s limit\n%s\n", sw.Metric, sweepHeldLine(r))
	limits := make([]string, len(sw.LimitsNS))
	for i, l := range sw.LimitsNS {
		limits[i] = Decimal(replay.Int(l), nsToMS, 3)
	}
	cells := make([]string, len(sw.Rows))
	for j, row := range sw.Rows {
		cells[j] = fmt.Sprintf("%s/%d", row.Point, row.Repeat)
	}
	good := func(row replay.SweepRow, i int) string { return Decimal(row.Goodput[i], one, 3) }
	att := func(row replay.SweepRow, i int) string { return Decimal(row.Attainment[i], hundred, 2) }
	writeSweepTable(b, "goodput (req/s) by "+sw.Metric+" limit (ms) and point/repeat", limits, cells, sw.Rows, good)
	writeSweepTable(b, "SLO attainment (% of declared) by "+sw.Metric+" limit (ms) and point/repeat", limits, cells, sw.Rows, att)
	// The sweep is printed alone, so each point's load flags come with it;
	// the evidence behind them is in the full report.
	var flags []string
	cw := len("point/repeat")
	for j := range cells {
		cw = max(cw, len(cells[j]))
	}
	for _, p := range r.Results {
		if o := p.Overload; o != nil {
			flags = append(flags, fmt.Sprintf("%-*s  %-10s  %s\n", cw, fmt.Sprintf("%s/%d", p.Point, p.Repeat), flagWord(o.Overloaded, true), flagWord(o.GeneratorLimited, false)))
		}
	}
	if len(flags) > 0 {
		fmt.Fprintf(b, "\nload flags (the overload test; its evidence and the reason of each undecided or null flag: replay --detail)\n%-*s  %-10s  %s\n%s", cw, "point/repeat", "overloaded", "generator-limited", strings.Join(flags, ""))
	}
}

// sweepCSV writes a sweep, asked for on its own as in the text output,
// as one table: a row per point, repeat and swept limit (exact ns), with
// the goodput (req/s) and the SLO attainment (fraction of declared) under
// that limit, the other limits held.
func sweepCSV(cw *csv.Writer, r *replay.Result) error {
	w := csvRows{cw}
	sw := r.Sweep
	w.Write([]string{"definitions", "point", "repeat", "swept", "limit_ns", schema.MetricGoodput, schema.MetricSLOAttainment, "held"})
	held := sweepHeldLine(r)
	for _, row := range sw.Rows {
		for i, l := range sw.LimitsNS {
			w.Write([]string{r.Definitions, row.Point, strconv.Itoa(row.Repeat), sw.Metric, strconv.FormatInt(l, 10), csvNum(row.Goodput[i]), csvNum(row.Attainment[i]), held})
		}
	}
	cw.Flush()
	return cw.Error()
}

// writeSweepMarkdown writes the sweep's two tables (goodput and SLO
// attainment, a row per limit, a column per point and repeat), as the
// text output does, after the report; nothing without a sweep.
func writeSweepMarkdown(b *strings.Builder, r *replay.Result) {
	sw := r.Sweep
	if sw == nil {
		return
	}
	fmt.Fprintf(b, "\n### sweep of the %s limit\n\n%s\n", sw.Metric, mdEscape(sweepHeldLine(r)))
	for _, t := range []struct {
		title string
		val   func(replay.SweepRow, int) string
	}{
		{"goodput (req/s)", func(row replay.SweepRow, i int) string { return Decimal(row.Goodput[i], one, 3) }},
		{"SLO attainment (% of declared)", func(row replay.SweepRow, i int) string { return Decimal(row.Attainment[i], hundred, 2) }},
	} {
		fmt.Fprintf(b, "\n%s by %s limit and point/repeat\n\n| %s limit (ms) |", t.title, sw.Metric, sw.Metric)
		for _, row := range sw.Rows {
			fmt.Fprintf(b, " %s/%d |", mdEscape(row.Point), row.Repeat)
		}
		fmt.Fprintf(b, "\n|---|%s\n", strings.Repeat("---|", len(sw.Rows)))
		for i, l := range sw.LimitsNS {
			fmt.Fprintf(b, "| %s |", Decimal(replay.Int(l), nsToMS, 3))
			for _, row := range sw.Rows {
				fmt.Fprintf(b, " %s |", t.val(row, i))
			}
			b.WriteByte('\n')
		}
	}
}

// sweepWidth is the width a sweep table keeps within: a terminal's.
const sweepWidth = 100

// writeSweepTable writes one sweep table: a row per limit, a column per
// point and repeat, split into blocks of columns that fit sweepWidth.
func writeSweepTable(b *strings.Builder, title string, limits, cells []string, rows []replay.SweepRow, val func(replay.SweepRow, int) string) {
	fmt.Fprintf(b, "\n%s\n", title)
	lw := len("limit")
	for _, l := range limits {
		lw = max(lw, len(l))
	}
	width := make([]int, len(rows))
	for j, row := range rows {
		width[j] = len(cells[j])
		for i := range limits {
			width[j] = max(width[j], len(val(row, i)))
		}
	}
	for from := 0; from < len(rows); {
		to, used := from, lw
		for to < len(rows) && (to == from || used+2+width[to] <= sweepWidth) {
			used += 2 + width[to]
			to++
		}
		if from > 0 {
			b.WriteByte('\n')
		}
		fmt.Fprintf(b, "%*s", lw, "limit")
		for j := from; j < to; j++ {
			fmt.Fprintf(b, "  %*s", width[j], cells[j])
		}
		b.WriteByte('\n')
		for i, l := range limits {
			fmt.Fprintf(b, "%*s", lw, l)
			for j := from; j < to; j++ {
				fmt.Fprintf(b, "  %*s", width[j], val(rows[j], i))
			}
			b.WriteByte('\n')
		}
		from = to
	}
}

// sweepHeldLine says which limits of the SLO stay in force while one is
// swept: a request is good when it meets the swept limit and every other.
func sweepHeldLine(r *replay.Result) string {
	var held []string
	for _, k := range schema.SLOKeys {
		if p := r.SLO.Limit(k); k != r.Sweep.Metric && p != nil {
			held = append(held, k+" "+Decimal(replay.Int(*p), nsToMS, 3)+" ms")
		}
	}
	src := r.SLO.Source
	if src == "flag" {
		src = "--slo"
	}
	if len(held) == 0 {
		return "no other limit is set (one_token " + r.SLO.OneToken + ")"
	}
	return "held fixed (from " + src + "): " + strings.Join(held, ", ") + ", one_token " + r.SLO.OneToken + "; good = meets the swept limit and these"
}

// CSV writes one line per point, repeat and metric path, with the value
// as in the JSON contract (ns, per second).
func CSV(out io.Writer, r *replay.Result) error {
	cw := csv.NewWriter(out)
	w := csvRows{cw}
	if r.Sweep != nil {
		return sweepCSV(cw, r)
	}
	w.Write([]string{"definitions", "point", "repeat", "metric", "value"})
	for _, p := range r.Results {
		rep := strconv.Itoa(p.Repeat)
		emit := func(m string, v replay.Value) {
			w.Write([]string{r.Definitions, p.Point, rep, m, csvNum(v)})
		}
		for _, k := range replay.CountKeys {
			v, _ := p.Count(k)
			emit("counts."+k, v)
		}
		for _, k := range replay.ScalarKeys {
			emit(k, p.Scalars[k])
		}
		for _, k := range distOrder(p) {
			for _, f := range replay.DistKeys {
				v, _ := p.Dists[k].Field(f)
				emit(k+"."+f, v)
			}
		}
		// Text values in the value column, only for runs that need them:
		// where the window came from and why a metric is null.
		if p.WindowSource != "" {
			w.Write([]string{r.Definitions, p.Point, rep, "window_source", p.WindowSource})
		}
		for _, k := range slices.Sorted(maps.Keys(p.NullReasons)) {
			w.Write([]string{r.Definitions, p.Point, rep, "null_reason." + k, p.NullReasons[k]})
		}
		if p.Cold != nil {
			for _, kv := range coldCSV(p.Cold) {
				w.Write([]string{r.Definitions, p.Point, rep, kv[0], kv[1]})
			}
		}
		if p.PrefixExpected != nil {
			for _, kv := range prefixCSV(p.PrefixExpected) {
				w.Write([]string{r.Definitions, p.Point, rep, kv[0], kv[1]})
			}
		}
		if p.Sessions != nil {
			for _, kv := range sessionCSV(p.Sessions) {
				w.Write([]string{r.Definitions, p.Point, rep, kv[0], kv[1]})
			}
		}
		for _, kv := range serverGaugeCSV(p.Server) {
			w.Write([]string{r.Definitions, p.Point, rep, kv[0], kv[1]})
		}
		for _, kv := range energyCSV(p.Energy) {
			w.Write([]string{r.Definitions, p.Point, rep, kv[0], kv[1]})
		}
		if o := p.Overload; o != nil {
			for _, kv := range overloadCSV(o) {
				w.Write([]string{r.Definitions, p.Point, rep, kv[0], kv[1]})
			}
		}
		if t := p.Timeline; t != nil {
			for _, kv := range timelineCSV(t) {
				w.Write([]string{r.Definitions, p.Point, rep, kv[0], kv[1]})
			}
		}
	}
	for _, ps := range r.Summary {
		for _, m := range replay.SummaryMetrics {
			s := ps.Metrics[m]
			for _, f := range []struct {
				k string
				v replay.Value
			}{{"median", s.Median}, {"ci_low", s.CILow}, {"ci_high", s.CIHigh}, {"n", replay.Int(int64(s.N))}} {
				w.Write([]string{r.Definitions, ps.Point, "", "summary." + m + "." + f.k, csvNum(f.v)})
			}
		}
		for _, k := range energySummaryKeys(ps) {
			s := ps.Energy[k]
			for _, f := range []struct {
				k string
				v replay.Value
			}{{"median", s.Median}, {"ci_low", s.CILow}, {"ci_high", s.CIHigh}, {"n", replay.Int(int64(s.N))}} {
				w.Write([]string{r.Definitions, ps.Point, "", "summary.energy." + k + "." + f.k, csvNum(f.v)})
			}
		}
	}
	cw.Flush()
	return cw.Error()
}

// csvRows writes CSV rows with every cell through csvCell.
type csvRows struct{ w *csv.Writer }

// Write writes one row.
func (c csvRows) Write(row []string) {
	for i, v := range row {
		row[i] = csvCell(v)
	}
	c.w.Write(row)
}

// csvCell guards a cell against spreadsheet formula injection: a cell that
// starts with '=', '+', '-', '@', a tab or a carriage return and is not a
// number (a point name such as =HYPERLINK(...) is publisher text) gets a
// leading apostrophe, which spreadsheets read as "text, not a formula".
// Numbers, negative ones included, are written as they are.
func csvCell(v string) string {
	if v == "" {
		return v
	}
	switch v[0] {
	case '=', '+', '-', '@', '\t', '\r':
		if _, err := strconv.ParseFloat(v, 64); err == nil {
			return v
		}
		return "'" + v
	}
	return v
}

func csvNum(v replay.Value) string {
	if v.IsNull() {
		return ""
	}
	return Number(v)
}

// Markdown writes one table per point and repeat.
func Markdown(out io.Writer, r *replay.Result) error {
	var b strings.Builder
	// Every string that can come from the bundle (names, reasons, notes,
	// the price's text) goes through cell, which is mdEscape.
	cell := mdEscape
	fmt.Fprintf(&b, "**definitions:** %s  \n**boundary:** %s  \n**slo:** %s  \n**plan:** %s\n\n", cell(definitionsLine(r)), cell(boundaryLine(r.Boundary)), cell(sloLine(r)), cell(planLine(r.Plan)))
	if r.Incomplete != nil {
		fmt.Fprintf(&b, "**%s**\n\n", cell(r.Incomplete.Line()))
	}
	if r.Cost != nil {
		fmt.Fprintf(&b, "**cost:** %s per hour over each measurement window\n\n", cell(priceText(r.Cost)))
	}
	fmt.Fprintf(&b, "- %s\n- %s\n", cell(MeaningsFor(r.Definitions)[schema.MetricTPOT]), cell(MeaningsFor(r.Definitions)[schema.MetricITL]))
	for _, p := range r.Results {
		fmt.Fprintf(&b, "\n### point %s, repeat %d\n\n| metric | value | unit |\n|---|---|---|\n", cell(p.Point), p.Repeat)
		for _, rw := range scalarRows(p) {
			fmt.Fprintf(&b, "| %s | %s | %s |\n", cell(rw.metric), cell(rw.value), cell(rw.unit))
		}
		lines, empty := distLines(p)
		if len(lines) > 0 {
			fmt.Fprintf(&b, "\n| distribution | %s | unit |\n|---|%s---|\n", strings.Join(replay.CoreDistKeys, " | "), strings.Repeat("---|", len(replay.CoreDistKeys)))
			for _, l := range lines {
				if l.null != "" {
					fmt.Fprintf(&b, "| %s | %s |%s %s |\n", cell(l.name), cell(NullText(l.null)), strings.Repeat(" |", len(replay.CoreDistKeys)-1), cell(l.unit))
					continue
				}
				cells := make([]string, len(l.cells))
				for i, c := range l.cells {
					cells[i] = cell(c)
				}
				fmt.Fprintf(&b, "| %s | %s | %s |\n", cell(l.name), strings.Join(cells, " | "), cell(l.unit))
			}
		}
		if len(empty) > 0 {
			fmt.Fprintf(&b, "\n%s\n", cell(noSamples(empty)))
		}
		if cold := coldRows(p); len(cold) > 0 {
			fmt.Fprint(&b, "\n| cold (warmup requests) | value | unit |\n|---|---|---|\n")
			for _, rw := range cold {
				fmt.Fprintf(&b, "| %s | %s | %s |\n", cell(rw.metric), cell(rw.value), cell(rw.unit))
			}
		}
		if ss := sessionRows(p); len(ss) > 0 {
			fmt.Fprint(&b, "\n| sessions (multi-turn) | value | unit |\n|---|---|---|\n")
			for _, rw := range ss {
				fmt.Fprintf(&b, "| %s | %s | %s |\n", cell(rw.metric), cell(rw.value), cell(rw.unit))
			}
		}
		if srv := serverRows(p); len(srv) > 0 {
			fmt.Fprint(&b, "\n| server (engine's own metrics) | value | unit |\n|---|---|---|\n")
			for _, rw := range srv {
				fmt.Fprintf(&b, "| %s | %s | %s |\n", cell(rw.metric), cell(rw.value), cell(rw.unit))
			}
		}
		if en := energyRows(p); len(en) > 0 {
			fmt.Fprint(&b, "\n| energy (accelerator exporter) | value [bounds] | unit |\n|---|---|---|\n")
			for _, rw := range en {
				fmt.Fprintf(&b, "| %s | %s | %s |\n", cell(rw.metric), cell(rw.value), cell(rw.unit))
			}
		}
		if ov := overloadRows(p); len(ov) > 0 {
			fmt.Fprint(&b, "\n| load (overload test) | value | unit |\n|---|---|---|\n")
			for _, rw := range ov {
				fmt.Fprintf(&b, "| %s | %s | %s |\n", cell(rw.metric), cell(rw.value), cell(rw.unit))
			}
		}
	}
	for _, ps := range r.Summary {
		fmt.Fprintf(&b, "\n### summary of point %s across repeats\n\n| metric | median | 95%% CI low | 95%% CI high | unit | n | warnings |\n|---|---|---|---|---|---|---|\n", cell(ps.Point))
		for _, m := range replay.SummaryMetrics {
			s := ps.Metrics[m]
			scale, unit, places := summaryUnit(m)
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %d | %s |\n", summaryName(m), Decimal(s.Median, scale, places), Decimal(s.CILow, scale, places), Decimal(s.CIHigh, scale, places), unit, s.N, cell(strings.Join(s.Warnings, "; ")))
		}
		for _, k := range energySummaryKeys(ps) {
			s := ps.Energy[k]
			fmt.Fprintf(&b, "| %s | %s | %s | %s | %s | %d | %s |\n", energySummaryName(k), sigValue(s.Median), sigValue(s.CILow), sigValue(s.CIHigh), cell(energySummaryUnit(r, ps.Point, k)), s.N, cell(strings.Join(s.Warnings, "; ")))
		}
	}
	writeSweepMarkdown(&b, r)
	return writeMarkdownNotes(out, &b, r)
}

// writeMarkdownNotes ends a Markdown report with its notes and writes it.
func writeMarkdownNotes(out io.Writer, b *strings.Builder, r *replay.Result) error {
	for _, n := range r.Notes {
		fmt.Fprintf(b, "\n> note: %s\n", mdEscape(n))
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// planLine says whether the run was pre-registered.
func planLine(digest string) string {
	if digest == "" {
		return "none: the run was not pre-registered"
	}
	return "pre-registered plan " + digest + " (verify --plan checks the run against it)"
}

// boundaryLine says where a run's timestamps were taken, so numbers from
// different boundaries are never read as one column.
func boundaryLine(b string) string {
	switch b {
	case "client-streaming":
		return "client-streaming (times taken by the client as streamed chunks arrived)"
	case "server-timer":
		return "server-timer (times reported by the server's own timer; no network or client queueing)"
	case "non-streaming":
		return "non-streaming (whole responses: e2e only; no ttft, tpot or itl)"
	case "":
		return "not stated"
	}
	return b
}

// summaryName is a summary metric's name as the text and Markdown reports
// print it: a time percentile, stored in ns, is named in the ms it is
// printed in ("ttft_ms.p50").
func summaryName(metric string) string { return strings.Replace(metric, "_ns.", "_ms.", 1) }
