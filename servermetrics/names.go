package servermetrics

// Engines whose metric names the package knows.
const (
	EngineVLLM   = "vllm"
	EngineSGLang = "sglang"
	EngineTGI    = "tgi"
	// EngineLlamaCpp is llama.cpp's llama-server (started with --metrics).
	EngineLlamaCpp = "llamacpp"
)

// Engines lists the engines of Names, in the order DetectEngine tries them.
var Engines = []string{EngineVLLM, EngineSGLang, EngineTGI, EngineLlamaCpp}

// Roles: what a metric measures, independent of the engine's name for it.
const (
	// Histograms of per-request (or per-token) times, in seconds.
	RoleTTFT    = "ttft"
	RoleITL     = "itl"
	RoleTPOT    = "tpot"
	RoleE2E     = "e2e"
	RoleQueue   = "queue"
	RolePrefill = "prefill"
	RoleDecode  = "decode"
	// Counters.
	RolePromptTokens     = "prompt_tokens"
	RoleGenerationTokens = "generation_tokens"
	RoleRequestSuccess   = "request_success"
	RolePreemptions      = "preemptions"
	// RolePromptTokensCached counts prompt tokens the engine reused from
	// its cache instead of computing them (llama.cpp counts them apart
	// from RolePromptTokens).
	RolePromptTokensCached = "prompt_tokens_cached"
	// RolePromptSeconds and RoleGenerationSeconds are the engine's total
	// time spent on prompts and on generating tokens, in seconds.
	RolePromptSeconds     = "prompt_seconds"
	RoleGenerationSeconds = "generation_seconds"
	// RoleDecodeCalls counts the engine's forward passes (llama_decode).
	RoleDecodeCalls = "decode_calls"
	// Gauges.
	RoleRunning = "running"
	RoleWaiting = "waiting"
	RoleKVCache = "kv_cache_usage"
	// RoleBusySlotsPerDecode is llama.cpp's mean of busy slots per
	// forward pass since the server started: a running average, not a
	// state.
	RoleBusySlotsPerDecode = "busy_slots_per_decode"
)

// Metric kinds.
const (
	KindHistogram = "histogram"
	KindCounter   = "counter"
	KindGauge     = "gauge"
)

// Name maps one role of one engine to the engine's metric name.
type Name struct {
	Engine string
	Role   string
	Kind   string
	// Metric is the metric family name as exposed (a counter's family
	// name, without the _total suffix the text format adds, is what
	// expfmt reports for a typed counter; both spellings are looked up).
	Metric string
	// Note says what the engine means by it where that differs from the
	// role's plain meaning.
	Note string
}

