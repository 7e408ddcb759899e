// Reading the public request traces (Mooncake JSONL, the Azure LLM
// inference CSV, BurstGPT CSV): capture replays them, and validate and
// verify read the copy a run keeps (TraceSource.Stored) to rebuild its
// workload items' trace times and lengths.

package schema

import (
	"bufio"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/benchseal/benchseal/internal/digits"
)

// maxTraceLine bounds one line of a trace file (the exported trace limits
// are in limits.go).
const maxTraceLine = 16 << 20

// ErrTrace is the root of every trace-file error.
var ErrTrace = errors.New("invalid trace")

// TraceError is a trace file's problem at a line and field.
type TraceError struct {
	File  string
	Line  int    // 1-based; 0: the whole file
	Field string // the format's own field or column name; "" for the line
	Err   error
}

func (e *TraceError) Error() string {
	var b strings.Builder
	b.WriteString("read trace ")
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Field != "" {
		fmt.Fprintf(&b, ": field %q", e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

func (e *TraceError) Unwrap() []error { return []error{ErrTrace, e.Err} }

// TraceRequest is one request of a trace.
type TraceRequest struct {
	// AtNS is the request's time in the trace, ns since its first request.
	AtNS int64
	// InputTokens and OutputTokens are the trace's lengths, in the tokens
	// of the model that served the trace (not necessarily the one under
	// test).
	InputTokens, OutputTokens int
	// HashIDs are Mooncake's prefix blocks (nil in the other formats).
	HashIDs []int64
	// Line is the request's line in the file (1-based).
	Line int
}

// Trace is a trace file read by ReadTrace: its requests in time order.
type Trace struct {
	Format   string // TraceMooncake, TraceAzure or TraceBurstGPT
	File     string // base name
	SHA256   string // hex, of the file's bytes
	Requests []TraceRequest
}

// ReadTrace reads a trace file, telling the format from its first line: a
// JSON object is Mooncake's JSONL, else a CSV header naming the Azure
// trace's or BurstGPT's columns. Requests come back in the file's order,
// times relative to the first; a time before the line above's is refused
// (inOrder). Every error is a *TraceError naming the file, line and field.
func ReadTrace(r io.Reader, name string) (*Trace, error) {
	h := sha256.New()
	br := bufio.NewReaderSize(io.TeeReader(r, h), 64<<10)
	// Blank lines before the first are skipped, counted so every error
	// names the file's own line.
	skipped := 0
	first, err := br.Peek(1)
	for err == nil && (first[0] == ' ' || first[0] == '\t' || first[0] == '\r' || first[0] == '\n') {
		if first[0] == '\n' {
			skipped++
		}
		if _, err = br.ReadByte(); err == nil {
			first, err = br.Peek(1)
		}
	}
	t := &Trace{File: filepath.Base(name)}
	switch {
	case errors.Is(err, io.EOF):
		return nil, &TraceError{File: name, Err: errors.New("empty file")}
	case err != nil:
		return nil, &TraceError{File: name, Err: err}
	case first[0] == '{':
		t.Format = TraceMooncake
		err = readMooncake(br, name, t)
	default:
		err = readTraceCSV(br, name, t)
	}
	if te := (*TraceError)(nil); errors.As(err, &te) && te.Line > 0 {
		te.Line += skipped
	}
	if err != nil {
		return nil, err
	}
	if _, err := io.Copy(io.Discard, br); err != nil {
		return nil, &TraceError{File: name, Err: err}
	}
	if len(t.Requests) == 0 {
		return nil, &TraceError{File: name, Err: errors.New("no requests")}
	}
	for i := range t.Requests {
		t.Requests[i].Line += skipped
	}
	t.SHA256 = hex.EncodeToString(h.Sum(nil))
	if err := t.inOrder(name); err != nil {
		return nil, err
	}
	t0 := t.Requests[0].AtNS
	for i := range t.Requests {
		t.Requests[i].AtNS -= t0
	}
	return t, nil
}

// add appends a request, bounding the count.
func (t *Trace) add(name string, q TraceRequest) error {
	if len(t.Requests) >= MaxTraceRequests {
		return &TraceError{File: name, Line: q.Line, Err: fmt.Errorf("more than %d requests", MaxTraceRequests)}
	}
	t.Requests = append(t.Requests, q)
	return nil
}

// traceLength checks a length field.
func traceLength(name string, line int, field string, v int64, least int64) (int, error) {
	if v < least || v > MaxTraceLength {
		return 0, &TraceError{File: name, Line: line, Field: field, Err: fmt.Errorf("%d is out of range %d..%d", v, least, MaxTraceLength)}
	}
	return int(v), nil
}

// msToNS converts a trace time in ms to ns.
func msToNS(name string, line int, field string, ms float64) (int64, error) {
	if !(ms >= 0 && ms <= MaxTraceMS) {
		return 0, &TraceError{File: name, Line: line, Field: field, Err: fmt.Errorf("%s is out of range 0..%s ms", digits.Shortest(ms), digits.Shortest(float64(MaxTraceMS)))}
	}
	return int64(math.Round(ms * 1e6)), nil
}

// readMooncake reads Mooncake's JSONL trace: one object per line with
// timestamp (ms since the first request), input_length, output_length
// and hash_ids (the request's prompt blocks, 512 tokens each in the
// published traces). Unknown fields are ignored (the published files
// carry none, AIPerf's variant may).
func readMooncake(r io.Reader, name string, t *Trace) error {
	return EachJSONLine(r, maxTraceLine, func(line int, b []byte) error {
		var in struct {
			Timestamp    *float64 `json:"timestamp"`
			InputLength  *int64   `json:"input_length"`
			OutputLength *int64   `json:"output_length"`
			HashIDs      []int64  `json:"hash_ids"`
		}
		if err := json.Unmarshal(b, &in); err != nil {
			return &TraceError{File: name, Line: line, Err: fmt.Errorf("not a Mooncake trace line: %w", err)}
		}
		for _, f := range []struct {
			name string
			ok   bool
		}{{"timestamp", in.Timestamp != nil}, {"input_length", in.InputLength != nil}, {"output_length", in.OutputLength != nil}} {
			if !f.ok {
				return &TraceError{File: name, Line: line, Field: f.name, Err: errors.New("missing")}
			}
		}
		q := TraceRequest{Line: line}
		var err error
		if q.AtNS, err = msToNS(name, line, "timestamp", *in.Timestamp); err != nil {
			return err
		}
		if q.InputTokens, err = traceLength(name, line, "input_length", *in.InputLength, 1); err != nil {
			return err
		}
		if q.OutputTokens, err = traceLength(name, line, "output_length", *in.OutputLength, 1); err != nil {
			return err
		}
		if len(in.HashIDs) > MaxTraceHashIDs {
			return &TraceError{File: name, Line: line, Field: "hash_ids", Err: fmt.Errorf("%d blocks, more than %d", len(in.HashIDs), MaxTraceHashIDs)}
		}
		for _, id := range in.HashIDs {
			if id < 0 {
				return &TraceError{File: name, Line: line, Field: "hash_ids", Err: fmt.Errorf("block id %d is negative", id)}
			}
		}
		q.HashIDs = in.HashIDs
		return t.add(name, q)
	}, func(line int, err error) error { return &TraceError{File: name, Line: line, Err: err} })
}

// traceColumns are the CSV columns of a format: time, input length,
// output length.
type traceColumns struct {
	format             string
	time, input, outpt string
}

var csvFormats = []traceColumns{
	{TraceAzure, "TIMESTAMP", "ContextTokens", "GeneratedTokens"},
	{TraceBurstGPT, "Timestamp", "Request tokens", "Response tokens"},
}

// azureTimeLayouts are the TIMESTAMP forms of the Azure traces: the 2023
// release's "2023-11-16 18:17:03.9799600", and the same with a zone.
var azureTimeLayouts = []string{"2006-01-02 15:04:05.999999999", "2006-01-02 15:04:05.999999999Z07:00", "2006-01-02 15:04:05.999999999-07:00"}

// readTraceCSV reads the Azure LLM inference trace (TIMESTAMP as a date
// and time, ContextTokens, GeneratedTokens) or a BurstGPT file
// (Timestamp in seconds, Request tokens, Response tokens; its Model, Total
// tokens and Log Type columns are not needed). BurstGPT's failed requests
// (Response tokens 0) are replayed asking for one token: the trace records
// their prompts' arrival, not an output length.
func readTraceCSV(r io.Reader, name string, t *Trace) error {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	cr.FieldsPerRecord = 0
	cols, idx, err := csvColumns(cr, name)
	if err != nil {
		return err
	}
	t.Format = cols.format
	ti, ii, oi := idx[cols.time], idx[cols.input], idx[cols.outpt]
	var azureBase time.Time
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			return nil
		}
		if pe := (*csv.ParseError)(nil); errors.As(err, &pe) {
			return &TraceError{File: name, Line: pe.Line, Err: pe.Err}
		} else if err != nil {
			return &TraceError{File: name, Err: err}
		}
		line, _ := cr.FieldPos(0)
		if ti >= len(rec) {
			return &TraceError{File: name, Line: line, Field: cols.time, Err: fmt.Errorf("missing: the line has %d columns", len(rec))}
		}
		q, ts := TraceRequest{Line: line}, strings.TrimSpace(rec[ti])
		if cols.format == TraceAzure {
			at, err := parseAzureTime(ts)
			if err != nil {
				return &TraceError{File: name, Line: line, Field: cols.time, Err: err}
			}
			if azureBase.IsZero() {
				azureBase = at
			}
			d := at.Sub(azureBase) // relative to the first line; ReadTrace rebases on the earliest
			// Half the range each way, so rebasing on the earliest fits.
			if d == math.MinInt64 || d == math.MaxInt64 || d < -MaxTraceMS*1e6/2 || d > MaxTraceMS*1e6/2 {
				return &TraceError{File: name, Line: line, Field: cols.time, Err: fmt.Errorf("%q is too far from the first request", ts)}
			}
			q.AtNS = int64(d)
		} else {
			s, err := strconv.ParseFloat(ts, 64)
			if err != nil {
				return &TraceError{File: name, Line: line, Field: cols.time, Err: fmt.Errorf("%q is not a number of seconds", ts)}
			}
			if q.AtNS, err = msToNS(name, line, cols.time, s*1000); err != nil {
				return err
			}
		}
		if err := csvLengths(&q, rec, cols, ii, oi, name, line); err != nil {
			return err
		}
		if err := t.add(name, q); err != nil {
			return err
		}
	}
}

// csvLengths sets q's input and output lengths from a trace CSV record
// (columns ii and oi of cols).
func csvLengths(q *TraceRequest, rec []string, cols traceColumns, ii, oi int, name string, line int) error {
	var lens [2]int64
	for k, c := range []struct {
		i   int
		col string
	}{{ii, cols.input}, {oi, cols.outpt}} {
		if c.i >= len(rec) {
			return &TraceError{File: name, Line: line, Field: c.col, Err: fmt.Errorf("missing: the line has %d columns", len(rec))}
		}
		v := strings.TrimSpace(rec[c.i])
		var err error
		if lens[k], err = strconv.ParseInt(v, 10, 64); err != nil {
			return &TraceError{File: name, Line: line, Field: c.col, Err: fmt.Errorf("%q is not a whole number of tokens", v)}
		}
	}
	var err error
	if q.InputTokens, err = traceLength(name, line, cols.input, lens[0], 1); err != nil {
		return err
	}
	if cols.format == TraceBurstGPT && lens[1] == 0 {
		lens[1] = 1 // a failed request: see readTraceCSV
	}
	q.OutputTokens, err = traceLength(name, line, cols.outpt, lens[1], 1)
	return err
}

// csvColumns reads a trace CSV's header and tells its format: its
// columns and the index of each named column.
func csvColumns(cr *csv.Reader, name string) (traceColumns, map[string]int, error) {
	header, err := cr.Read()
	if err != nil {
		return traceColumns{}, nil, &TraceError{File: name, Line: 1, Err: fmt.Errorf("read CSV header: %w", err)}
	}
	idx := map[string]int{}
	for i, h := range header {
		idx[strings.TrimSpace(strings.TrimPrefix(h, "\ufeff"))] = i
	}
	var cols traceColumns
	for _, f := range csvFormats {
		_, a := idx[f.time]
		_, b := idx[f.input]
		_, c := idx[f.outpt]
		if a && b && c {
			cols = f
			break
		}
	}
	if cols.format == "" {
		return traceColumns{}, nil, &TraceError{File: name, Line: 1, Err: fmt.Errorf("header %q is neither a Mooncake JSON line nor the columns of the Azure trace (TIMESTAMP, ContextTokens, GeneratedTokens) or of BurstGPT (Timestamp, Request tokens, Response tokens)", strings.Join(header, ","))}
	}
	return cols, idx, nil
}

func parseAzureTime(s string) (time.Time, error) {
	for _, l := range azureTimeLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a date and time like 2023-11-16 18:17:03.9799600", s)
}

// traceTimeField names the time field of each format.
var traceTimeField = map[string]string{TraceMooncake: "timestamp", TraceAzure: "TIMESTAMP", TraceBurstGPT: "Timestamp"}

// inOrder refuses a trace whose times go backwards. Each format's time is
// its request's arrival, and the published files list requests in arrival
// order (the real lines under testdata/traces do): a file out of order was
// edited or merged, and re-sorting it in silence would replay an order the
// file does not show. Equal times keep the file's order.
func (t *Trace) inOrder(name string) error {
	for i := 1; i < len(t.Requests); i++ {
		q, p := t.Requests[i], t.Requests[i-1]
		if q.AtNS < p.AtNS {
			return &TraceError{File: name, Line: q.Line, Field: traceTimeField[t.Format],
				Err: fmt.Errorf("goes backwards: %s before line %d's time (a trace lists its requests in arrival order; sort the file to replay it in that order)", time.Duration(p.AtNS-q.AtNS), p.Line)}
		}
	}
	return nil
}

// Window returns the requests of t whose trace times lie in
// [startNS, endNS) (endNS 0: the trace's end), in trace order: the
// requests a replay of that window sends.
func (t *Trace) Window(startNS, endNS int64) []TraceRequest {
	var sel []TraceRequest
	for _, q := range t.Requests {
		if q.AtNS >= startNS && (endNS == 0 || q.AtNS < endNS) {
			sel = append(sel, q)
		}
	}
	return sel
}
