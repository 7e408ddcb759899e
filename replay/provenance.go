package replay

import (
	"fmt"
	"maps"
	"math/big"
	"slices"
	"strings"

	"github.com/benchseal/benchseal/schema"
)

// metricFields maps each canonical metric (a scalar key, a distribution
// name or "stalls") to the record quantities it is computed from, besides
// the window (windowed) and the SLO's limits (sloMetrics). A metric whose
// quantity the source did not measure (schema.FieldAbsent) is null, with
// the reason, never a number.
var metricFields = map[string][]string{
	schema.MetricTTFT:                  {schema.FieldFirstChunk},
	schema.MetricE2E:                   {schema.FieldLastChunk},
	schema.MetricTPOT:                  {schema.FieldFirstChunk, schema.FieldLastChunk, schema.FieldOutputTokens},
	schema.MetricITL:                   {schema.FieldChunks},
	"stalls":                           {schema.FieldChunks},
	schema.MetricSendLag:               {schema.FieldScheduled, schema.FieldSent},
	schema.MetricTTFTFromSchedule:      {schema.FieldScheduled, schema.FieldSent, schema.FieldFirstChunk},
	schema.MetricE2EFromSchedule:       {schema.FieldScheduled, schema.FieldSent, schema.FieldLastChunk},
	schema.MetricWindow:                nil, // versionRules.windowFields: the window's fields are its version's
	schema.MetricOutputTokenThroughput: {schema.FieldOutputTokens},
	schema.MetricTotalTokenThroughput:  {schema.FieldInputTokens, schema.FieldOutputTokens},
	schema.MetricTokenGoodput:          {schema.FieldOutputTokens},
	"counts.one_token":                 {schema.FieldOutputTokens},
	schema.MetricCountGood:             {},
	schema.MetricSmoothGoodput:         {schema.FieldSent, schema.FieldChunks, schema.FieldOutputTokens},
	CostPerMillionOutputTokens:         {schema.FieldOutputTokens},
	CostPerMillionGoodTokens:           {schema.FieldOutputTokens},
}

// sloMetrics lists the metrics that apply the SLO to every request.
var sloMetrics = schema.SLOMetrics

// gate decides, from a run's field provenance, which metrics the records
// can determine. A nil gate (no provenance block, or nothing absent) lets
// every metric through. Peer definitions that read the tool's own values
// (a stored duration, per-request latencies in orig) pass the gate for
// those: only what they take from the records' placeholders is nulled.
type gate struct {
	prov *schema.Provenance
	// fieldReasons holds the metrics a non-window field rules out.
	fieldReasons map[string]string
	// windowReason says why the records give no window ("" when they do).
	windowReason string
	// imported is set for an imported run, the only kind whose stored
	// tool windows count; concurrency holds each concurrency-mode point's
	// concurrency, bounding a stored window from below.
	imported    bool
	concurrency map[string]int64
	// fromRate names the reported rate the source tool's stored windows
	// are derived from (schema.ToolWindowFromRate), "" when they are a
	// time the tool measured.
	fromRate string
}

// skippedMetrics returns the metrics a replay does not compute anyway:
// smooth goodput without its parameters, costs without a price, the SLO
// metrics without an SLO. They are null for the reason the notes give.
func skippedMetrics(slo SLOSpec, smooth, cost bool) map[string]bool {
	skip := map[string]bool{schema.MetricSmoothGoodput: !smooth, CostPerMillionOutputTokens: !cost, CostPerMillionGoodTokens: !cost || !slo.Any()}
	for _, k := range sloMetrics {
		skip[k] = skip[k] || !slo.Any()
	}
	return skip
}

