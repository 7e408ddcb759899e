package aiperf

import (
	"github.com/benchseal/benchseal/importer/ingest"

	"github.com/benchseal/benchseal/schema"
)

// distributions maps AIPerf record-metric tags to replay distributions.
// AIPerf's "inter_token_latency" is (request_latency − TTFT)/(OSL − 1) per
// request, which the replay contract calls tpot; its pooled per-chunk gaps
// ("inter_chunk_latency") are the contract's itl.
// The extra distributions are AIPerf's own per-record metrics, which
// replay's AIPerf definitions summarise as AIPerf does; count marks those
// whose values are counts or rates (claimed as written, not as times).
var distributions = []struct {
	tags  []string
	dist  string
	count bool
}{
	{ttftTags, schema.MetricTTFT, false},
	{[]string{"request_latency"}, schema.MetricE2E, false},
	{[]string{"inter_token_latency"}, schema.MetricTPOT, false},
	{[]string{"inter_chunk_latency"}, schema.MetricITL, false},
	{ttstTags, "time_to_second_token_ns", false},
	{[]string{"output_token_throughput_per_user"}, "output_token_throughput_per_user", true},
	{[]string{"input_sequence_length"}, "input_sequence_length", true},
	{[]string{"output_sequence_length"}, "output_sequence_length", true},
}

// percentiles are the statistics a t-digest approximates.
var percentiles = map[string]bool{"p1": true, "p5": true, "p10": true, "p25": true, "p50": true, "p75": true, "p90": true, "p95": true, "p99": true}

var statOrder = []string{"count", "avg", "std", "min", "p1", "p5", "p10", "p25", "p50", "p75", "p90", "p95", "p99", "max"}

func addClaims(c *ingest.ClaimSet, s *Summary, file, point string) {
	approx, isApprox := approxICL(s)
	for _, d := range distributions {
		tag, ok := firstTag(d.tags, func(t string) bool { _, ok := s.Metrics[t]; return ok })
		if !ok {
			continue
		}
		st := s.Metrics[tag]
		u, ok := unitNS(st.Unit)
		if d.count {
			u, ok = 1, st.Unit == "tokens" || st.Unit == "tokens/sec/user"
		}
		if !ok {
			continue
		}
		for _, k := range statOrder {
			v, ok := st.Values[k]
			if !ok {
				continue
			}
			mul := u
			if k == "count" {
				mul = 1
			}
			if isApprox && d.dist == schema.MetricITL && percentiles[k] {
				c.AddNotRecomputable(file, point, d.dist+"."+ingest.StatKeys[k], tag+"."+k, v, mul, approx)
				continue
			}
			c.Add(file, point, d.dist+"."+ingest.StatKeys[k], tag+"."+k, v, mul)
		}
	}
	scalar := func(tag, metric string, mul int64) {
		if st, ok := s.Metrics[tag]; ok {
			c.Add(file, point, metric, tag+".avg", st.Values["avg"], mul)
		}
	}
	scalar("request_count", "counts.ok", 1)
	if st, ok := s.Metrics["benchmark_duration"]; ok {
		if u, ok := unitNS(st.Unit); ok {
			c.Add(file, point, schema.MetricWindow, "benchmark_duration.avg", st.Values["avg"], u)
		}
	}
	scalar("request_throughput", schema.MetricRequestThroughput, 1)
	scalar("output_token_throughput", schema.MetricOutputTokenThroughput, 1)
	scalar("total_token_throughput", schema.MetricTotalTokenThroughput, 1)
	scalar("goodput", schema.MetricGoodput, 1)
}
