package report

import (
	"encoding/json"
	"errors"
	"io"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

// Meanings say what tpot and itl mean under benchseal's definitions,
// wherever they are printed.
var Meanings = map[string]string{
	schema.MetricTPOT: "tpot = (last − first content token) ÷ (output tokens − 1), per request; NVIDIA/AIPerf call this ITL",
	schema.MetricITL:  "itl = gaps between content chunks, pooled, as vLLM/SGLang mean it",
}

// MeaningsFor says what tpot and itl mean under the named definitions:
// the peer tool's own formula where it has one (replay's
// Definition.Meanings), benchseal's otherwise.
func MeaningsFor(definitions string) map[string]string {
	if d, err := replay.LookupDefinition(definitions); err == nil && d.Meanings() != nil {
		return d.Meanings()
	}
	return Meanings
}

// jw writes indented JSON with keys in a fixed order.
type jw struct {
	b     strings.Builder
	depth int
	first []bool
}

// flush writes the document to out after checking that it parses: the
// writer is hand-rolled, so a missing separator would otherwise reach the
// user as text every JSON reader refuses, with exit 0.
func (w *jw) flush(out io.Writer) error {
	w.b.WriteByte('\n')
	if !json.Valid([]byte(w.b.String())) {
		return errors.New("report: the JSON writer produced a document that does not parse (a benchseal bug; the other output formats are unaffected)")
	}
	_, err := io.WriteString(out, w.b.String())
	return err
}

func (w *jw) indent() {
	w.b.WriteByte('\n')
	w.b.WriteString(strings.Repeat("  ", w.depth))
}

func (w *jw) sep() {
	if n := len(w.first); n > 0 {
		if !w.first[n-1] {
			w.b.WriteByte(',')
		}
		w.first[n-1] = false
		w.indent()
	}
}

func (w *jw) open(c byte) { w.b.WriteByte(c); w.depth++; w.first = append(w.first, true) }
func (w *jw) close(c byte) {
	empty := w.first[len(w.first)-1]
	w.first = w.first[:len(w.first)-1]
	w.depth--
	if !empty {
		w.indent()
	}
	w.b.WriteByte(c)
}
func (w *jw) key(k string)     { w.sep(); w.b.WriteString(strconv.Quote(k)); w.b.WriteString(": ") }
func (w *jw) raw(s string)     { w.b.WriteString(s) }
func (w *jw) str(s string)     { w.b.WriteString(quote(s)) }
func (w *jw) kv(k, raw string) { w.key(k); w.raw(raw) }
func (w *jw) ks(k, s string)   { w.key(k); w.str(s) }
func (w *jw) elem()            { w.sep() }

// quote is a JSON string literal (ASCII-safe, deterministic).
func quote(s string) string {
	var b strings.Builder
	b.WriteByte('"')
	for _, r := range s {
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r < 0x20:
			b.WriteString(`\u00`)
			b.WriteString(strconv.FormatInt(int64(r)>>4, 16))
			b.WriteString(strconv.FormatInt(int64(r)&15, 16))
		default:
			b.WriteRune(r)
		}
	}
	b.WriteByte('"')
	return b.String()
}

func intOrNull(p *int64) string {
	if p == nil {
		return "null"
	}
	return strconv.FormatInt(*p, 10)
}

func (w *jw) dist(d replay.Dist) {
	w.open('{')
	for _, k := range replay.DistKeys {
		v, _ := d.Field(k)
		w.kv(k, Number(v))
	}
	w.close('}')
}

// JSON writes the replay JSON contract (schema "benchseal/replay/v1"):
// the run's header, one object per point and repeat, the across-repeat
// summary, the sweep and the capacity, then the notes.
func JSON(out io.Writer, r *replay.Result) error {
	w := &jw{}
	w.open('{')
	w.header(r)
	w.key("results")
	w.open('[')
	for _, p := range r.Results {
		w.elem()
		w.result(p)
	}
	w.close(']')
	w.key("summary")
	w.open('[')
	for _, ps := range r.Summary {
		w.elem()
		w.summary(ps)
	}
	w.close(']')
	if sw := r.Sweep; sw != nil {
		w.sweep(sw)
	}
	w.capacity(r.Capacity)
	w.key("notes")
	strList(w, r.Notes)
	w.close('}')
	return w.flush(out)
}

