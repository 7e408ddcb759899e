package schema

import (
	"slices"
	"strings"
)

// The canonical metric names that rules below refer to by name: every
// other package names them through these constants or the Metrics table.
const (
	MetricWindow                = "window_ns"
	MetricRequestThroughput     = "request_throughput"
	MetricOutputTokenThroughput = "output_token_throughput"
	MetricTotalTokenThroughput  = "total_token_throughput"
	MetricGoodput               = "goodput"
	MetricTokenGoodput          = "token_goodput"
	MetricSLOAttainment         = "slo_attainment"
	MetricSLOAttainmentOK       = "slo_attainment_ok"
	MetricSmoothGoodput         = "smooth_goodput"
	MetricCostPerMillionOutput  = "cost_per_million_output_tokens"
	MetricCostPerMillionGood    = "cost_per_million_good_tokens"
	MetricCountGood             = "counts.good"
	MetricTTFT                  = "ttft_ns"
	MetricE2E                   = "e2e_ns"
	MetricTPOT                  = "tpot_ns"
	MetricITL                   = "itl_ns"
	MetricSendLag               = "send_lag_ns"
	MetricTTFTFromSchedule      = "ttft_sched_ns"
	MetricE2EFromSchedule       = "e2e_sched_ns"
)

// The SLO limit names: the keys of an SLO spec ("ttft=200ms,e2e=5s,tpot=50ms"),
// of a sweep ("ttft=50ms..2s") and of the MLPerf check, and the fields of
// manifest.slo. Each is the SLOKey of the metric it limits in Metrics.
const (
	SLOTTFT = "ttft"
	SLOE2E  = "e2e"
	SLOTPOT = "tpot"
)

// SLOOneToken is the SLO spec's key of the one-token policy
// ("one_token=fail"), manifest.slo.one_token: a rule for the tpot limit,
// not a limit on a metric of its own.
const SLOOneToken = "one_token"

// MetricKind says what a canonical metric is per point × repeat: one
// value (a scalar) or a distribution over the requests (DIST.KEY).
type MetricKind int

// The kinds of metric.
const (
	MetricScalar MetricKind = iota
	MetricDistribution
)

// MetricDef is one canonical metric: what kind it is, its unit, and the
// properties the rules of claims, plans, replay, compare and decide ask
// of it. Each property is stated here once; the lists those rules use are
// derived from Metrics.
type MetricDef struct {
	Name string
	// Label is the metric's name as reports print it for a person
	// ("Request throughput", "TTFT"; a distribution's label is followed by
	// its key: "TTFT p99").
	Label string
	Kind  MetricKind
	// Unit is the unit of the value as computed ("ns", "req/s", "tok/s",
	// "USD per 1M tokens"; "" for a dimensionless share).
	Unit string
	// NeedsSLO: the metric applies the SLO to every request, so it is
	// undefined (null) when no SLO is set.
	NeedsSLO bool
	// Windowed: the metric is a rate over (or is) the point × repeat's
	// measurement window, so a window the records cannot place nulls it.
	Windowed bool
	// Summary lists, for a scalar, [""] when it is summarised across
	// repeats (summary.NAME.FIELD); for a distribution, the keys that are
	// (summary.NAME.KEY.FIELD). Empty when it is not summarised.
	Summary []string
	// HigherIsBetter is true for rates and attainment, false for
	// latencies and costs: the direction compare and decide rank in.
	HigherIsBetter bool
	// SLOKey is the name of the SLO limit on each request's value of the
	// metric (SLOTTFT), "" when an SLO sets no limit on it.
	SLOKey string
}

