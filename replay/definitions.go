package replay

import (
	"strings"
)

// Definition is a named set of metric definitions.
type Definition struct {
	Name string
	// Summary is a one-line description; Help the full definition text
	// (used by benchseal replay --help and docs/replay.md).
	Summary string
	Help    string
	// Aliases maps the tool's own metric names to replay result paths.
	Aliases map[string]string
	// Notes say what these definitions cannot compute.
	Notes []string
}

func (d *Definition) canonical() bool { return d.Name == "benchseal" }

// DefinitionNames lists every definitions name, canonical first.
var DefinitionNames = []string{"benchseal", "aiperf", "vllm", "sglang", "guidellm", "llmperf", "mlperf", "genai-perf", "inference-perf"}

var definitions = map[string]*Definition{
	"benchseal": {
		Name:    "benchseal",
		Summary: "canonical: exact integers and rationals, nearest-rank percentiles, population stddev",
		Help: `ttft = chunks_ns[0]; e2e = chunks_ns[last] (final content token); tpot = (chunks_ns[last] − chunks_ns[0]) ÷ (output_tokens − 1)
per request, exact rational, for answers of ≥ 2 tokens (NVIDIA/AIPerf call this ITL); itl = gaps between consecutive content
chunks, pooled over requests (as vLLM/SGLang mean ITL); send_lag = sent − scheduled; ttft_sched/e2e_sched from the scheduled
time. Only ok requests with ≥ 1 content chunk enter latency distributions. Window = latest final token of ok requests −
earliest sent_ns of measured requests. Percentile = sorted[max(1, ⌈q·n⌉) − 1], q exact (p01 = 0.1th, p1, p5, p10, p25,
p50, p75, p90, p95, p99, p999). Stddev population (ddof 0), exact.
Goodput = ok requests meeting every SLO limit (inclusive) per second of the window; slo_attainment = good ÷ sent,
slo_attainment_ok = good ÷ ok.`,
	},
	"aiperf": {
		Name:    "aiperf",
		Summary: "NVIDIA AIPerf: ITL = (latency − TTFT)/(OSL − 1) (→ tpot_ns), inter-chunk latency (→ itl_ns), numpy linear, ddof 0",
		Help: `Valid (non-error) records only. ttft = first content response − request start; request_latency = last content response −
start; inter_token_latency = (request_latency − ttft)/(OSL − 1), none for OSL < 2 (reported as tpot_ns); inter_chunk_latency =
pooled content-chunk gaps (itl_ns); benchmark_duration = max response timestamp − min request timestamp; throughputs = totals
÷ duration (float64), total_token_throughput counting input + output tokens. Percentiles numpy linear, mean/std numpy (ddof 0) in float64. orig: metrics {tag: {value, unit}} as AIPerf
wrote them (ms), min_request_timestamp/max_response_timestamp (ns). A one-token answer fails a TPOT (ITL) limit;
slo_attainment = good ÷ (valid + error) records.`,
		Aliases: map[string]string{"time_to_first_token": "ttft_ns", "ttft": "ttft_ns", "request_latency": "e2e_ns", "inter_token_latency": "tpot_ns", "inter_chunk_latency": "itl_ns", "request_throughput": "request_throughput", "output_token_throughput": "output_token_throughput", "benchmark_duration": "window_ns", "goodput": "goodput", "total_token_throughput": "total_token_throughput"},
	},
	"vllm": {
		Name:    "vllm",
		Summary: "vLLM bench serve: TPOT (latency−ttft)/(n−1), ITL pooled per chunk, duration = harness wall clock, numpy linear, ddof 0",
		Help: `Successful requests only. ttft = first SSE chunk − send; e2el = latency; tpot = (latency − ttft)/(output_len − 1) for
output_len > 1; itl = every chunk gap, pooled; duration = orig "duration" (s, the harness wall clock, carried on records) else
max(end_ns) − min(sent_ns). request_goodput counts successes meeting every limit; a one-token answer has tpot 0 for
goodput. numpy linear percentiles, np.mean, np.std (ddof 0) in float64 seconds, reported ×10⁹ in ns. orig: ttft (s),
itl [s], latency (s, optional), output_len, input_len, success/error.`,
		Aliases: map[string]string{"ttft": "ttft_ns", "tpot": "tpot_ns", "itl": "itl_ns", "e2el": "e2e_ns", "request_throughput": "request_throughput", "output_throughput": "output_token_throughput", "total_token_throughput": "total_token_throughput", "request_goodput": "goodput"},
	},
	"sglang": {
		Name:    "sglang",
		Summary: "SGLang bench_serving: as vLLM (TPOT per request, ITL pooled per chunk), numpy linear, ddof 0",
		Help: `As vllm: successful requests only; tpot = (latency − ttft)/(output_len − 1) for output_len > 1; itl pooled per chunk;
duration = orig "duration" (s) else max(end_ns) − min(sent_ns); numpy linear percentiles, mean, std ddof 0. SGLang has no
goodput; goodput here follows vllm's rule.`,
		Aliases: map[string]string{"ttft": "ttft_ns", "tpot": "tpot_ns", "itl": "itl_ns", "e2e_latency": "e2e_ns", "request_throughput": "request_throughput", "output_throughput": "output_token_throughput", "total_throughput": "total_token_throughput"},
	},
	"guidellm": {
		Name:    "guidellm",
		Summary: "GuideLLM: ITL = (last−first token)/(n−1) weighted (→ tpot_ns), TPOT incl. TTFT (extra), inverted-CDF weighted percentiles",
		Help: `Successful requests inside the measurement window (request_end ≥ measure_start and request_start ≤ measure_end).
ttft = first_token_iteration − request_start; request_latency = request_end − request_start; inter_token_latency =
(last_token_iteration − first_token_iteration)/(output_tokens − 1), weighted by output_tokens − 1 (tpot_ns);
time_per_output_token = (last_token_iteration − request_start)/output_tokens, weighted by output_tokens
(time_per_output_token_ns). Weighted mean, population-weighted std, percentiles = first value whose cumulative weight ≥ q.
Window = measure_end − measure_start (orig) else max(request_end) − min(request_start). orig: info.timings (epoch s).
Rates are GuideLLM's duration-weighted rate distributions (requests_per_second, output_tokens_per_second,
tokens_per_second, prompt_tokens_per_second; n = requests or tokens counted): events (request_end inside the window;
prompt tokens at the first token; one output token at the first token iteration and (n − 1)/(iterations − 1) at each
later iteration, spaced evenly to the last) merged when equal or within 0.1 ms, each weighted by the time from the
midpoint with its predecessor to the midpoint with its successor; request/output_token/total_token_throughput are
their means.`,
		Aliases: map[string]string{"time_to_first_token_ms": "ttft_ns", "inter_token_latency_ms": "tpot_ns", "time_per_output_token_ms": "time_per_output_token_ns", "request_latency": "e2e_ns",
			"requests_per_second": "requests_per_second", "output_tokens_per_second": "output_tokens_per_second", "tokens_per_second": "tokens_per_second", "prompt_tokens_per_second": "prompt_tokens_per_second"},
	},
	"llmperf": {
		Name:    "llmperf",
		Summary: "LLMPerf: ITL = Σ gaps incl. TTFT ÷ tokens (extra inter_token_latency_ns), pandas linear percentiles, std ddof 1",
		Help: `Rows without error_code only. ttft = ttft_s; e2e = end_to_end_latency_s; inter_token_latency = inter_token_latency_s
(LLMPerf's: Σ chunk gaps including TTFT ÷ output tokens, ≈ e2e/n) as inter_token_latency_ns; no TPOT, no chunk-gap ITL.
pandas Series.quantile (linear), mean, std (ddof 1). Throughputs need LLMPerf's run start/end, which it does not store:
the window falls back to max(end_ns) − min(sent_ns).`,
		Aliases: map[string]string{"ttft_s": "ttft_ns", "end_to_end_latency_s": "e2e_ns", "inter_token_latency_s": "inter_token_latency_ns"},
		Notes:   []string{"llmperf: mean_output_throughput and completed-per-minute depend on run start/end times LLMPerf does not store; the window is max(end_ns) − min(sent_ns)"},
	},
	"mlperf": {
		Name:    "mlperf",
		Summary: "MLPerf LoadGen: TTFT from scheduled time, TPOT truncated to int ns, percentile sorted[⌊n·p⌋], no stddev",
		Help: `ttft = first token − scheduled time (actual send when unscheduled); latency = last token − scheduled; tpot =
(latency − ttft)/(n − 1) truncated to integer ns; percentile = sorted[⌊n·p⌋] (p as a double, as LoadGen); mean = integer sum
÷ count; no stddev (null). request_throughput = (completed − 1) ÷ duration. Use --mlperf for the validity check.`,
		Aliases: map[string]string{"result_first_token_99.00_percentile_latency_ns": "ttft_ns.p99", "result_time_per_output_token_99.00_percentile_ns": "tpot_ns.p99", "result_first_token_mean_latency_ns": "ttft_ns.mean"},
	},
	"genai-perf": {
		Name:    "genai-perf",
		Summary: "GenAI-Perf: ITL = round((latency − TTFT)/(OSL − 1)) (→ tpot_ns), numpy linear, ddof 0",
		Help: `ttft = response_timestamps[0] − timestamp; latency = last response − timestamp; inter_token_latency =
round((latency − ttft)/(OSL − 1)) (Python round, half to even) when > 1 response and OSL > 1 (tpot_ns); duration = max last
response − min request timestamp; numpy linear percentiles, np.std (ddof 0).`,
		Aliases: map[string]string{"time_to_first_token": "ttft_ns", "request_latency": "e2e_ns", "inter_token_latency": "tpot_ns"},
	},
	"inference-perf": {
		Name:    "inference-perf",
		Summary: "kubernetes-sigs/inference-perf: TPOT (last−first token)/(N−1), ITL per token (intra-chunk gaps 0), numpy linear, no std",
		Help: `Successes only. ttft = first token time − start; tpot = (last token time − first token time)/(N − 1); ntpot =
(end − start)/N (normalized_time_per_output_token_ns); itl = every
consecutive token-time gap, tokens of one chunk sharing its arrival time (intra-chunk gaps 0); total_time = max end −
min start over all requests; throughputs = successes ÷ total_time; goodput over successes: a one-token answer fails a TPOT
limit; slo_attainment = good ÷ successes. numpy linear percentiles; no stddev (null).`,
		Aliases: map[string]string{"time_to_first_token": "ttft_ns", "time_per_output_token": "tpot_ns", "inter_token_latency": "itl_ns", "request_latency": "e2e_ns", "normalized_time_per_output_token": "normalized_time_per_output_token_ns"},
	},
}

func lookupDefinition(name string) (*Definition, error) {
	if name == "" {
		name = "benchseal"
	}
	d, ok := definitions[strings.ToLower(name)]
	if !ok {
		return nil, badInput("unknown definitions %q (want one of %s)", name, strings.Join(DefinitionNames, ", "))
	}
	return d, nil
}

// LookupDefinition returns the named definitions.
func LookupDefinition(name string) (*Definition, error) { return lookupDefinition(name) }
