// Trace replay: the schedule of a point whose arrival is "trace" is the
// trace's own request times, shipped in the workload items.

package schema

import (
	"fmt"
	"math"
)

// Trace formats capture reads.
const (
	// TraceMooncake is Mooncake's JSONL trace (timestamp in ms,
	// input_length, output_length, hash_ids), AIPerf's "mooncake_trace".
	TraceMooncake = "mooncake"
	// TraceAzure is the Azure LLM inference trace CSV (TIMESTAMP,
	// ContextTokens, GeneratedTokens).
	TraceAzure = "azure"
	// TraceBurstGPT is the BurstGPT CSV (Timestamp in seconds, Model,
	// Request tokens, Response tokens, Total tokens, Log Type).
	TraceBurstGPT = "burstgpt"
)

// TraceSource names the trace a run replayed and how: which file, which
// part of it and how much faster. The requests themselves are the
// workload items, in trace order, each with its trace_ns (its time in the
// trace less that of the window's first request) and its input and output
// lengths; validate regenerates the schedule from them (TraceOffset).
type TraceSource struct {
	// Format is TraceMooncake, TraceAzure or TraceBurstGPT.
	Format string `json:"format"`
	// File is the trace file's base name; SHA256 the hex SHA-256 of its
	// bytes, so a reader holding the published trace can match it.
	File   string `json:"file,omitempty"`
	SHA256 string `json:"sha256"`
	// Speedup divides every trace time: 10 sends the trace ten times as
	// fast as it was recorded.
	Speedup float64 `json:"speedup"`
	// WindowStartNS and WindowEndNS bound the part of the trace replayed,
	// in trace time since its first request: [start, end), end 0 for the
	// trace's end.
	WindowStartNS int64 `json:"window_start_ns,omitempty"`
	WindowEndNS   int64 `json:"window_end_ns,omitempty"`
	// Requests is the number of trace requests in the window: the
	// workload items, and every repeat's request count.
	Requests int `json:"requests"`
}

// MaxTraceSpeedup bounds Speedup: beyond it a day of trace collapses
// below a millisecond.
const MaxTraceSpeedup = 1e6

// TraceOffset is the rule of a trace replay's schedule: the request whose
// trace time is traceNS after the window's first request is sent
// traceNS/speedup ns after the phase's first (rounded down). capture
// computes the schedule with it and validate regenerates it with it.
func TraceOffset(traceNS int64, speedup float64) int64 {
	return int64(math.Floor(float64(traceNS) / speedup))
}

// TraceSchedule returns the send offsets of a trace replay: TraceOffset
// of each request's trace time, in trace order.
func TraceSchedule(traceNS []int64, speedup float64) []int64 {
	out := make([]int64, len(traceNS))
	for i, t := range traceNS {
		out[i] = TraceOffset(t, speedup)
	}
	return out
}

// validateTrace checks workload.trace against the load: a point with
// arrival trace needs it, in rate mode, and each such point declares
// its requests.
func validateTrace(ps *problems, m *Manifest) {
	t := m.Workload.Trace
	uses := false
	for i, p := range m.Load.Points {
		if p.Arrival != ArrivalTrace {
			continue
		}
		uses = true
		if t != nil && p.Requests != t.Requests {
			ps.add(fmt.Sprintf("load.points[%d].requests", i), "is %d, but a trace replay sends the %d requests of workload.trace", p.Requests, t.Requests)
		}
	}
	if t == nil {
		if uses {
			ps.add("workload.trace", "must be set: a point's arrival is %q", ArrivalTrace)
		}
		return
	}
	if !uses {
		ps.add("workload.trace", "is set, but no point's arrival is %q", ArrivalTrace)
	}
	if !oneOf(t.Format, TraceMooncake, TraceAzure, TraceBurstGPT) {
		ps.add("workload.trace.format", "must be one of %s, got %q", quoteList(TraceMooncake, TraceAzure, TraceBurstGPT), t.Format)
	}
	if !sha256RE.MatchString(t.SHA256) {
		ps.add("workload.trace.sha256", "must be 64 lowercase hex digits")
	}
	if !finite(t.Speedup) || t.Speedup <= 0 || t.Speedup > MaxTraceSpeedup {
		ps.add("workload.trace.speedup", "must be a finite number above 0 and at most %g", float64(MaxTraceSpeedup))
	}
	if t.WindowStartNS < 0 || t.WindowEndNS < 0 || (t.WindowEndNS > 0 && t.WindowEndNS <= t.WindowStartNS) {
		ps.add("workload.trace", "window_start_ns and window_end_ns must be ≥ 0, the end (0: none) after the start")
	}
	if t.Requests < 1 {
		ps.add("workload.trace.requests", "must be ≥ 1")
	}
	if m.Load.Warmup.Requests > 0 || m.Load.Warmup.Duration > 0 {
		ps.add("load.warmup", "must be empty in a trace replay: the trace's requests are its whole schedule")
	}
}
