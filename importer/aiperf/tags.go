package aiperf

import (
	"strconv"
	"strings"
)

// AIPerf has spelt some metric tags differently across versions. Each list
// below holds every spelling of one quantity, newest first; the importer
// takes the first one a record or summary carries.
//
//   - "time_to_first_token", "time_to_second_token": since ai-dynamo/aiperf
//     PR #343 ("Match GenAI-Perf format for json summary export", commit
//     43b7890214fce935ede0e9920fa2d25808706480, 2025-10-10), which is in
//     every release that writes schema_version (1.0 in 0.3–0.8, 1.3 in
//     0.10.0); seen in aiperf tests/unit/plot/fixtures (Nov 2025) and in
//     real 0.10.0 exports (testdata/README.md).
//   - "ttft", "ttst": the development schema before that commit (e.g.
//     examples/artifacts/run1 at 7c31f57933ad8a452db7737d05dba2b29cd6bf8c,
//     this repository's run1_* fixture).
//
// The other tags this importer reads (request_latency,
// inter_token_latency, inter_chunk_latency, input_sequence_length,
// output_sequence_length, error_isl, max_response_timestamp,
// request_count, benchmark_duration, request_throughput,
// output_token_throughput, total_token_throughput, goodput) kept one
// spelling in all of these versions.
var (
	ttftTags = []string{"time_to_first_token", "ttft"}
	ttstTags = []string{"time_to_second_token", "ttst"}
)

// firstTag returns the first of tags that has reports present.
func firstTag(tags []string, has func(string) bool) (string, bool) {
	for _, t := range tags {
		if has(t) {
			return t, true
		}
	}
	return "", false
}

// tdigestSince is the first AIPerf release whose inter_chunk_latency
// percentiles are t-digest approximations rather than exact numpy
// percentiles (upstream change #865, released in 0.10.0).
var tdigestSince = [3]int{0, 10, 0}

// tdigestSchema is the summary schema_version that 0.10.0 writes; a summary
// without aiperf_version but with this schema or later is treated as
// approximate too.
var tdigestSchema = [2]int{1, 3}

// approxICL reports whether the summary's inter_chunk_latency percentiles
// are approximations, and why.
func approxICL(s *Summary) (string, bool) {
	if v, ok := parseVersion(s.AIPerfVersion, 3); ok {
		if !less(v, tdigestSince[:]) {
			return "AIPerf " + s.AIPerfVersion + " computes inter_chunk_latency percentiles with an approximate t-digest (upstream change #865, AIPerf ≥ 0.10), not exactly from the gaps it exports", true
		}
		return "", false
	}
	if v, ok := parseVersion(s.SchemaVersion, 2); ok && !less(v, tdigestSchema[:]) {
		return "summary schema_version " + s.SchemaVersion + " without aiperf_version: written by AIPerf ≥ 0.10, whose inter_chunk_latency percentiles are t-digest approximations (upstream change #865)", true
	}
	return "", false
}

// parseVersion reads the first n dot-separated integers of a version such
// as "0.10.0" or "1.3" (missing parts are 0; a suffix like "rc1" or
// ".dev0" after them is ignored).
func parseVersion(s string, n int) ([]int, bool) {
	if s == "" {
		return nil, false
	}
	parts := strings.Split(s, ".")
	out := make([]int, n)
	for i := 0; i < n && i < len(parts); i++ {
		digits := parts[i]
		j := 0
		for j < len(digits) && digits[j] >= '0' && digits[j] <= '9' {
			j++
		}
		if j == 0 {
			if i == 0 {
				return nil, false
			}
			break
		}
		v, err := strconv.Atoi(digits[:j])
		if err != nil {
			return nil, false
		}
		out[i] = v
		if j < len(digits) {
			break
		}
	}
	return out, true
}

func less(a, b []int) bool {
	for i := range min(len(a), len(b)) {
		if a[i] != b[i] {
			return a[i] < b[i]
		}
	}
	return false
}
