package report

import (
	"io"
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

// distJSON is a distribution, its keys in replay.DistKeys order.
func distJSON(d replay.Dist) object {
	o := make(object, 0, len(replay.DistKeys))
	for _, k := range replay.DistKeys {
		v, _ := d.Field(k)
		o = append(o, member{k, num(Number(v))})
	}
	return o
}

// replayDoc is the replay JSON contract (schema "benchseal/replay/v1").
type replayDoc struct {
	Schema             text            `json:"schema"`
	Definitions        text            `json:"definitions"`
	DefinitionsVersion text            `json:"definitions_version"`
	KnownDefect        text            `json:"definitions_known_defect,omitempty"`
	Boundary           text            `json:"boundary"`
	Incomplete         *incompleteJSON `json:"incomplete,omitempty"`
	Cost               *costJSON       `json:"cost"`
	SLO                sloJSON         `json:"slo"`
	Smooth             *smoothJSON     `json:"smooth"`
	Meanings           meaningsJSON    `json:"meanings"`
	Aliases            object          `json:"aliases"`
	Results            []object        `json:"results"`
	Summary            []summaryJSON   `json:"summary"`
	Sweep              *sweepJSON      `json:"sweep,omitempty"`
	Capacity           *capacityJSON   `json:"capacity"`
	Notes              []text          `json:"notes"`
}

type incompleteJSON struct {
	Reason  text `json:"reason"`
	Missing num  `json:"missing"`
}

type costJSON struct {
	Currency     text `json:"currency"`
	PricePerHour text `json:"price_per_hour"`
}

type sloJSON struct {
	TTFT     num  `json:"ttft_ns"`
	E2E      num  `json:"e2e_ns"`
	TPOT     num  `json:"tpot_ns"`
	OneToken text `json:"one_token"`
	Source   text `json:"source"`
}

func newSLOJSON(s replay.SLOSpec) sloJSON {
	return sloJSON{intOrNull(s.TTFTNS), intOrNull(s.E2ENS), intOrNull(s.TPOTNS), text(s.OneToken), text(s.Source)}
}

type smoothJSON struct {
	Alpha num  `json:"alpha"`
	VNS   num  `json:"v_ns"`
	F     text `json:"f"`
	LNS   num  `json:"l_ns"`
}

type meaningsJSON struct {
	ITL  text `json:"itl_ns"`
	TPOT text `json:"tpot_ns"`
}

// JSON writes the replay JSON contract (schema "benchseal/replay/v1"):
// the run's header, one object per point and repeat, the across-repeat
// summary, the sweep and the capacity, then the notes.
func JSON(out io.Writer, r *replay.Result) error {
	meanings := MeaningsFor(r.Definitions)
	doc := replayDoc{Schema: text(r.Schema), Definitions: text(r.Definitions), DefinitionsVersion: text(r.DefinitionsVersion),
		KnownDefect: text(knownDefect(r)), Boundary: text(r.Boundary), SLO: newSLOJSON(r.SLO),
		Meanings: meaningsJSON{text(meanings[schema.MetricITL]), text(meanings[schema.MetricTPOT])},
		Aliases:  sortedObject(r.Aliases), Results: make([]object, 0, len(r.Results)), Summary: make([]summaryJSON, 0, len(r.Summary)),
		Sweep: newSweepJSON(r.Sweep), Capacity: newCapacityJSON(r.Capacity), Notes: texts(r.Notes)}
	if in := r.Incomplete; in != nil {
		doc.Incomplete = &incompleteJSON{text(in.Reason), intNum(in.Missing)}
	}
	if c := r.Cost; c != nil {
		doc.Cost = &costJSON{text(c.Currency), text(c.Text)}
	}
	if sm := r.Smooth; sm != nil {
		doc.Smooth = &smoothJSON{num(Number(replay.Exact(sm.Alpha))), intNum(sm.VNS), text(sm.F), intNum(sm.LNS)}
	}
	var sp splices
	for _, p := range r.Results {
		doc.Results = append(doc.Results, resultJSON(p, &sp))
	}
	for _, ps := range r.Summary {
		doc.Summary = append(doc.Summary, newSummaryJSON(ps))
	}
	return writeJSON(out, doc, sp)
}

type stallsJSON struct {
	ThresholdNS num `json:"threshold_ns"`
	Count       num `json:"count"`
	Requests    num `json:"requests"`
	MaxGapNS    num `json:"max_gap_ns"`
}

// resultJSON is one point and repeat: an object, since its metrics are
// the definitions' (replay.ScalarKeys, distOrder); its inline values go
// to sp.
func resultJSON(p *replay.PointResult, sp *splices) object {
	o := object{{"point", text(p.Point)}, {"repeat", num(strconv.Itoa(p.Repeat))}, {schema.MetricWindow, num(Number(p.Scalars[schema.MetricWindow]))}}
	counts := make(object, 0, len(replay.CountKeys))
	for _, k := range replay.CountKeys {
		v, _ := p.Count(k)
		counts = append(counts, member{k, num(Number(v))})
	}
	o = append(o, member{"counts", counts})
	for _, k := range replay.ScalarKeys[1:] {
		o = append(o, member{k, num(Number(p.Scalars[k]))})
	}
	for _, k := range distOrder(p) {
		o = append(o, member{k, distJSON(p.Dists[k])})
	}
	st := stallsJSON{intNum(p.Stalls.ThresholdNS), "null", "null", num(Number(p.Stalls.MaxGapNS))}
	if _, null := p.NullReasons["stalls"]; !null {
		st.Count, st.Requests = intNum(p.Stalls.Count), intNum(p.Stalls.Requests)
	}
	o = append(o, member{"stalls", st})
	if p.WindowSource != "" {
		o = append(o, member{"window_source", text(p.WindowSource)})
	}
	if len(p.NullReasons) > 0 {
		o = append(o, member{"null_reasons", sortedObject(p.NullReasons)})
	}
	return append(o, optionalColumns(p, sp)...)
}

// optionalColumns are a result's columns present only when the run
// measured them, in the contract's order.
func optionalColumns(p *replay.PointResult, sp *splices) object {
	var o object
	if c := p.Cold; c != nil {
		o = append(o, member{"cold", coldJSON(c)})
	}
	if s := p.Sessions; s != nil {
		o = append(o, member{"sessions", newSessionsJSON(s)})
	}
	if pe := p.PrefixExpected; pe != nil {
		o = append(o, member{"prefix_expected", prefixExpectedJSON(pe)})
	}
	if sc := p.Server; sc != nil {
		o = append(o, member{"server", sp.add(serverJSON(sc))})
	}
	if ec := p.Energy; ec != nil {
		o = append(o, member{"energy", sp.add(energyJSON(ec))})
	}
	if ov := p.Overload; ov != nil {
		o = append(o, member{"overload", newOverloadJSON(ov)})
	}
	if t := p.Timeline; t != nil {
		o = append(o, member{"timeline", timelineJSON(t, sp)})
	}
	if c := p.MLPerf; c != nil {
		o = append(o, member{"mlperf", newMLPerfJSON(c)})
	}
	return o
}

// timelineJSON is a merged run's timeline, each interval [low, high] on
// one line.
func timelineJSON(t *replay.Timeline, sp *splices) object {
	o := object{{"shards", num(strconv.Itoa(t.Shards))}, {"uncertainty_ns", num(Number(t.UncertaintyNS))},
		{"anchor_ns", num(Number(t.AnchorNS))}, {"drift_ns", num(Number(t.DriftNS))}, {"clocks", text(ClocksDeclared)}}
	for _, iv := range timelineIntervals(t) {
		o = append(o, member{iv.key, sp.add("[" + Number(iv.v.Low) + ", " + Number(iv.v.High) + "]")})
	}
	if t.Reason != "" {
		o = append(o, member{"reason", text(t.Reason)})
	}
	return o
}

type mlperfJSON struct {
	Valid          bool   `json:"valid"`
	TTFTP99NS      num    `json:"ttft_p99_ns"`
	TPOTP99NS      num    `json:"tpot_p99_ns"`
	TTFTOver       num    `json:"ttft_over"`
	TPOTOver       num    `json:"tpot_over"`
	TTFTMinQueries num    `json:"ttft_min_queries"`
	TPOTMinQueries num    `json:"tpot_min_queries"`
	Queries        num    `json:"queries"`
	DurationNS     num    `json:"duration_ns"`
	Reasons        []text `json:"reasons"`
}

func newMLPerfJSON(c *replay.MLPerfCheck) mlperfJSON {
	f := func(k string) num { v, _ := c.Field(k); return num(Number(v)) }
	return mlperfJSON{c.Valid, f("ttft_p99_ns"), f("tpot_p99_ns"), f("ttft_over"), f("tpot_over"),
		f("ttft_min_queries"), f("tpot_min_queries"), f("queries"), f("duration_ns"), texts(c.Reasons)}
}

// summaryJSON is one point's across-repeat summary.
type summaryJSON struct {
	Point   text    `json:"point"`
	Metrics object  `json:"metrics"`
	Energy  *object `json:"energy,omitempty"`
}

func newSummaryJSON(ps replay.PointSummary) summaryJSON {
	s := summaryJSON{Point: text(ps.Point), Metrics: summaryStats(replay.SummaryMetrics, ps.Metrics)}
	if ps.Energy != nil {
		e := summaryStats(replay.EnergySummaryKeys, ps.Energy)
		s.Energy = &e
	}
	return s
}

// statJSON is one metric's summary across repeats.
type statJSON struct {
	Median     num    `json:"median"`
	CILow      num    `json:"ci_low"`
	CIHigh     num    `json:"ci_high"`
	Confidence num    `json:"confidence"`
	N          num    `json:"n"`
	Warnings   []text `json:"warnings"`
}

func newStatJSON(s replay.Summary) statJSON {
	return statJSON{num(Number(s.Median)), num(Number(s.CILow)), num(Number(s.CIHigh)), num(Number(s.Confidence)), num(strconv.Itoa(s.N)), texts(s.Warnings)}
}

// summaryStats is the summaries of keys as an object.
func summaryStats(keys []string, of map[string]replay.Summary) object {
	o := make(object, 0, len(keys))
	for _, m := range keys {
		o = append(o, member{m, newStatJSON(of[m])})
	}
	return o
}

// sweepJSON is goodput and attainment against the swept limit.
type sweepJSON struct {
	Metric   text           `json:"metric"`
	LimitsNS []num          `json:"limits_ns"`
	Rows     []sweepRowJSON `json:"rows"`
}

type sweepRowJSON struct {
	Point      text  `json:"point"`
	Repeat     num   `json:"repeat"`
	Goodput    []num `json:"goodput"`
	Attainment []num `json:"slo_attainment"`
}

func newSweepJSON(sw *replay.Sweep) *sweepJSON {
	if sw == nil {
		return nil
	}
	j := &sweepJSON{Metric: text(sw.Metric), LimitsNS: make([]num, 0, len(sw.LimitsNS)), Rows: make([]sweepRowJSON, 0, len(sw.Rows))}
	for _, l := range sw.LimitsNS {
		j.LimitsNS = append(j.LimitsNS, intNum(l))
	}
	for _, row := range sw.Rows {
		j.Rows = append(j.Rows, sweepRowJSON{text(row.Point), num(strconv.Itoa(row.Repeat)), nums(row.Goodput), nums(row.Attainment)})
	}
	return j
}

// capacityJSON is the capacity of a rate sweep.
type capacityJSON struct {
	Target         num            `json:"attainment_target"`
	Rate           num            `json:"rate"`
	NullReason     *text          `json:"null_reason,omitempty"`
	MaxPassingRate num            `json:"max_passing_rate"`
	NonMonotone    text           `json:"non_monotone,omitempty"`
	Curve          []capacityRate `json:"curve"`
}

type capacityRate struct {
	Point      text `json:"point"`
	Rate       num  `json:"rate"`
	Attainment num  `json:"slo_attainment"`
	Goodput    num  `json:"goodput"`
}

func newCapacityJSON(c *replay.Capacity) *capacityJSON {
	if c == nil {
		return nil
	}
	j := &capacityJSON{Target: num(Number(replay.Exact(c.Target))), Rate: num(Number(c.Rate)), MaxPassingRate: num(Number(c.MaxPassingRate)),
		NonMonotone: text(c.NonMonotone), Curve: make([]capacityRate, 0, len(c.Points))}
	if c.Rate.IsNull() {
		why := text(c.NullReason)
		j.NullReason = &why
	}
	for i := range c.Points {
		j.Curve = append(j.Curve, capacityRate{text(c.Points[i]), num(Number(c.Rates[i])), num(Number(c.Attainment[i])), num(Number(c.Goodput[i]))})
	}
	return j
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