// header writes what the run's results are computed under: schema,
// definitions, boundary, completeness, cost, SLO, smooth goodput's
// parameters, the meanings of tpot and itl, and the aliases.
func (w *jw) header(r *replay.Result) {
	w.ks("schema", r.Schema)
	w.ks("definitions", r.Definitions)
	w.ks("definitions_version", r.DefinitionsVersion)
	if d := knownDefect(r); d != "" {
		w.ks("definitions_known_defect", d)
	}
	w.ks("boundary", r.Boundary)
	if r.Incomplete != nil {
		w.key("incomplete")
		w.open('{')
		w.ks("reason", r.Incomplete.Reason)
		w.key("missing")
		w.raw(strconv.FormatInt(r.Incomplete.Missing, 10))
		w.close('}')
	}
	w.key("cost")
	if r.Cost == nil {
		w.raw("null")
	} else {
		w.open('{')
		w.ks("currency", r.Cost.Currency)
		w.ks("price_per_hour", r.Cost.Text)
		w.close('}')
	}
	w.key("slo")
	w.open('{')
	w.kv(schema.MetricTTFT, intOrNull(r.SLO.TTFTNS))
	w.kv(schema.MetricE2E, intOrNull(r.SLO.E2ENS))
	w.kv(schema.MetricTPOT, intOrNull(r.SLO.TPOTNS))
	w.ks("one_token", r.SLO.OneToken)
	w.ks("source", r.SLO.Source)
	w.close('}')
	w.key("smooth")
	if r.Smooth == nil {
		w.raw("null")
	} else {
		w.open('{')
		w.kv("alpha", Number(replay.Exact(r.Smooth.Alpha)))
		w.kv("v_ns", strconv.FormatInt(r.Smooth.VNS, 10))
		w.ks("f", r.Smooth.F)
		w.kv("l_ns", strconv.FormatInt(r.Smooth.LNS, 10))
		w.close('}')
	}
	w.key("meanings")
	w.open('{')
	w.ks(schema.MetricITL, MeaningsFor(r.Definitions)[schema.MetricITL])
	w.ks(schema.MetricTPOT, MeaningsFor(r.Definitions)[schema.MetricTPOT])
	w.close('}')
	w.key("aliases")
	w.stringMap(r.Aliases)
}

// result writes one point and repeat.
func (w *jw) result(p *replay.PointResult) {
	w.open('{')
	w.ks("point", p.Point)
	w.kv("repeat", strconv.Itoa(p.Repeat))
	w.kv(schema.MetricWindow, Number(p.Scalars[schema.MetricWindow]))
	w.key("counts")
	w.open('{')
	for _, k := range replay.CountKeys {
		v, _ := p.Count(k)
		w.kv(k, Number(v))
	}
	w.close('}')
	for _, k := range replay.ScalarKeys[1:] {
		w.kv(k, Number(p.Scalars[k]))
	}
	for _, k := range distOrder(p) {
		w.key(k)
		w.dist(p.Dists[k])
	}
	w.key("stalls")
	w.open('{')
	w.kv("threshold_ns", strconv.FormatInt(p.Stalls.ThresholdNS, 10))
	if _, null := p.NullReasons["stalls"]; null {
		w.kv("count", "null")
		w.kv("requests", "null")
	} else {
		w.kv("count", strconv.FormatInt(p.Stalls.Count, 10))
		w.kv("requests", strconv.FormatInt(p.Stalls.Requests, 10))
	}
	w.kv("max_gap_ns", Number(p.Stalls.MaxGapNS))
	w.close('}')
	if p.WindowSource != "" {
		w.ks("window_source", p.WindowSource)
	}
	if len(p.NullReasons) > 0 {
		w.key("null_reasons")
		w.open('{')
		for _, k := range slices.Sorted(maps.Keys(p.NullReasons)) {
			w.ks(k, p.NullReasons[k])
		}
		w.close('}')
	}
	if c := p.Cold; c != nil {
		w.key("cold")
		w.cold(c)
	}
	if s := p.Sessions; s != nil {
		w.key("sessions")
		w.sessions(s)
	}
	if pe := p.PrefixExpected; pe != nil {
		w.key("prefix_expected")
		w.prefixExpected(pe)
	}
	if sc := p.Server; sc != nil {
		w.kv("server", serverJSON(sc))
	}
	if ec := p.Energy; ec != nil {
		w.kv("energy", energyJSON(ec))
	}
	if o := p.Overload; o != nil {
		w.key("overload")
		w.overload(o)
	}
	if t := p.Timeline; t != nil {
		w.key("timeline")
		w.open('{')
		w.kv("shards", strconv.Itoa(t.Shards))
		w.kv("uncertainty_ns", Number(t.UncertaintyNS))
		w.kv("anchor_ns", Number(t.AnchorNS))
		w.kv("drift_ns", Number(t.DriftNS))
		w.ks("clocks", ClocksDeclared)
		for _, iv := range timelineIntervals(t) {
			w.key(iv.key)
			w.raw("[" + Number(iv.v.Low) + ", " + Number(iv.v.High) + "]")
		}
		if t.Reason != "" {
			w.ks("reason", t.Reason)
		}
		w.close('}')
	}
	if c := p.MLPerf; c != nil {
		w.key("mlperf")
		w.open('{')
		w.kv("valid", strconv.FormatBool(c.Valid))
		for _, k := range []string{"ttft_p99_ns", "tpot_p99_ns", "ttft_over", "tpot_over", "ttft_min_queries", "tpot_min_queries", "queries", "duration_ns"} {
			v, _ := c.Field(k)
			w.kv(k, Number(v))
		}
		w.key("reasons")
		strList(w, c.Reasons)
		w.close('}')
	}
	w.close('}')
}