// Metrics is the table of canonical metrics, scalars in output order
// then distributions in output order: the one place their properties
// are stated.
var Metrics = []MetricDef{
	{Name: MetricWindow, Label: "Window", Unit: "ns", Windowed: true},
	{Name: MetricRequestThroughput, Label: "Request throughput", Unit: "req/s", Windowed: true, Summary: []string{""}, HigherIsBetter: true},
	{Name: MetricOutputTokenThroughput, Label: "Output token throughput", Unit: "tok/s", Windowed: true, Summary: []string{""}, HigherIsBetter: true},
	{Name: MetricTotalTokenThroughput, Label: "Total token throughput", Unit: "tok/s", Windowed: true, HigherIsBetter: true},
	{Name: MetricGoodput, Label: "Goodput", Unit: "req/s", NeedsSLO: true, Windowed: true, Summary: []string{""}, HigherIsBetter: true},
	{Name: MetricTokenGoodput, Label: "Token goodput", Unit: "tok/s", NeedsSLO: true, Windowed: true, Summary: []string{""}, HigherIsBetter: true},
	{Name: MetricSLOAttainment, Label: "SLO attainment", NeedsSLO: true, Summary: []string{""}, HigherIsBetter: true},
	{Name: MetricSLOAttainmentOK, Label: "SLO attainment of ok requests", NeedsSLO: true, HigherIsBetter: true},
	{Name: MetricSmoothGoodput, Label: "Smooth goodput", Unit: "tok/s", Windowed: true, HigherIsBetter: true},
	{Name: MetricCostPerMillionOutput, Label: "Cost per 1M output tokens", Unit: "USD per 1M tokens", Windowed: true},
	{Name: MetricCostPerMillionGood, Label: "Cost per 1M good tokens", Unit: "USD per 1M tokens", NeedsSLO: true, Windowed: true},
	{Name: MetricTTFT, Label: "TTFT", Kind: MetricDistribution, Unit: "ns", Summary: []string{"p50", "p99"}, SLOKey: SLOTTFT},
	{Name: MetricE2E, Label: "E2E latency", Kind: MetricDistribution, Unit: "ns", Summary: []string{"p50", "p99"}, SLOKey: SLOE2E},
	{Name: MetricTPOT, Label: "TPOT", Kind: MetricDistribution, Unit: "ns", Summary: []string{"p50", "p99"}, SLOKey: SLOTPOT},
	{Name: MetricITL, Label: "ITL", Kind: MetricDistribution, Unit: "ns", Summary: []string{"p99"}},
	{Name: MetricSendLag, Label: "send lag", Kind: MetricDistribution, Unit: "ns"},
	{Name: MetricTTFTFromSchedule, Label: "TTFT from schedule", Kind: MetricDistribution, Unit: "ns"},
	{Name: MetricE2EFromSchedule, Label: "E2E from schedule", Kind: MetricDistribution, Unit: "ns"},
}

// metricsWhere returns the names of the metrics of kind k for which keep
// holds, in table order.
func metricsWhere(k MetricKind, keep func(MetricDef) bool) []string {
	var out []string
	for _, m := range Metrics {
		if m.Kind == k && keep(m) {
			out = append(out, m.Name)
		}
	}
	return out
}

// LookupMetric returns the table's entry of metric name.
func LookupMetric(name string) (MetricDef, bool) {
	for _, m := range Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return MetricDef{}, false
}

// MetricUnit is the unit of metric name as the table states it ("" for
// a name it does not hold or a dimensionless share).
func MetricUnit(name string) string {
	m, _ := LookupMetric(name)
	return m.Unit
}

// MetricLabel is the label of metric name as the table states it (""
// for a name it does not hold).
func MetricLabel(name string) string {
	m, _ := LookupMetric(name)
	return m.Label
}

// SLOKeys are the SLO limit names in table order (ttft, e2e, tpot): the
// limits an SLO spec accepts.
var SLOKeys = func() []string {
	var out []string
	for _, m := range Metrics {
		if m.SLOKey != "" {
			out = append(out, m.SLOKey)
		}
	}
	return out
}()

// SLOMetric returns the table's entry of the metric the SLO limit key
// applies to (SLOTTFT: MetricTTFT's).
func SLOMetric(key string) (MetricDef, bool) {
	for _, m := range Metrics {
		if key != "" && m.SLOKey == key {
			return m, true
		}
	}
	return MetricDef{}, false
}

// MetricPath is the claim path of key under metric name, as claims,
// reports and CSV headers spell it: MetricPath(MetricTTFT, "p99") is
// "ttft_ns.p99".
func MetricPath(name, key string) string { return name + "." + key }

// summaryMetrics returns the metrics summarised across repeats, as
// summary.METRIC.FIELD names them: scalars, then each distribution's
// summarised keys ("ttft_ns.p50"), in table order.
func summaryMetrics() []string {
	var out []string
	for _, k := range []MetricKind{MetricScalar, MetricDistribution} {
		for _, m := range Metrics {
			if m.Kind != k {
				continue
			}
			for _, key := range m.Summary {
				if key == "" {
					out = append(out, m.Name)
				} else {
					out = append(out, MetricPath(m.Name, key))
				}
			}
		}
	}
	return out
}

// SLOMetrics are the scalars that apply the SLO to every request, and
// counts.good: all null without an SLO.
var SLOMetrics = append(metricsWhere(MetricScalar, func(m MetricDef) bool { return m.NeedsSLO }), MetricCountGood)

// WindowedMetrics are the scalars that depend on the measurement window:
// the rates over it (the window itself excluded).
var WindowedMetrics = metricsWhere(MetricScalar, func(m MetricDef) bool { return m.Windowed && m.Name != MetricWindow })

// MetricNeedsSLO reports whether a metric path (a scalar, counts.KEY,
// DIST.KEY or summary.METRIC.FIELD) is one of SLOMetrics: undefined
// without an SLO.
func MetricNeedsSLO(path string) bool {
	metric, _ := ClaimedMetric(path)
	return slices.Contains(SLOMetrics, metric)
}

// MetricHigherIsBetter reports the direction of a scalar or DIST.KEY
// path as the table states it (false for a name it does not hold).
func MetricHigherIsBetter(path string) bool {
	for _, m := range Metrics {
		if m.Name == path || m.Kind == MetricDistribution && strings.HasPrefix(path, m.Name+".") {
			return m.HigherIsBetter
		}
	}
	return false
}
