// Package vllm imports the result JSON of vLLM's `vllm bench serve` and
// its predecessor benchmark_serving.py: the old layout (per-request lists
// always saved, no send times) and the new --save-detailed layout (with
// start_times and, in later versions, latencies). The tool's summary
// becomes claims under vLLM's definitions.
package vllm
