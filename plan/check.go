package plan

import (
	"fmt"
	"slices"
	"strings"

	"github.com/benchseal/benchseal/schema"
)

// Names of deviations from a plan. Each Deviation carries one.
const (
	DevPlanDigest    = "plan-digest"       // the run's manifest names another plan, or none
	DevMode          = "load-mode"         // concurrency vs rate
	DevUnplanned     = "unplanned-point"   // a point the plan does not list
	DevMissingPoint  = "missing-point"     // a planned point the run lacks
	DevPointChanged  = "point-changed"     // a planned point run with other settings
	DevRepeats       = "repeats-changed"   // another number of repeats
	DevMissingRepeat = "missing-repeat"    // a planned point × repeat without records
	DevCount         = "count-mismatch"    // a point × repeat with another request count
	DevWarmup        = "warmup-changed"    // other warmup
	DevTimeout       = "timeout-changed"   // other request timeout
	DevSeed          = "seed-changed"      // other seed
	DevGenerator     = "generator-missing" // the run does not declare benchseal/v1, so its schedule is not regenerated
	DevSLO           = "slo-changed"       // the manifest's or the claims' SLO differs
	DevDefinitions   = "definitions-changed"
	DevBoundary      = "boundary-changed"
	DevWorkload      = "workload-changed" // another workload hash or item count
	DevMetric        = "unplanned-metric" // a claimed metric the plan does not list
	DevUnclaimed     = "metric-unclaimed" // a planned metric without a claim at a planned point
	DevSignedLate    = "signed-after-start"
	DevIncomplete    = "run-incomplete"
)

// Deviation is one way a run departs from its plan.
type Deviation struct {
	Kind   string `json:"kind"`
	Detail string `json:"detail"`
}

// String formats the deviation as "kind: detail".
func (d Deviation) String() string { return d.Kind + ": " + d.Detail }

// Cell is one (point, repeat) of a run with its number of records (warmup
// and measured, every status).
type Cell struct {
	Point   string
	Repeat  int
	Records int64
}

// Check compares a run — its manifest, claims (nil when none) and the
// record count of every (point, repeat) cell — with the plan whose
// canonical digest is digest, and returns every deviation in a fixed
// order. None means the run executed exactly the plan.
func (p *Plan) Check(digest string, m *schema.Manifest, c *schema.Claims, cells []Cell) []Deviation {
	var d deviations
	p.checkDigest(&d, digest, m)
	p.checkPoints(&d, m)
	p.checkLoad(&d, m)
	p.checkCells(&d, cells)
	p.checkSettings(&d, m)
	p.checkClaims(&d, c)
	return d
}

// deviations collects a check's deviations in order.
type deviations []Deviation

func (d *deviations) add(kind, format string, args ...any) {
	*d = append(*d, Deviation{Kind: kind, Detail: fmt.Sprintf(format, args...)})
}

// checkDigest: the run names this plan (and its metrics) and is complete.
func (p *Plan) checkDigest(d *deviations, digest string, m *schema.Manifest) {
	want := strings.TrimPrefix(digest, "sha256:")
	switch {
	case m.Plan == nil:
		d.add(DevPlanDigest, "the run's manifest names no plan (it was not captured under plan %s)", digest)
	case m.Plan.SHA256 != want:
		d.add(DevPlanDigest, "the run's manifest names plan sha256:%s, not %s", m.Plan.SHA256, digest)
	case m.Plan.Metrics != nil && !slices.Equal(m.Plan.Metrics, p.Metrics):
		d.add(DevPlanDigest, "the run's manifest lists the plan's metrics as %s; plan %s lists %s", strings.Join(m.Plan.Metrics, ","), digest, strings.Join(p.Metrics, ","))
	}
	if m.Incomplete {
		d.add(DevIncomplete, "the run is marked incomplete: %s", m.IncompleteReason)
	}
}

// checkPoints: the mode and every planned point as planned, none added.
func (p *Plan) checkPoints(d *deviations, m *schema.Manifest) {
	l := &p.Load
	if m.Load.Mode != l.Mode {
		d.add(DevMode, "planned %s, run %s", l.Mode, m.Load.Mode)
	}
	run := map[string]schema.Point{}
	for _, pt := range m.Load.Points {
		run[pt.Name] = pt
	}
	planned := map[string]schema.Point{}
	for _, pt := range l.Points {
		planned[pt.Name] = pt
		got, ok := run[pt.Name]
		if !ok {
			d.add(DevMissingPoint, "planned point %q is not in the run", pt.Name)
			continue
		}
		want := pt
		if want.InputTokens == 0 {
			want.InputTokens = l.InputTokens
		}
		if want.OutputTokens == 0 {
			want.OutputTokens = l.OutputTokens
		}
		if l.Mode == schema.ModeRate && want.Arrival == "" {
			want.Arrival = schema.ArrivalPoisson
		}
		if want.Arrival == schema.ArrivalGamma && want.Burstiness == 0 {
			want.Burstiness = 1
		}
		if got != want {
			d.add(DevPointChanged, "point %q planned %s, run %s", pt.Name, pointString(want), pointString(got))
		}
	}
	for _, pt := range m.Load.Points {
		if _, ok := planned[pt.Name]; !ok {
			d.add(DevUnplanned, "point %q (%s) is not in the plan", pt.Name, pointString(pt))
		}
	}
}