// newGate returns the gate of a replay, or nil when nothing is absent.
// Metrics the replay does not compute anyway (smooth goodput without its
// parameters, SLO metrics without an SLO, costs without a price) get no
// reason here: they are null for the reason the notes give.
//
// At the non-streaming boundary no first-token time exists whatever the
// provenance block says (a run without one included): first_chunk_ns is
// absent, so TTFT, TPOT and an SLO with a TTFT or TPOT limit are null with
// that reason, never judged against e2e.
func newGate(m *schema.Manifest, rules versionRules, slo SLOSpec, smooth, cost bool, extra map[string]string) *gate {
	p := m.Provenance
	if m.Client.Boundary == schema.BoundaryNonStreaming && p.Field(schema.FieldFirstChunk).Usable() {
		q := &schema.Provenance{}
		if p != nil {
			q.Windows = p.Windows
			for k, o := range p.Fields {
				q.Set(k, o.Status, o.How)
			}
		}
		q.Set(schema.FieldFirstChunk, schema.FieldAbsent, ReasonNonStreamingFirstChunk)
		p = q
	}
	if p == nil && len(extra) == 0 {
		return nil
	}
	skip := skippedMetrics(slo, smooth, cost)
	absent := func(fields ...string) string {
		var rs []string
		for _, f := range fields {
			if o := p.Field(f); !o.Usable() {
				rs = append(rs, f+" not measured by the source ("+o.How+")")
			}
		}
		return strings.Join(rs, "; ")
	}
	var sloFields []string
	if slo.TTFTNS != nil {
		sloFields = append(sloFields, schema.FieldFirstChunk)
	}
	if slo.E2ENS != nil {
		sloFields = append(sloFields, schema.FieldLastChunk)
	}
	if slo.TPOTNS != nil {
		sloFields = append(sloFields, schema.FieldFirstChunk, schema.FieldLastChunk, schema.FieldOutputTokens)
	}
	g := &gate{prov: p, fieldReasons: map[string]string{}, imported: m.Evidence == schema.EvidenceImported, concurrency: map[string]int64{}}
	if m.Source != nil {
		g.fromRate = schema.ToolWindowFromRate(m.Source.Tool)
	}
	if m.Load.Mode == schema.ModeConcurrency {
		for _, pt := range m.Load.Points {
			g.concurrency[pt.Name] = int64(pt.Concurrency)
		}
	}
	for _, k := range append(slices.Sorted(maps.Keys(metricFields)), schema.MetricGoodput, schema.MetricSLOAttainment, schema.MetricSLOAttainmentOK) {
		if skip[k] {
			continue
		}
		fs := metricFields[k]
		if k == schema.MetricWindow {
			fs = rules.windowFields()
		}
		if slices.Contains(sloMetrics, k) {
			fs = append(slices.Clone(fs), sloFields...)
		}
		fs = slices.Compact(fs)
		if r := absent(fs...); r != "" {
			if k == schema.MetricWindow {
				g.windowReason = r
				continue
			}
			g.fieldReasons[k] = r
		}
	}
	for k, r := range extra {
		g.fieldReasons[k] = r
	}
	if len(g.fieldReasons) == 0 && g.windowReason == "" {
		return nil
	}
	return g
}

// window returns the window of a group: the records' own (rw, which the
// caller's definitions take from the records; have is false when they give
// none), else the tool's stored window with its label, else none with a
// reason.
//
// A stored window is a publisher's number, so it is checked against what
// the records do determine: it cannot be shorter than the longest request
// (every request ran inside it), nor, at a concurrency-mode point of
// concurrency C, shorter than Σ e2e ÷ C (at most C requests at once). An
// impossible window gives no window, with the reason; so does one stored
// for a run that is not an import (only an importer speaks for a tool).
func (g *gate) window(k groupKey, grp *group, rw int64, have bool) (int64, bool, string, string) {
	if g == nil || g.windowReason == "" {
		return rw, have, "", ""
	}
	none := "no measured window: " + g.windowReason
	tw, ok := g.prov.Window(k.point, k.repeat)
	switch {
	case !ok:
		return 0, false, "", none + ", and the tool stored no window of its own"
	case !g.imported:
		return 0, false, "", none + "; a stored tool window counts only in an imported run"
	}
	if n := grp.e2e.n(); n > 0 {
		if grp.e2e.max > tw.WindowNS {
			return 0, false, "", fmt.Sprintf("%s; the stored tool window (%d ns) is shorter than the longest request (%d ns)", none, tw.WindowNS, grp.e2e.max)
		}
		if c := g.concurrency[k.point]; c > 0 {
			sum, _ := grp.e2e.acc.sums()
			if sum.Cmp(new(big.Int).Mul(big.NewInt(tw.WindowNS), big.NewInt(c))) > 0 {
				return 0, false, "", fmt.Sprintf("%s; the stored tool window (%d ns) is shorter than the requests' total latency ÷ concurrency %d", none, tw.WindowNS, c)
			}
		}
	}
	src := "the tool's own window: " + tw.How
	if g.fromRate != "" {
		src += ", derived from the claimed " + g.fromRate + ", not a measured time"
	}
	return tw.WindowNS, true, src, ""
}

