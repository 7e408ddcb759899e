// Package guidellm imports GuideLLM benchmark reports (benchmarks.json or
// benchmarks.yaml): every benchmark of a sweep becomes its own load point,
// the warmup and cooldown windows are kept (requests outside a
// benchmark's measurement window become warmup records), and the tool's
// metrics become claims under GuideLLM's definitions.
package guidellm