// checkLoad: repeats, warmup, timeout, seed and the generator as planned.
func (p *Plan) checkLoad(d *deviations, m *schema.Manifest) {
	l := &p.Load
	if m.Load.Repeats != l.Repeats {
		d.add(DevRepeats, "planned %d repeats, run %d", l.Repeats, m.Load.Repeats)
	}
	if m.Load.Warmup != l.Warmup {
		d.add(DevWarmup, "planned %s, run %s", warmupString(l.Warmup), warmupString(m.Load.Warmup))
	}
	if m.Load.RequestTimeout != l.RequestTimeout {
		d.add(DevTimeout, "planned %s, run %s", l.RequestTimeout, m.Load.RequestTimeout)
	}
	if m.Client.Seed == nil || *m.Client.Seed != l.Seed {
		got := "none"
		if m.Client.Seed != nil {
			got = fmt.Sprint(*m.Client.Seed)
		}
		d.add(DevSeed, "planned seed %d, run %s", l.Seed, got)
	}
	// capture executes a plan under GeneratorBenchsealV1; only then are
	// the ids and the schedule regenerated from the seed checked record
	// by record, so a run without it cannot match a plan.
	if m.Load.Generator != schema.GeneratorBenchsealV1 {
		d.add(DevGenerator, "the run declares load.generator %q, not %q: its request ids and schedule cannot be checked against the plan's seed", m.Load.Generator, schema.GeneratorBenchsealV1)
	}
}

// checkCells: every planned point × repeat present with the planned
// record count.
func (p *Plan) checkCells(d *deviations, cells []Cell) {
	l := &p.Load
	have := map[string]int64{}
	for _, c := range cells {
		have[fmt.Sprintf("%s/%d", c.Point, c.Repeat)] += c.Records
	}
	for _, pt := range l.Points {
		for r := 0; r < l.Repeats; r++ {
			n, ok := have[fmt.Sprintf("%s/%d", pt.Name, r)]
			switch {
			case !ok:
				d.add(DevMissingRepeat, "point %q repeat %d has no records", pt.Name, r)
			case pt.Requests > 0 && pt.Duration == 0 && l.Warmup.Duration == 0 && n != int64(pt.Requests+l.Warmup.Requests):
				d.add(DevCount, "point %q repeat %d: %d records, planned %d requests + %d warmup", pt.Name, r, n, pt.Requests, l.Warmup.Requests)
			}
		}
	}
}

// checkSettings: the SLO, boundary and workload as planned.
func (p *Plan) checkSettings(d *deviations, m *schema.Manifest) {
	if m.SLO != p.SLO {
		d.add(DevSLO, "planned %s, manifest %s", sloString(p.SLO), sloString(m.SLO))
	}
	if m.Client.Boundary != p.Boundary {
		d.add(DevBoundary, "planned %s, run %s", p.Boundary, m.Client.Boundary)
	}
	if w := p.Workload; w.SHA256 != "" && m.Workload.SHA256 != w.SHA256 {
		d.add(DevWorkload, "planned workload sha256 %s, run %q", w.SHA256, m.Workload.SHA256)
	}
	if w := p.Workload; w.Items > 0 && m.Workload.Items != w.Items {
		d.add(DevWorkload, "planned %d workload items, run %d", w.Items, m.Workload.Items)
	}
}

// checkClaims: the claims follow the planned definitions and SLO, claim
// nothing unplanned and leave nothing planned unclaimed.
func (p *Plan) checkClaims(d *deviations, c *schema.Claims) {
	if c != nil {
		if c.Definitions != p.Definitions {
			d.add(DevDefinitions, "planned %s, claims use %s", p.Definitions, c.Definitions)
		}
		if c.SLO != nil && *c.SLO != p.SLO {
			d.add(DevSLO, "planned %s, claims use %s", sloString(p.SLO), sloString(*c.SLO))
		}
		var extra []string
		for _, pc := range c.Points {
			for _, mc := range pc.Metrics {
				if !p.Plans(mc.Metric) && !slices.Contains(extra, mc.Metric) {
					extra = append(extra, mc.Metric)
				}
			}
		}
		if len(extra) > 0 {
			d.add(DevMetric, "claimed but not planned: %s (%s)", strings.Join(extra, ", "), conformingClaims)
		}
	}
	for _, u := range p.unclaimed(c) {
		d.add(DevUnclaimed, "%s (%s)", u, conformingClaims)
	}
}

// conformingClaims says how a publisher makes claims a plan check accepts.
const conformingClaims = "replay RUN --write-claims RUN/claims.json on the run captured under the plan claims exactly the planned metrics"

