// Package genaiperf imports GenAI-Perf (perf_analyzer) exports:
// profile_export.json with absolute per-request and per-response
// timestamps in ns (one load point per experiment), and the tool's summary
// profile_export_genai_perf.json, turned into claims under GenAI-Perf's
// definitions.
package genaiperf