// setWindowSource sets pr's WindowSource to src (from window) and, when
// src is a stored tool window derived from a claimed rate, why the claims
// on pr's rates are not recomputable.
func (g *gate) setWindowSource(pr *PointResult, src string) {
	pr.WindowSource = src
	pr.windowFromClaim = ""
	if g != nil && g.fromRate != "" && src != "" {
		pr.windowFromClaim = "the point's window is " + src + ": a rate over it restates the tool's own rate, so a claim on a rate is not recomputable"
	}
}

// sweepReason says why the records cannot determine a sweep of metric
// (one of schema.SLOKeys) under slo: a field it, or another limit of slo the
// sweep holds fixed, reads was not measured ("" if they can).
func (g *gate) sweepReason(metric string, slo SLOSpec) string {
	if g == nil {
		return ""
	}
	limitFields := map[string][]string{
		schema.SLOTTFT: {schema.FieldFirstChunk},
		schema.SLOE2E:  {schema.FieldLastChunk},
		schema.SLOTPOT: {schema.FieldFirstChunk, schema.FieldLastChunk, schema.FieldOutputTokens},
	}
	fields := limitFields[metric]
	for _, name := range schema.SLOKeys {
		if slo.Limit(name) != nil && name != metric {
			fields = append(fields, limitFields[name]...)
		}
	}
	var rs []string
	for _, f := range schema.ProvenanceFields {
		if o := g.prov.Field(f); slices.Contains(fields, f) && !o.Usable() {
			rs = append(rs, f+" not measured by the source ("+o.How+")")
		}
	}
	return strings.Join(rs, "; ")
}

// windowUnmeasured reports whether the records' send times cannot give a
// window.
func (g *gate) windowUnmeasured() bool { return g != nil && g.windowReason != "" }

// apply nulls every metric of pr the records cannot determine and records
// why in pr.NullReasons. windowReason is the group's (from window, or why
// the records give no window at all); skip holds the metrics not computed
// anyway, which get no reason. A nil gate applies only windowReason.
func (g *gate) apply(pr *PointResult, windowReason string, skip map[string]bool) {
	if windowReason != "" {
		setNull(pr, schema.MetricWindow, windowReason)
		for _, k := range windowRates {
			if !skip[k] {
				setNull(pr, k, windowReason)
			}
		}
	}
	if g == nil {
		return
	}
	for _, k := range slices.Sorted(maps.Keys(g.fieldReasons)) {
		setNull(pr, k, g.fieldReasons[k])
	}
}

// setNull makes metric k of pr (a scalar, a distribution, "stalls" or a
// count such as "counts.good") null, adding reason to its null reasons,
// each clause once (JoinReasons).
func setNull(pr *PointResult, k, reason string) {
	if reason == "" {
		return
	}
	if pr.NullReasons == nil {
		pr.NullReasons = map[string]string{}
	}
	pr.NullReasons[k] = JoinReasons(pr.NullReasons[k], reason)
	switch {
	case k == "stalls":
		pr.Stalls = Stalls{ThresholdNS: pr.Stalls.ThresholdNS, MaxGapNS: Null}
	default:
		if _, ok := pr.Scalars[k]; ok {
			pr.Scalars[k] = Null
		}
		if _, ok := pr.Dists[k]; ok {
			pr.Dists[k] = emptyDist()
		}
	}
}