// summary writes one point's across-repeat summary.
func (w *jw) summary(ps replay.PointSummary) {
	w.open('{')
	w.ks("point", ps.Point)
	w.key("metrics")
	w.summaryStats(replay.SummaryMetrics, ps.Metrics)
	if ps.Energy != nil {
		w.key("energy")
		w.summaryStats(replay.EnergySummaryKeys, ps.Energy)
	}
	w.close('}')
}

// summaryStats writes the summaries of keys as an object.
func (w *jw) summaryStats(keys []string, of map[string]replay.Summary) {
	w.open('{')
	for _, m := range keys {
		s := of[m]
		w.key(m)
		w.open('{')
		w.kv("median", Number(s.Median))
		w.kv("ci_low", Number(s.CILow))
		w.kv("ci_high", Number(s.CIHigh))
		w.kv("confidence", Number(s.Confidence))
		w.kv("n", strconv.Itoa(s.N))
		w.key("warnings")
		strList(w, s.Warnings)
		w.close('}')
	}
	w.close('}')
}

// sweep writes goodput and attainment against the swept limit.
func (w *jw) sweep(sw *replay.Sweep) {
	w.key("sweep")
	w.open('{')
	w.ks("metric", sw.Metric)
	w.key("limits_ns")
	w.open('[')
	for _, l := range sw.LimitsNS {
		w.elem()
		w.raw(strconv.FormatInt(l, 10))
	}
	w.close(']')
	w.key("rows")
	w.open('[')
	for _, row := range sw.Rows {
		w.elem()
		w.open('{')
		w.ks("point", row.Point)
		w.kv("repeat", strconv.Itoa(row.Repeat))
		w.key(schema.MetricGoodput)
		valList(w, row.Goodput)
		w.key(schema.MetricSLOAttainment)
		valList(w, row.Attainment)
		w.close('}')
	}
	w.close(']')
	w.close('}')
}

// capacity writes the capacity of a rate sweep, or null.
func (w *jw) capacity(c *replay.Capacity) {
	w.key("capacity")
	if c == nil {
		w.raw("null")
	} else {
		w.open('{')
		w.kv("attainment_target", Number(replay.Exact(c.Target)))
		w.kv("rate", Number(c.Rate))
		if c.Rate.IsNull() {
			w.ks("null_reason", c.NullReason)
		}
		w.kv("max_passing_rate", Number(c.MaxPassingRate))
		if c.NonMonotone != "" {
			w.ks("non_monotone", c.NonMonotone)
		}
		w.key("curve")
		w.open('[')
		for i := range c.Points {
			w.elem()
			w.open('{')
			w.ks("point", c.Points[i])
			w.kv("rate", Number(c.Rates[i]))
			w.kv(schema.MetricSLOAttainment, Number(c.Attainment[i]))
			w.kv(schema.MetricGoodput, Number(c.Goodput[i]))
			w.close('}')
		}
		w.close(']')
		w.close('}')
	}
}

// stringMap writes m as an object with sorted keys.
func (w *jw) stringMap(m map[string]string) {
	w.open('{')
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		w.ks(k, m[k])
	}
	w.close('}')
}

func strList(w *jw, ss []string) {
	w.open('[')
	for _, s := range ss {
		w.elem()
		w.str(s)
	}
	w.close(']')
}

func valList(w *jw, vs []replay.Value) {
	w.open('[')
	for _, v := range vs {
		w.elem()
		w.raw(Number(v))
	}
	w.close(']')
}

// distOrder lists a result's distributions: DistNames, then extras by name.
func distOrder(p *replay.PointResult) []string {
	out := slices.Clone(replay.DistNames)
	var extra []string
	for k := range p.Dists {
		if !slices.Contains(out, k) {
			extra = append(extra, k)
		}
	}
	slices.Sort(extra)
	return append(out, extra...)
}
