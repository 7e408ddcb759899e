package aiperf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/benchseal/benchseal/importer/ingest"
)

// RawLine is one profile_export_raw.jsonl line (--export-level raw):
// absolute per-chunk perf-counter times.
type RawLine struct {
	Metadata    Metadata          `json:"metadata"`
	StartPerfNS json.Number       `json:"start_perf_ns"`
	Responses   []json.RawMessage `json:"responses"`
	Error       *ErrorDetails     `json:"error"`
	LineNo      int               `json:"-"`
}

// rawLine decodes and checks line lineNo of profile_export_raw.jsonl; ok
// is false for a blank line.
func rawLine(name string, lineNo int, raw []byte) (l RawLine, ok bool, err error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return l, false, nil
	}
	if err := ingest.DecodeJSONLine(name, lineNo, raw, &l); err != nil {
		return l, false, err
	}
	if l.StartPerfNS == "" {
		return l, false, ingest.RecordErrorf(name, lineNo, lineNo-1, "start_perf_ns", "missing: not an AIPerf raw export record")
	}
	l.LineNo = lineNo
	return l, true, nil
}

// rawChunks returns the offsets (ns since start_perf_ns) of the responses
// that carry content; [DONE] markers and responses without perf_ns are
// skipped.
func rawChunks(l *RawLine, name string) ([]int64, error) {
	start, err := ingest.Int(l.StartPerfNS)
	if err != nil {
		return nil, ingest.RecordErrorf(name, l.LineNo, l.LineNo-1, "start_perf_ns", "%w", err)
	}
	var out []int64
	for j, resp := range l.Responses {
		var r struct {
			PerfNS json.Number `json:"perf_ns"`
			Text   string      `json:"text"`
		}
		if err := json.Unmarshal(resp, &r); err != nil || r.PerfNS == "" {
			continue
		}
		if strings.Contains(r.Text, "[DONE]") {
			continue
		}
		t, err := ingest.Int(r.PerfNS)
		if err != nil {
			return nil, ingest.RecordErrorf(name, l.LineNo, l.LineNo-1, fmt.Sprintf("responses[%d].perf_ns", j), "%w", err)
		}
		if t < start {
			return nil, ingest.RecordErrorf(name, l.LineNo, l.LineNo-1, fmt.Sprintf("responses[%d].perf_ns", j), "before start_perf_ns (negative duration)")
		}
		if len(out) > 0 && t-start < out[len(out)-1] {
			return nil, ingest.RecordErrorf(name, l.LineNo, l.LineNo-1, fmt.Sprintf("responses[%d].perf_ns", j), "earlier than the previous response")
		}
		out = append(out, t-start)
	}
	return out, nil
}
