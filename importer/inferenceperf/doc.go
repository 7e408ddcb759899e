// Package inferenceperf imports kubernetes-sigs/inference-perf reports:
// per_request_lifecycle_metrics.json (opt-in per-request data with
// absolute chunk times) and the lifecycle summaries
// (summary_lifecycle_metrics.json, stage_N_lifecycle_metrics.json), turned
// into claims under inference-perf's definitions.
package inferenceperf
