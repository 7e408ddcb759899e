// Trace replay: the schedule of a point whose arrival is "trace" is the
// trace's own request times, shipped in the workload items.

package schema

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math"

	"github.com/benchseal/benchseal/internal/digits"
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
	// Stored names the attachment holding the whole trace file (always
	// TraceAttachment): validate and verify check it hashes to SHA256 and
	// rebuild the workload items' trace_ns and lengths from it, so no
	// request can be removed, added or moved.
	Stored string `json:"stored"`
}

// TraceAttachment is the name, under attachments/, of the trace file a
// trace replay keeps. The whole file is kept (up to MaxAttachmentSize), so
// its SHA-256 is the published file's and a reader can match the two.
const TraceAttachment = "trace"

// Summary names the trace and its SHA-256 for a reviewer ("" for nil):
// validate and verify rebuild the run's requests from the kept file, but
// whether that file is the published trace only a match of this SHA-256
// with the published file's shows.
func (t *TraceSource) Summary() string {
	if t == nil {
		return ""
	}
	return fmt.Sprintf("%s %s sha256 %s, kept in the run (%s/%s), its requests rebuilt from it; that it is the published trace is the signer's word unless this sha256 matches the published file's",
		t.Format, t.File, t.SHA256, AttachmentsDir, TraceAttachment)
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
		ps.add("workload.trace.speedup", "must be a finite number above 0 and at most %s", digits.Shortest(float64(MaxTraceSpeedup)))
	}
	if t.WindowStartNS < 0 || t.WindowEndNS < 0 || (t.WindowEndNS > 0 && t.WindowEndNS <= t.WindowStartNS) {
		ps.add("workload.trace", "window_start_ns and window_end_ns must be ≥ 0, the end (0: none) after the start")
	}
	if t.Stored != TraceAttachment {
		ps.add("workload.trace.stored", "must be %q: a trace replay keeps its trace file under %s/, from which its workload items are rebuilt", TraceAttachment, AttachmentsDir)
	}
	if t.Requests < 1 {
		ps.add("workload.trace.requests", "must be ≥ 1")
	}
	if m.Load.Warmup.Requests > 0 || m.Load.Warmup.Duration > 0 {
		ps.add("load.warmup", "must be empty in a trace replay: the trace's requests are its whole schedule")
	}
}

// CheckTraceItems rebuilds a trace replay's workload items from the trace
// file the run keeps (data, the attachment TraceAttachment; nil when the
// run has none) and checks the items of workload.jsonl against them: the
// file must hash to workload.trace.sha256, and its window must hold one
// request per item, in order, with the item's trace_ns (its time less the
// window's first request's) and input and output lengths. file names the
// workload in the problems. No problem when the run replays no trace.
func CheckTraceItems(m *Manifest, data []byte, w *WorkloadItems, file string) []Problem {
	t := m.Workload.Trace
	if t == nil || t.Stored != TraceAttachment {
		return nil // validateTrace names a missing stored
	}
	att := AttachmentsDir + "/" + TraceAttachment
	bad := func(f, format string, a ...any) []Problem {
		return []Problem{{File: att, Field: f, Message: fmt.Sprintf(format, a...)}}
	}
	if data == nil {
		return bad("workload.trace.stored", "is missing: a trace replay keeps the trace file it replayed, from which its workload items are rebuilt")
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != t.SHA256 {
		return bad("workload.trace.sha256", "the manifest says %s, the kept trace file hashes to %s", t.SHA256, hex.EncodeToString(sum[:]))
	}
	tr, err := ReadTrace(bytes.NewReader(data), att)
	if err != nil {
		return bad("", "%v", err)
	}
	if w == nil {
		return nil // the schedule check names a missing workload
	}
	sel := tr.Window(t.WindowStartNS, t.WindowEndNS)
	ns, _ := w.TraceNS()
	for i := range max(len(sel), int(w.Len())) {
		if msg := traceItemDiff(sel, ns, w, i); msg != "" {
			return []Problem{{File: file, Field: fmt.Sprintf("item %d", i), Message: msg}}
		}
	}
	return nil
}

// traceItemDiff says how workload item i differs from request i of the
// trace's window sel ("" when it does not).
func traceItemDiff(sel []TraceRequest, ns []int64, w *WorkloadItems, i int) string {
	if i >= len(sel) {
		return fmt.Sprintf("is not in the trace: the kept trace's window has %d requests, the workload %d items", len(sel), w.Len())
	}
	q := sel[i]
	at := q.AtNS - sel[0].AtNS
	want := fmt.Sprintf("trace request at line %d (trace_ns %d, input %d, output %d tokens)", q.Line, at, q.InputTokens, q.OutputTokens)
	if int64(i) >= w.Len() {
		return fmt.Sprintf("is missing: the kept trace's window has %d requests, the workload %d items; the first missing is the %s", len(sel), w.Len(), want)
	}
	b := w.item(int64(i))
	if i >= len(ns) || ns[i] != at || int(b.input) != q.InputTokens || int(b.outp) != q.OutputTokens {
		got := "no trace_ns"
		if i < len(ns) {
			got = fmt.Sprintf("trace_ns %d", ns[i])
		}
		return fmt.Sprintf("states %s, input %d, output %d tokens, but is the %s: a request of the trace was removed, added or moved", got, b.input, b.outp, want)
	}
	return ""
}
