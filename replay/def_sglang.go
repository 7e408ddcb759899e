package replay

import "github.com/benchseal/benchseal/schema"

// sglangDef is SGLang bench_serving's definitions (github.com/sgl-project/sglang,
// python/sglang/bench_serving.py): adapted from vLLM's benchmark_serving, it computes as vLLM does
// (vllmRules). SGLang has no goodput (PR sgl-project/sglang#5495 was not
// merged); goodput here follows vLLM's rule.
var sglangDef = &vllmDefinition{info{
	tool:    schema.SGLang,
	summary: "SGLang bench_serving: as vLLM (TPOT per request, ITL pooled per chunk), numpy linear, ddof 0",
	help: `As vllm: successful requests only; tpot = (latency − ttft)/(output_len − 1) for output_len > 1; itl pooled per chunk;
duration = orig "duration" (s) else max(end_ns) − min(sent_ns); numpy linear percentiles, mean, std ddof 0. SGLang has no
goodput; goodput here follows vllm's rule.`,
	aliases:      map[string]string{"ttft": schema.MetricTTFT, "tpot": schema.MetricTPOT, "itl": schema.MetricITL, "e2e_latency": schema.MetricE2E, "request_throughput": schema.MetricRequestThroughput, "output_throughput": schema.MetricOutputTokenThroughput, "total_throughput": schema.MetricTotalTokenThroughput},
	oneToken:     schema.OneTokenPass,
	oneTokenRule: "SGLang has no goodput; vLLM's rule applies: a one-token answer has tpot 0 for goodput, so it passes a TPOT limit",
}}

func init() { register(sglangDef) }
