package replay

import "github.com/benchseal/benchseal/schema"

// benchsealDef is benchseal's canonical definitions, computed exactly by
// the engine itself (engine.go); it has no peer rules.
var benchsealDef = &benchsealDefinition{info{
	name:    "benchseal",
	summary: "canonical: exact integers and rationals, nearest-rank percentiles, population stddev",
	help: `ttft = chunks_ns[0]; e2e = chunks_ns[last] (final content token); tpot = (chunks_ns[last] − chunks_ns[0]) ÷ (output_tokens − 1)
per request, exact rational, for answers of ≥ 2 tokens (NVIDIA/AIPerf call this ITL); itl = gaps between consecutive content
chunks, pooled over requests (as vLLM/SGLang mean ITL); send_lag = sent − scheduled; ttft_sched/e2e_sched from the scheduled
time. Only ok requests with ≥ 1 content chunk enter latency distributions. Window = the elapsed measurement interval: latest
end (end_ns, or the last chunk if later) of any measured request, ok or failed − earliest sent_ns of measured requests. Percentile = sorted[max(1, ⌈q·n⌉) − 1], q exact (p01 = 0.1th, p1, p5, p10, p25,
p50, p75, p90, p95, p99, p999). Stddev population (ddof 0), exact.
Good request: ` + GoodRequestRule + `.
` + schema.MetricGoodput + ", " + schema.MetricTokenGoodput + `: ` + GoodputRule + `.
` + schema.MetricSLOAttainment + ", " + schema.MetricSLOAttainmentOK + `: ` + AttainmentRule + `.`,
}}

func init() { register(benchsealDef) }

type benchsealDefinition struct{ info }

func (*benchsealDefinition) peerRules() peerRules { return nil }
