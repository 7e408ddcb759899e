package aiperf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/schema"
)

// Metadata is the metadata block of one profile_export.jsonl line. The
// 2025 development schema has TimestampNS and CreditPhase; schema 1.x has
// RequestStartNS, RequestAckNS, RequestEndNS, BenchmarkPhase and the
// cancellation fields.
type Metadata struct {
	XRequestID         string      `json:"x_request_id"`
	SessionNum         json.Number `json:"session_num"`
	TimestampNS        json.Number `json:"timestamp_ns"`
	RequestStartNS     json.Number `json:"request_start_ns"`
	RequestAckNS       json.Number `json:"request_ack_ns"`
	RequestEndNS       json.Number `json:"request_end_ns"`
	CreditPhase        string      `json:"credit_phase"`
	BenchmarkPhase     string      `json:"benchmark_phase"`
	WasCancelled       bool        `json:"was_cancelled"`
	CancellationTimeNS json.Number `json:"cancellation_time_ns"`
}

// MetricValue is one per-request metric: a number or a list of numbers in
// Unit.
type MetricValue struct {
	Value json.RawMessage `json:"value"`
	Unit  string          `json:"unit"`
}

// ErrorDetails is the error block of a failed request.
type ErrorDetails struct {
	Code    json.Number `json:"code"`
	Type    string      `json:"type"`
	Message string      `json:"message"`
}

// Line is one parsed profile_export.jsonl line; Raw keeps its bytes.
type Line struct {
	Metadata Metadata               `json:"metadata"`
	Metrics  map[string]MetricValue `json:"metrics"`
	Error    *ErrorDetails          `json:"error"`
	// Raw is the line exactly as written.
	Raw json.RawMessage `json:"-"`
	// LineNo is the 1-based line number.
	LineNo int `json:"-"`
}

// startTimes are the metadata fields that say when a request started:
// request_start_ns (schema 1.x) or timestamp_ns (development schema).
type startTimes struct {
	TimestampNS    json.Number `json:"timestamp_ns"`
	RequestStartNS json.Number `json:"request_start_ns"`
}

// start returns the request's wall-clock start in Unix ns.
func (t startTimes) start() (int64, error) {
	n := t.RequestStartNS
	if n == "" {
		n = t.TimestampNS
	}
	if n == "" {
		return 0, fmt.Errorf("neither metadata.request_start_ns nor metadata.timestamp_ns is set")
	}
	return ingest.Int(n)
}

// start returns the request's wall-clock start in Unix ns.
func (m *Metadata) start() (int64, error) {
	return startTimes{TimestampNS: m.TimestampNS, RequestStartNS: m.RequestStartNS}.start()
}

// phase returns the record phase of the request.
func (m *Metadata) phase() string {
	p := m.BenchmarkPhase
	if p == "" {
		p = m.CreditPhase
	}
	if strings.EqualFold(p, "warmup") {
		return schema.PhaseWarmup
	}
	return schema.PhaseMeasure
}

// exportLine decodes and checks line lineNo of profile_export.jsonl; ok
// is false for a blank line. Raw is left unset.
func exportLine(name string, lineNo int, raw []byte) (l Line, ok bool, err error) {
	if len(bytes.TrimSpace(raw)) == 0 {
		return l, false, nil
	}
	if json.Unmarshal(raw, &l) != nil {
		// json.Unmarshal reads the line where it is; ingest.DecodeJSONLine
		// copies it but names line and field in its errors (and decodes
		// the same values: Line has no field that UseNumber changes).
		l = Line{}
		if err := ingest.DecodeJSONLine(name, lineNo, raw, &l); err != nil {
			return l, false, err
		}
	}
	if l.Metrics == nil && l.Error == nil {
		return l, false, ingest.RecordErrorf(name, lineNo, lineNo-1, "metrics", "missing: not an AIPerf profile_export.jsonl record")
	}
	if _, err := l.Metadata.start(); err != nil {
		return l, false, ingest.RecordErrorf(name, lineNo, lineNo-1, "metadata", "%w", err)
	}
	l.LineNo = lineNo
	return l, true, nil
}

// unitNS returns the nanoseconds of one display unit.
func unitNS(u string) (int64, bool) {
	switch u {
	case "ns":
		return ingest.Nanosecond, true
	case "us":
		return ingest.Microsecond, true
	case "ms":
		return ingest.Millisecond, true
	case "s", "sec":
		return ingest.Second, true
	}
	return 0, false
}

// duration reads a per-request time metric as integer ns.
func (l *Line) duration(name, tag string) (int64, bool, error) {
	mv, ok := l.Metrics[tag]
	if !ok {
		return 0, false, nil
	}
	u, ok := unitNS(mv.Unit)
	if !ok {
		return 0, false, ingest.RecordErrorf(name, l.LineNo, l.LineNo-1, "metrics."+tag+".unit", "unknown time unit %q", mv.Unit)
	}
	var n json.Number
	if err := json.Unmarshal(mv.Value, &n); err != nil {
		return 0, false, ingest.RecordErrorf(name, l.LineNo, l.LineNo-1, "metrics."+tag+".value", "not a number")
	}
	v, err := ingest.NonNegNS(n, u, tag)
	if err != nil {
		return 0, false, ingest.RecordErrorf(name, l.LineNo, l.LineNo-1, "metrics."+tag+".value", "%w", err)
	}
	return v, true, nil
}

func (l *Line) count(name, tag string) (int64, bool, error) {
	mv, ok := l.Metrics[tag]
	if !ok {
		return 0, false, nil
	}
	var n json.Number
	if err := json.Unmarshal(mv.Value, &n); err != nil {
		return 0, false, ingest.RecordErrorf(name, l.LineNo, l.LineNo-1, "metrics."+tag+".value", "not a number")
	}
	v, err := ingest.Int(n)
	if err != nil || v < 0 {
		return 0, false, ingest.RecordErrorf(name, l.LineNo, l.LineNo-1, "metrics."+tag+".value", "not a token count: %s", n)
	}
	return v, true, nil
}

func (l *Line) gaps(name string) ([]int64, bool, error) {
	mv, ok := l.Metrics["inter_chunk_latency"]
	if !ok {
		return nil, false, nil
	}
	u, ok := unitNS(mv.Unit)
	if !ok {
		return nil, false, ingest.RecordErrorf(name, l.LineNo, l.LineNo-1, "metrics.inter_chunk_latency.unit", "unknown time unit %q", mv.Unit)
	}
	var ns []json.Number
	if err := json.Unmarshal(mv.Value, &ns); err != nil {
		return nil, false, ingest.RecordErrorf(name, l.LineNo, l.LineNo-1, "metrics.inter_chunk_latency.value", "not a list of numbers")
	}
	out := make([]int64, len(ns))
	for i, n := range ns {
		v, err := ingest.NonNegNS(n, u, fmt.Sprintf("inter_chunk_latency[%d]", i))
		if err != nil {
			return nil, false, ingest.RecordErrorf(name, l.LineNo, l.LineNo-1, "metrics.inter_chunk_latency.value", "%w", err)
		}
		out[i] = v
	}
	return out, true, nil
}
