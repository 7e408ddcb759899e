// Package mlperf imports MLPerf Inference LoadGen logs
// (mlperf_log_summary.txt and mlperf_log_detail.txt). They hold aggregates
// only, so an import is an external-evidence reference in the manifest —
// LoadGen version, scenario, constraints, validity, seeds and results —
// with no records and no load points, never fake requests.
package mlperf
