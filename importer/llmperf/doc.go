// Package llmperf imports LLMPerf (ray-project/llmperf) results:
// *_individual_responses.json (per request: ttft_s, end_to_end_latency_s,
// inter_token_latency_s, token counts) and *_summary.json (the tool's
// flattened summary, turned into claims under LLMPerf's definitions).
package llmperf
