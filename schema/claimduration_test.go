package schema

import "testing"

func TestClaimIsDuration(t *testing.T) {
	for _, c := range []struct {
		path string
		want bool
	}{
		{"ttft_ns.p99", true},
		{"ttft_ns.mean", true},
		{"ttft_ns.n", false},
		{"itl_ns.stddev", true},
		{"time_per_output_token_ns.p50", true},
		{"requests_per_second.p50", false},
		{"goodput", false},
		{"counts.ok", false},
		{"stalls.threshold_ns", true},
		{"stalls.max_gap_ns", true},
		{"stalls.count", false},
		{"mlperf.ttft_p99_ns", true},
		{"mlperf.duration_ns", true},
		{"mlperf.queries", false},
		{"overload.send_lag_slope_ns_per_s", false},
		{"overload.offered_rate", false},
		{"summary.ttft_ns.p99.median", true},
		{"summary.ttft_ns.p99.n", false},
		{"summary.goodput.median", false},
		{"energy.energy_j", false},
	} {
		if got := ClaimIsDuration(c.path); got != c.want {
			t.Errorf("ClaimIsDuration(%q) = %v, want %v", c.path, got, c.want)
		}
	}
	// Every canonical distribution: its statistics are durations exactly
	// when the metrics table gives it the unit ns, except its count.
	for _, d := range ClaimDistNames {
		for _, k := range ClaimDistKeys {
			want := MetricUnit(d) == "ns" && k != "n"
			if got := ClaimIsDuration(MetricPath(d, k)); got != want {
				t.Errorf("ClaimIsDuration(%q) = %v, want %v (unit %q)", MetricPath(d, k), got, want, MetricUnit(d))
			}
		}
	}
}