// Names is the one table of engine metric names benchseal reads
// (docs/server-metrics.md prints the same table). Sources: vLLM
// docs/design/metrics.md and vllm/v1/metrics/loggers.py; SGLang
// docs/references/production_metrics.md and metrics_collector.py; TGI
// docs/source/reference/metrics.md; llama.cpp tools/server/server-task.cpp
// (server_task_result_metrics::to_metrics, release v0.5.0 of
// node-llama-cpp's bundle, commit de3ff815). TGI has no TTFT histogram;
// llama.cpp exposes no histogram and no finished-requests counter at all.
var Names = []Name{
	{EngineVLLM, RoleTTFT, KindHistogram, "vllm:time_to_first_token_seconds", "from the frontend's arrival time (tokenization start), so it excludes the network and HTTP handling before it"},
	{EngineVLLM, RoleITL, KindHistogram, "vllm:inter_token_latency_seconds", "one observation per engine step that produced tokens"},
	{EngineVLLM, RoleTPOT, KindHistogram, "vllm:request_time_per_output_token_seconds", "one observation per finished request: its mean time per output token"},
	{EngineVLLM, RoleE2E, KindHistogram, "vllm:e2e_request_latency_seconds", "arrival to finish inside the server"},
	{EngineVLLM, RoleQueue, KindHistogram, "vllm:request_queue_time_seconds", "time in WAITING"},
	{EngineVLLM, RolePrefill, KindHistogram, "vllm:request_prefill_time_seconds", ""},
	{EngineVLLM, RoleDecode, KindHistogram, "vllm:request_decode_time_seconds", ""},
	{EngineVLLM, RolePromptTokens, KindCounter, "vllm:prompt_tokens_total", ""},
	{EngineVLLM, RoleGenerationTokens, KindCounter, "vllm:generation_tokens_total", ""},
	{EngineVLLM, RoleRequestSuccess, KindCounter, "vllm:request_success_total", "all finished_reason labels summed"},
	{EngineVLLM, RolePreemptions, KindCounter, "vllm:num_preemptions_total", ""},
	{EngineVLLM, RoleRunning, KindGauge, "vllm:num_requests_running", ""},
	{EngineVLLM, RoleWaiting, KindGauge, "vllm:num_requests_waiting", ""},
	{EngineVLLM, RoleKVCache, KindGauge, "vllm:kv_cache_usage_perc", "a fraction from 0 to 1"},

	{EngineSGLang, RoleTTFT, KindHistogram, "sglang:time_to_first_token_seconds", ""},
	{EngineSGLang, RoleITL, KindHistogram, "sglang:inter_token_latency_seconds", "token-weighted: a chunk's interval counts once per new token"},
	{EngineSGLang, RoleTPOT, KindHistogram, "sglang:time_per_output_token_seconds", "older SGLang releases"},
	{EngineSGLang, RoleE2E, KindHistogram, "sglang:e2e_request_latency_seconds", ""},
	{EngineSGLang, RoleQueue, KindHistogram, "sglang:queue_time_seconds", ""},
	{EngineSGLang, RolePromptTokens, KindCounter, "sglang:prompt_tokens_total", ""},
	{EngineSGLang, RoleGenerationTokens, KindCounter, "sglang:generation_tokens_total", ""},
	{EngineSGLang, RoleRequestSuccess, KindCounter, "sglang:num_requests_total", ""},
	{EngineSGLang, RolePreemptions, KindCounter, "sglang:num_retracted_requests_total", "retractions, SGLang's preemption"},
	{EngineSGLang, RoleRunning, KindGauge, "sglang:num_running_reqs", ""},
	{EngineSGLang, RoleWaiting, KindGauge, "sglang:num_queue_reqs", ""},
	{EngineSGLang, RoleKVCache, KindGauge, "sglang:token_usage", "a fraction from 0 to 1"},

	{EngineTGI, RoleTPOT, KindHistogram, "tgi_request_mean_time_per_token_duration", "one observation per request: its mean time per token"},
	{EngineTGI, RoleE2E, KindHistogram, "tgi_request_duration", ""},
	{EngineTGI, RoleQueue, KindHistogram, "tgi_request_queue_duration", ""},
	{EngineTGI, RoleRequestSuccess, KindCounter, "tgi_request_success", ""},
	{EngineTGI, RoleWaiting, KindGauge, "tgi_queue_size", ""},

	{EngineLlamaCpp, RolePromptTokens, KindCounter, "llamacpp:prompt_tokens_total", "prompt tokens computed, excluding those reused from the cache (prompt_tokens_cached); added when a prompt batch is flushed"},
	{EngineLlamaCpp, RolePromptTokensCached, KindCounter, "llamacpp:prompt_tokens_cached_total", "prompt tokens reused from a slot's cache"},
	{EngineLlamaCpp, RoleGenerationTokens, KindCounter, "llamacpp:tokens_predicted_total", ""},
	{EngineLlamaCpp, RolePromptSeconds, KindCounter, "llamacpp:prompt_seconds_total", ""},
	{EngineLlamaCpp, RoleGenerationSeconds, KindCounter, "llamacpp:tokens_predicted_seconds_total", ""},
	{EngineLlamaCpp, RoleDecodeCalls, KindCounter, "llamacpp:n_decode_total", "llama_decode() calls, excluding speculative and multimodal decoding"},
	{EngineLlamaCpp, RoleRunning, KindGauge, "llamacpp:requests_processing", "slots processing a request"},
	{EngineLlamaCpp, RoleWaiting, KindGauge, "llamacpp:requests_deferred", "requests deferred until a slot is free"},
	{EngineLlamaCpp, RoleBusySlotsPerDecode, KindGauge, "llamacpp:n_busy_slots_per_decode", "an average since the server started, not a current state"},
}

// Lookup returns the engine's name for a role, if it has one.
func Lookup(engine, role string) (Name, bool) {
	for _, n := range Names {
		if n.Engine == engine && n.Role == role {
			return n, true
		}
	}
	return Name{}, false
}
