package schema

import (
	"fmt"
	"slices"
	"strings"
)

// The claim path catalogue: every metric a claim may name, per
// definitions. replay computes exactly these (a replay test keeps the two
// in step); a claim naming anything else is invalid, so that no claim can
// escape checking by naming a metric nobody recomputes.
var (
	// ClaimScalars are the point-and-repeat scalar metrics, in output
	// order (Metrics).
	ClaimScalars = metricsWhere(MetricScalar, func(MetricDef) bool { return true })
	// ClaimCounts are the keys of counts.KEY, in output order.
	ClaimCounts = []string{"sent", "ok", "error", "timeout", "cancelled", "rejected", "warmup", "ok_no_content", "one_token", "good", "not_sent"}
	// ClaimDistNames are the canonical distributions, in output order
	// (Metrics).
	ClaimDistNames = metricsWhere(MetricDistribution, func(MetricDef) bool { return true })
	// ClaimDistKeys are the keys of a distribution, in output order.
	ClaimDistKeys   = []string{"n", "mean", "stddev", "min", "p01", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "p999", "max"}
	claimStallKeys  = []string{"threshold_ns", "count", "requests", "max_gap_ns"}
	claimMLPerfKeys = []string{"valid", "ttft_p99_ns", "tpot_p99_ns", "ttft_over", "tpot_over", "ttft_min_queries", "tpot_min_queries", "queries", "duration_ns"}
	// ClaimSummaryMetrics are the metrics summarised across repeats,
	// claimed as summary.METRIC.FIELD (Metrics' Summary).
	ClaimSummaryMetrics = summaryMetrics()
	claimSummaryFields  = []string{"median", "ci_low", "ci_high", "n"}
	// ClaimOverloadKeys are the keys of overload.KEY, in output order: the
	// two flags (1 set, 0 not set) and the quantities they rest on.
	ClaimOverloadKeys = []string{
		"overloaded", "generator_limited", "offered_rate", "arrival_rate", "completion_rate", "backlog_share",
		"outstanding_peak", "outstanding_slope_per_s", "send_lag_slope_ns_per_s",
	}
	// ClaimEnergyKeys are the keys of energy.KEY, in output order: the
	// accelerator energy of the point × repeat's window from its stored
	// accelerator scrapes (joules, with the bounds the scrape times give),
	// its mean power, the energy per output token, per good token and per
	// good request, and its cost at the declared price per kWh. Each is
	// the interpolated value (replay's EnergyColumn), recomputed from the
	// scrapes like any other claim.
	ClaimEnergyKeys = []string{
		"energy_j", "energy_j_lo", "energy_j_hi", "mean_power_w",
		"j_per_output_token", "j_per_good_token", "j_per_good_request", "energy_cost",
	}
)

// ClaimDists returns the distributions a claim may name under definitions
// (the canonical ones plus the definitions' extras).
func ClaimDists(definitions string) []string {
	out := slices.Clone(ClaimDistNames)
	if t := peerTool(definitions); t != nil {
		out = append(out, t.ExtraDists...)
	}
	return out
}

// CheckClaimMetric reports whether path names a metric replay computes
// under definitions: a scalar ("goodput"), "counts.KEY", "DIST.KEY"
// ("ttft_ns.p99"), "stalls.KEY", "mlperf.KEY", "overload.KEY",
// "energy.KEY" or "summary.METRIC.FIELD".
// Paths are matched exactly (no case folding, no spaces).
func CheckClaimMetric(definitions, path string) error {
	if definitions == "" {
		definitions = "benchseal"
	}
	if slices.Contains(ClaimScalars, path) {
		return nil
	}
	if rest, ok := strings.CutPrefix(path, "summary."); ok {
		i := strings.LastIndex(rest, ".")
		if i > 0 && slices.Contains(ClaimSummaryMetrics, rest[:i]) && slices.Contains(claimSummaryFields, rest[i+1:]) {
			return nil
		}
		return fmt.Errorf("%q is not a summary metric: want summary.METRIC.FIELD with METRIC one of %s and FIELD one of %s",
			path, strings.Join(ClaimSummaryMetrics, ", "), strings.Join(claimSummaryFields, ", "))
	}
	head, key, ok := strings.Cut(path, ".")
	if ok {
		var keys []string
		switch {
		case head == "counts":
			keys = ClaimCounts
		case head == "stalls":
			keys = claimStallKeys
		case head == "mlperf":
			keys = claimMLPerfKeys
		case head == "overload":
			keys = ClaimOverloadKeys
		case head == "energy":
			keys = ClaimEnergyKeys
		case slices.Contains(ClaimDists(definitions), head):
			keys = ClaimDistKeys
		}
		if keys != nil {
			if slices.Contains(keys, key) {
				return nil
			}
			return fmt.Errorf("%q: %q is not a key of %s (want one of %s)", path, key, head, strings.Join(keys, ", "))
		}
	}
	return fmt.Errorf("%q is not a metric computed under %s definitions (a scalar such as "+MetricRequestThroughput+", counts.KEY, DIST.KEY with DIST one of %s, stalls.KEY, mlperf.KEY, overload.KEY, energy.KEY or summary.METRIC.FIELD)",
		path, definitions, strings.Join(ClaimDists(definitions), ", "))
}

