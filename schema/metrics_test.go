package schema

import (
	"slices"
	"testing"
)

// TestMetricListsDerived pins the lists derived from Metrics: their
// members and order are what claims files, reports and CSV headers print,
// so a change to the table that moves one is a change of format.
func TestMetricListsDerived(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want []string
	}{
		{"ClaimScalars", ClaimScalars, []string{"window_ns", "request_throughput", "output_token_throughput", "total_token_throughput",
			"goodput", "token_goodput", "slo_attainment", "slo_attainment_ok", "smooth_goodput",
			"cost_per_million_output_tokens", "cost_per_million_good_tokens"}},
		{"ClaimDistNames", ClaimDistNames, []string{"ttft_ns", "e2e_ns", "tpot_ns", "itl_ns", "send_lag_ns", "ttft_sched_ns", "e2e_sched_ns"}},
		{"ClaimSummaryMetrics", ClaimSummaryMetrics, []string{"request_throughput", "output_token_throughput", "goodput", "token_goodput", "slo_attainment",
			"ttft_ns.p50", "ttft_ns.p99", "e2e_ns.p50", "e2e_ns.p99", "tpot_ns.p50", "tpot_ns.p99", "itl_ns.p99"}},
		{"SLOMetrics", SLOMetrics, []string{"goodput", "token_goodput", "slo_attainment", "slo_attainment_ok", "cost_per_million_good_tokens", "counts.good"}},
		{"WindowedMetrics", WindowedMetrics, []string{"request_throughput", "output_token_throughput", "total_token_throughput", "goodput", "token_goodput",
			"smooth_goodput", "cost_per_million_output_tokens", "cost_per_million_good_tokens"}},
		{"SLOKeys", SLOKeys, []string{"ttft", "e2e", "tpot"}},
	} {
		if !slices.Equal(c.got, c.want) {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
}

func TestMetricProperties(t *testing.T) {
	for _, c := range []struct {
		path        string
		slo, higher bool
	}{
		{"goodput", true, true},
		{"summary.goodput.median", true, false},
		{"counts.good", true, false},
		{"counts.ok", false, false},
		{"slo_attainment_ok", true, true},
		{"cost_per_million_good_tokens", true, false},
		{"request_throughput", false, true},
		{"ttft_ns.p99", false, false},
		{"tpot_ns", false, false},
		{"energy.j_per_good_token", false, false},
		{"no_such_metric", false, false},
	} {
		if got := MetricNeedsSLO(c.path); got != c.slo {
			t.Errorf("MetricNeedsSLO(%q) = %v, want %v", c.path, got, c.slo)
		}
		if got := MetricHigherIsBetter(c.path); got != c.higher {
			t.Errorf("MetricHigherIsBetter(%q) = %v, want %v", c.path, got, c.higher)
		}
	}
}

// TestPlacementFreeDerived pins the claim heads free of shard placement,
// which placementFree derives from the table's Windowed.
func TestPlacementFreeDerived(t *testing.T) {
	want := []string{"counts", "stalls", "slo_attainment", "slo_attainment_ok",
		"ttft_ns", "e2e_ns", "tpot_ns", "itl_ns", "send_lag_ns", "ttft_sched_ns", "e2e_sched_ns",
		"time_per_output_token_ns", "inter_token_latency_ns", "normalized_time_per_output_token_ns"}
	if !slices.Equal(placementFree, want) {
		t.Errorf("placementFree = %q, want %q", placementFree, want)
	}
}

// TestSLOKeysNameTheirMetrics pins each SLO limit to the metric it limits
// and to manifest.slo's field of that name.
func TestSLOKeysNameTheirMetrics(t *testing.T) {
	slo := SLO{TTFT: 1, E2E: 2, TPOT: 3}
	for _, c := range []struct {
		key, metric string
		limit       Duration
	}{{"ttft", "ttft_ns", 1}, {"e2e", "e2e_ns", 2}, {"tpot", "tpot_ns", 3}} {
		m, ok := SLOMetric(c.key)
		if !ok || m.Name != c.metric {
			t.Errorf("SLOMetric(%q) = %q, %v, want %q", c.key, m.Name, ok, c.metric)
		}
		if got := slo.Limit(c.key); got != c.limit {
			t.Errorf("SLO.Limit(%q) = %v, want %v", c.key, got, c.limit)
		}
	}
	for _, k := range []string{"", "itl", "one_token"} {
		if m, ok := SLOMetric(k); ok {
			t.Errorf("SLOMetric(%q) = %q, want none", k, m.Name)
		}
		if got := slo.Limit(k); got != 0 {
			t.Errorf("SLO.Limit(%q) = %v, want 0", k, got)
		}
	}
}
