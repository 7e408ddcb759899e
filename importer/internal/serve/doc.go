// Package serve holds what the vLLM and SGLang importers share: both
// tools descend from vLLM's 2024 benchmark_serving.py and save one JSON
// object per run with summary fields and parallel per-request lists
// (input_lens, output_lens, ttfts, itls, errors, and in newer vLLM
// start_times and latencies), all times in seconds.
package serve