// placementFree are the claim heads whose values a run merged from shards
// determines without placing two shards' timelines relative to each other:
// per-request differences on one machine's monotonic clock (latencies,
// send lag against the shard's own schedule, stalls), the shares of
// requests meeting the SLO, and counts. Of the canonical metrics these are
// the ones the table does not mark Windowed, distributions included; the
// peers' latency distributions are added by name.
var placementFree = slices.Concat([]string{"counts", "stalls"},
	metricsWhere(MetricScalar, func(m MetricDef) bool { return !m.Windowed }),
	metricsWhere(MetricDistribution, func(m MetricDef) bool { return !m.Windowed }),
	[]string{"time_per_output_token_ns", "inter_token_latency_ns", "normalized_time_per_output_token_ns"})

// placementFreeMLPerf are the mlperf.KEY keys that do not depend on the
// run's duration (which spans shards).
var placementFreeMLPerf = []string{"ttft_p99_ns", "tpot_p99_ns", "ttft_over", "tpot_over", "ttft_min_queries", "tpot_min_queries", "queries"}

// ClaimRestsOnShardPlacement reports whether the value of claim path (as
// CheckClaimMetric accepts it) depends, in a run merged from several
// shards, on where the shards' timelines sit relative to each other: the
// window and everything computed over it (throughputs, goodputs, cost per
// token, rate distributions, the overload analysis, MLPerf's duration and
// validity). Those shards' clocks (epochs and error bounds) are declared
// by the shards themselves, so such a claim cannot be verified from the
// records. Anything not known to be free of placement is reported as
// resting on it.
func ClaimRestsOnShardPlacement(path string) bool {
	path = strings.TrimPrefix(path, "summary.")
	head, key, _ := strings.Cut(path, ".")
	if head == "mlperf" {
		return !slices.Contains(placementFreeMLPerf, key)
	}
	return !slices.Contains(placementFree, head)
}

// ClaimRestsOnShardOverlap reports whether claim path, in a run merged from
// several shards, describes the load the shards offered together: every
// metric but the counts (a latency is a latency at the point's summed
// concurrency or rate only if the shards ran at once; two shards of c4
// measured one after the other have c4 latencies). Only the shards'
// declared epochs place them, so such a claim is not verified by the
// records even where its value is free of placement
// (ClaimRestsOnShardPlacement).
func ClaimRestsOnShardOverlap(path string) bool {
	head, _, _ := strings.Cut(strings.TrimPrefix(path, "summary."), ".")
	return head != "counts"
}

// ClaimedMetric returns the per-repeat metric a claim path is about
// ("summary.ttft_ns.p99.median" is about "ttft_ns.p99") and whether the
// path is a summary across repeats. A reproduction judges one verdict
// per point and ClaimedMetric.
func ClaimedMetric(path string) (string, bool) {
	rest, ok := strings.CutPrefix(path, "summary.")
	if !ok {
		return path, false
	}
	if i := strings.LastIndex(rest, "."); i > 0 {
		return rest[:i], true
	}
	return rest, true
}

// ExactMetric reports whether a claimed metric is a count or flag, which
// the test itself fixes (a reproduction compares it exactly), rather than
// a measured quantity (latency, throughput, energy) tested as a ratio.
func ExactMetric(metric string) bool {
	for _, p := range []string{"counts.", "overload.", "mlperf.", "stalls.count", "stalls.requests"} {
		if strings.HasPrefix(metric, p) {
			return true
		}
	}
	return false
}

// PointMetric is one claimed metric (ClaimedMetric) at one point.
type PointMetric struct {
	Point, Metric string
}

// ClaimedMetrics returns the distinct point × ClaimedMetric pairs of c,
// in claims order, each with every value claimed for it.
func (c *Claims) ClaimedMetrics() ([]PointMetric, map[PointMetric][]float64) {
	var out []PointMetric
	vals := map[PointMetric][]float64{}
	if c == nil {
		return nil, vals
	}
	for _, pc := range c.Points {
		for _, m := range pc.Metrics {
			metric, _ := ClaimedMetric(m.Metric)
			k := PointMetric{pc.Point, metric}
			if _, ok := vals[k]; !ok {
				out = append(out, k)
			}
			vals[k] = append(vals[k], m.Value)
		}
	}
	return out, vals
}

// ClaimIsDuration reports whether the value of claim path is a duration
// in ns: a path with a segment naming a quantity in ns ("ttft_ns",
// "max_gap_ns", "ttft_p99_ns") unless its last segment is "n", the
// number of samples of a distribution or of repeats of a summary.
// "send_lag_slope_ns_per_s" is a slope, not a duration.
func ClaimIsDuration(path string) bool {
	segs := strings.Split(path, ".")
	if segs[len(segs)-1] == "n" {
		return false
	}
	for _, s := range segs {
		if strings.HasSuffix(s, "_ns") {
			return true
		}
	}
	return false
}
