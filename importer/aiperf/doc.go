// Package aiperf imports NVIDIA AIPerf exports: profile_export.jsonl (the
// 2025 development schema with timestamp_ns and credit_phase, and schema
// 1.x with request_start_ns and benchmark_phase), profile_export_aiperf.json
// (the tool's summary, turned into claims under AIPerf's definitions) and
// profile_export_raw.jsonl (absolute per-chunk times).
package aiperf
