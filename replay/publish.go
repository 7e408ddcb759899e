package replay

import (
	"slices"
	"strings"

	"github.com/benchseal/benchseal/plan"
	"github.com/benchseal/benchseal/schema"
)

// HeadlineMetrics are the claim paths a publisher claims by default for
// every point and repeat: the request accounting, the rates, goodput under
// the declared SLO, the latency percentiles people quote, and the overload
// flags (1 or 0; left out where null), so that a verifier checks whether a
// point was overloaded as claimed, and the accelerator energy and energy
// per good token where the run stored accelerator scrapes (null, so left
// out, where it did not).
var HeadlineMetrics = []string{
	"counts.sent", "counts.ok", "counts.error", "counts.timeout", "counts.cancelled", "counts.rejected",
	schema.MetricWindow, schema.MetricRequestThroughput, schema.MetricOutputTokenThroughput, schema.MetricTotalTokenThroughput,
	schema.MetricGoodput, schema.MetricTokenGoodput, schema.MetricSLOAttainment,
	schema.MetricPath(schema.MetricTTFT, "p50"), schema.MetricPath(schema.MetricTTFT, "p90"), schema.MetricPath(schema.MetricTTFT, "p99"),
	schema.MetricPath(schema.MetricE2E, "p50"), schema.MetricPath(schema.MetricE2E, "p99"),
	schema.MetricPath(schema.MetricTPOT, "mean"), schema.MetricPath(schema.MetricTPOT, "p50"), schema.MetricPath(schema.MetricTPOT, "p99"),
	schema.MetricPath(schema.MetricITL, "p50"), schema.MetricPath(schema.MetricITL, "p99"),
	"overload.overloaded", "overload.generator_limited",
	"energy.energy_j", "energy.j_per_good_token",
}

// DefaultClaimTolerance is the relative error a verifier allows by default
// when recomputing claims made from benchseal's own replay: the values are
// exact rationals rounded once to float64, so any larger error means the
// evidence changed.
const DefaultClaimTolerance = 1e-12

// Claims turns r into the claims a publisher makes: for every point and
// repeat, each of metrics that has a defined value (nil metrics means
// HeadlineMetrics), and, for points with two or more repeats, the median
// across repeats of every summarised metric. The claims record r's
// definitions and, when it came from a flag, its SLO, so that a verifier
// recomputes them under the same objective.
func (r *Result) Claims(metrics []string, tolerance float64) *schema.Claims {
	if metrics == nil {
		metrics = HeadlineMetrics
	}
	return r.claims(metrics, SummaryMetrics, tolerance)
}

// PlannedClaims is Claims for a run captured under a pre-registered plan
// whose metric list (paths or families, as plan.Covers reads them) is
// planned: for every point and repeat, each headline metric the plan lists
// and each listed path that is no family of a headline metric; for points
// with two or more repeats, the median of every summarised metric the plan
// lists. So the claims hold exactly the planned metrics, which a plan
// check requires.
func (r *Result) PlannedClaims(planned []string, tolerance float64) *schema.Claims {
	perRepeat := []string{}
	for _, h := range HeadlineMetrics {
		if plan.Covers(planned, h) {
			perRepeat = append(perRepeat, h)
		}
	}
	for _, m := range planned {
		if strings.HasPrefix(m, "summary.") || slices.Contains(perRepeat, m) ||
			slices.ContainsFunc(HeadlineMetrics, func(h string) bool { return plan.Covers([]string{m}, h) }) {
			continue
		}
		perRepeat = append(perRepeat, m)
	}
	var summary []string
	for _, m := range SummaryMetrics {
		if plan.Covers(planned, "summary."+m+".median") {
			summary = append(summary, m)
		}
	}
	return r.claims(perRepeat, summary, tolerance)
}

// claims builds the claims of metrics per point and repeat and of the
// medians of summary (summarised metrics) per point.
func (r *Result) claims(metrics, summary []string, tolerance float64) *schema.Claims {
	c := &schema.Claims{Schema: schema.ClaimsSchemaV1, Definitions: r.Definitions, DefinitionsVersion: r.DefinitionsVersion, Tolerance: tolerance, Points: []schema.PointClaim{}}
	if c.Definitions == "" {
		c.Definitions = "benchseal"
	}
	if c.DefinitionsVersion == "" {
		c.DefinitionsVersion = CurrentVersion(c.Definitions)
	}
	if r.SLO.Source == "flag" && r.SLO.Any() {
		c.SLO = sloToSchema(r.SLO)
	}
	for _, p := range r.Results {
		pc := schema.PointClaim{Point: p.Point, Repeat: intPtr(p.Repeat), Metrics: []schema.Claim{}}
		for _, m := range metrics {
			v, ok := p.Lookup(m)
			if !ok || v.IsNull() {
				continue
			}
			f, ok := v.Float64()
			if !ok {
				continue
			}
			pc.Metrics = append(pc.Metrics, schema.Claim{Metric: m, Value: f})
		}
		if len(pc.Metrics) > 0 {
			c.Points = append(c.Points, pc)
		}
	}
	for _, ps := range r.Summary {
		pc := schema.PointClaim{Point: ps.Point, Metrics: []schema.Claim{}}
		for _, m := range summary {
			s, ok := ps.Metrics[m]
			if !ok || s.N < 2 || s.Median.IsNull() {
				continue
			}
			if f, ok := s.Median.Float64(); ok {
				pc.Metrics = append(pc.Metrics, schema.Claim{Metric: "summary." + m + ".median", Value: f})
			}
		}
		if len(pc.Metrics) > 0 {
			c.Points = append(c.Points, pc)
		}
	}
	return c
}

func intPtr(i int) *int { return &i }

// sloToSchema converts a resolved SLO back to the manifest form.
func sloToSchema(s SLOSpec) *schema.SLO {
	out := &schema.SLO{OneToken: s.OneToken}
	if s.TTFTNS != nil {
		out.TTFT = schema.Duration(*s.TTFTNS)
	}
	if s.E2ENS != nil {
		out.E2E = schema.Duration(*s.E2ENS)
	}
	if s.TPOTNS != nil {
		out.TPOT = schema.Duration(*s.TPOTNS)
	}
	return out
}