// unclaimed lists, per planned point, the planned metrics the claims (nil:
// none) leave out: a planned metric must be claimed for every planned
// repeat of every planned point, or by the point's summary (a claim
// without a repeat, which replay checks against the summary across the
// point's repeats; on a metric not summarised across repeats such a claim
// is not recomputable and covers no repeat). Leaving out the metrics that came out badly is the
// selective reporting pre-registration exists to stop. Metrics the plan
// itself makes null are not expected: the metrics that apply the SLO
// (schema.SLOMetrics) without a planned SLO limit, ttft_ns, tpot_ns and itl_ns
// under the non-streaming boundary. A metric the records leave null (every
// request of a point failed) cannot be claimed and is listed too: the run
// did not produce what the plan promised.
func (p *Plan) unclaimed(c *schema.Claims) []string {
	noSLO := p.SLO.TTFT == 0 && p.SLO.E2E == 0 && p.SLO.TPOT == 0
	var out []string
	for _, pt := range p.Load.Points {
		var missing []string
		for _, m := range p.Metrics {
			family, _, _ := strings.Cut(strings.TrimPrefix(m, "summary."), ".")
			switch {
			case schema.MetricNeedsSLO(m):
				if noSLO {
					continue
				}
			case family == schema.MetricTTFT || family == schema.MetricTPOT || family == schema.MetricITL:
				if p.Boundary == schema.BoundaryNonStreaming {
					continue
				}
			}
			repeats := map[int]bool{}
			summary := false
			if c != nil {
				for _, pc := range c.Points {
					if pc.Point != pt.Name {
						continue
					}
					for _, mc := range pc.Metrics {
						if !covers(m, mc.Metric) {
							continue
						}
						if pc.Repeat == nil {
							// Checked as the point's summary across
							// its repeats; a metric not summarised
							// cannot be, and covers none.
							summary = summary || p.Load.Repeats <= 1 || strings.HasPrefix(mc.Metric, "summary.") || slices.Contains(schema.ClaimSummaryMetrics, mc.Metric)
						} else {
							repeats[*pc.Repeat] = true
						}
					}
				}
			}
			if summary {
				continue
			}
			var lack []string
			for r := 0; r < p.Load.Repeats; r++ {
				if !repeats[r] {
					lack = append(lack, fmt.Sprint(r))
				}
			}
			if len(lack) == p.Load.Repeats {
				missing = append(missing, m)
			} else if len(lack) > 0 {
				missing = append(missing, m+" (repeat "+strings.Join(lack, ", ")+")")
			}
		}
		if len(missing) > 0 {
			out = append(out, fmt.Sprintf("point %q: planned but not claimed: %s", pt.Name, strings.Join(missing, ", ")))
		}
	}
	return out
}

// Plans reports whether the plan lists the claim path metric: a planned
// entry names the path itself, or a family the path belongs to ("ttft_ns"
// plans "ttft_ns.p99"; "goodput" plans "summary.goodput.median"; "counts"
// plans "counts.ok").
func (p *Plan) Plans(metric string) bool { return Covers(p.Metrics, metric) }

// Covers reports whether the planned metric list (a plan's Metrics, or the
// copy a run's manifest keeps in plan.metrics) lists the claim path metric,
// as Plans.
func Covers(planned []string, metric string) bool {
	for _, m := range planned {
		if covers(m, metric) {
			return true
		}
	}
	return false
}

// covers reports whether the planned entry m names the claim path metric
// or a family it belongs to (see Plans).
func covers(m, metric string) bool {
	for _, path := range []string{metric, strings.TrimPrefix(metric, "summary.")} {
		if path == m || strings.HasPrefix(path, m+".") {
			return true
		}
	}
	return false
}

func pointString(p schema.Point) string {
	var parts []string
	add := func(k string, v any, set bool) {
		if set {
			parts = append(parts, fmt.Sprintf("%s=%v", k, v))
		}
	}
	add("concurrency", p.Concurrency, p.Concurrency != 0)
	add("rate", p.Rate, p.Rate != 0)
	add("arrival", p.Arrival, p.Arrival != "")
	add("burstiness", p.Burstiness, p.Burstiness != 0)
	add("requests", p.Requests, p.Requests != 0)
	add("duration", p.Duration, p.Duration != 0)
	add("input_tokens", p.InputTokens, p.InputTokens != 0)
	add("output_tokens", p.OutputTokens, p.OutputTokens != 0)
	return strings.Join(parts, " ")
}

// sloString names the limits an SLO sets; a zero limit is not set and
// reads "none", never "0s", which would read as a limit of zero.
func sloString(s schema.SLO) string {
	limit := func(d schema.Duration) string {
		if d == 0 {
			return "none"
		}
		return d.String()
	}
	one := s.OneToken
	if one == "" {
		one = "not stated"
	}
	var parts []string
	for _, k := range schema.SLOKeys {
		parts = append(parts, k+"="+limit(s.Limit(k)))
	}
	return strings.Join(append(parts, schema.SLOOneToken+"="+one), " ")
}

// warmupString names a warmup as the plan and manifest state it ("2
// requests", "30s", "none").
func warmupString(w schema.Warmup) string {
	var parts []string
	if w.Requests != 0 {
		parts = append(parts, fmt.Sprintf("%d requests", w.Requests))
	}
	if w.Duration != 0 {
		parts = append(parts, w.Duration.String())
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, " and ")
}
