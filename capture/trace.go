// Trace replay: reading the public request traces (Mooncake JSONL, the
// Azure LLM inference CSV, BurstGPT CSV) into workload items sent at their
// trace times (schema.TraceSource, schema.TraceOffset).

package capture

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/csv"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/benchseal/benchseal/plan"
	"github.com/benchseal/benchseal/schema"
)

// Limits of a trace file, shared by the reader and the runner.
const (
	// MaxTraceLength bounds one request's input or output length.
	MaxTraceLength = 1 << 20
	// MaxTraceInputTokens bounds the input lengths of the requests
	// replayed, summed: their synthetic prompts are held in memory.
	MaxTraceInputTokens = 1 << 26
	// MaxTraceHashIDs bounds the prefix blocks of one request.
	MaxTraceHashIDs = 1 << 16
	// maxTraceMS bounds a trace time (about 285 years in ms), so every
	// time fits int64 nanoseconds.
	maxTraceMS = 9e12
	// maxTraceLine bounds one line of a trace file.
	maxTraceLine = 16 << 20
)

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
	Format   string // schema.TraceMooncake, TraceAzure or TraceBurstGPT
	File     string // base name
	SHA256   string // hex, of the file's bytes
	Requests []TraceRequest
}

// ReadTrace reads a trace file, telling the format from its first line: a
// JSON object is Mooncake's JSONL, else a CSV header naming the Azure
// trace's or BurstGPT's columns. Requests come back sorted by time (stable,
// so requests at one time keep the file's order), times relative to the
// earliest. Every error is a *TraceError naming the file, line and field.
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
		t.Format = schema.TraceMooncake
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
	slices.SortStableFunc(t.Requests, func(a, b TraceRequest) int { return int(min(max(a.AtNS-b.AtNS, -1), 1)) })
	t0 := t.Requests[0].AtNS
	for i := range t.Requests {
		t.Requests[i].AtNS -= t0
	}
	return t, nil
}

// add appends a request, bounding the count.
func (t *Trace) add(name string, q TraceRequest) error {
	if len(t.Requests) >= MaxWorkloadItems {
		return &TraceError{File: name, Line: q.Line, Err: fmt.Errorf("more than %d requests", MaxWorkloadItems)}
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
	if !(ms >= 0 && ms <= maxTraceMS) {
		return 0, &TraceError{File: name, Line: line, Field: field, Err: fmt.Errorf("%v is out of range 0..%g ms", ms, float64(maxTraceMS))}
	}
	return int64(math.Round(ms * 1e6)), nil
}

// readMooncake reads Mooncake's JSONL trace: one object per line with
// timestamp (ms since the first request), input_length, output_length
// and hash_ids (the request's prompt blocks, 512 tokens each in the
// published traces). Unknown fields are ignored (the published files
// carry none, AIPerf's variant may).
func readMooncake(r io.Reader, name string, t *Trace) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxTraceLine)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
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
		if err := t.add(name, q); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return &TraceError{File: name, Line: line + 1, Err: err}
	}
	return nil
}

// traceColumns are the CSV columns of a format: time, input length,
// output length.
type traceColumns struct {
	format             string
	time, input, outpt string
}

var csvFormats = []traceColumns{
	{schema.TraceAzure, "TIMESTAMP", "ContextTokens", "GeneratedTokens"},
	{schema.TraceBurstGPT, "Timestamp", "Request tokens", "Response tokens"},
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
		if cols.format == schema.TraceAzure {
			at, err := parseAzureTime(ts)
			if err != nil {
				return &TraceError{File: name, Line: line, Field: cols.time, Err: err}
			}
			if azureBase.IsZero() {
				azureBase = at
			}
			d := at.Sub(azureBase) // relative to the first line; ReadTrace rebases on the earliest
			// Half the range each way, so rebasing on the earliest fits.
			if d == math.MinInt64 || d == math.MaxInt64 || d < -maxTraceMS*1e6/2 || d > maxTraceMS*1e6/2 {
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
	if cols.format == schema.TraceBurstGPT && lens[1] == 0 {
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

// TraceWindow is the part of a trace to replay, in trace time since its
// first request: [Start, End), End 0 for the trace's end.
type TraceWindow struct {
	Start, End time.Duration
}

// String is the window as --trace-window takes it: an open end is empty
// (100s..), not 0s.
func (w TraceWindow) String() string {
	end := ""
	if w.End > 0 {
		end = w.End.String()
	}
	return w.Start.String() + ".." + end
}

// ParseTraceWindow reads START..END, each a Go duration (90s, 2m) or a
// number of seconds, either side empty for the trace's start or end.
func ParseTraceWindow(s string) (TraceWindow, error) {
	a, b, ok := strings.Cut(s, "..")
	if !ok {
		return TraceWindow{}, fmt.Errorf("%q: want START..END (durations such as 60s..120s; either side may be empty)", s)
	}
	var w TraceWindow
	for i, v := range []string{a, b} {
		v = strings.TrimSpace(v)
		if v == "" {
			continue
		}
		d, err := time.ParseDuration(v)
		if err != nil {
			f, ferr := strconv.ParseFloat(v, 64)
			if ferr != nil || !(f >= 0 && f <= maxTraceMS/1000) {
				return TraceWindow{}, fmt.Errorf("%q: %q is not a duration (60s) or a number of seconds", s, v)
			}
			d = time.Duration(f * 1e9)
		}
		if d < 0 {
			return TraceWindow{}, fmt.Errorf("%q: %q is negative", s, v)
		}
		if i == 0 {
			w.Start = d
		} else {
			w.End = d
		}
	}
	if w.End > 0 && w.End <= w.Start {
		return TraceWindow{}, fmt.Errorf("%q: the end must come after the start", s)
	}
	return w, nil
}

// TraceRun is a trace prepared for replay: its source as the manifest
// states it and one workload item per request, in trace order.
type TraceRun struct {
	Source schema.TraceSource
	Items  []Item
}

// Replay selects the requests of t in window w and makes their workload
// items: a synthetic prompt of each request's input length and its output
// length, trace_ns its time less the window's first request's, drawn from
// seed. speedup divides the trace's times (schema.TraceOffset).
func (t *Trace) Replay(w TraceWindow, speedup float64, seed int64) (*TraceRun, error) {
	if !(speedup > 0 && speedup <= schema.MaxTraceSpeedup) {
		return nil, fmt.Errorf("%w: speedup %v: want above 0 and at most %g", plan.ErrPlan, speedup, float64(schema.MaxTraceSpeedup))
	}
	var sel []TraceRequest
	var total int64
	for _, q := range t.Requests {
		if q.AtNS < int64(w.Start) || (w.End > 0 && q.AtNS >= int64(w.End)) {
			continue
		}
		total += int64(q.InputTokens)
		if total > MaxTraceInputTokens {
			return nil, fmt.Errorf("%w: trace %s: the window's prompts total more than %d input tokens; narrow --trace-window", plan.ErrPlan, t.File, MaxTraceInputTokens)
		}
		sel = append(sel, q)
	}
	if len(sel) == 0 {
		return nil, fmt.Errorf("%w: trace %s: no request in the window %s (the trace spans %s)", plan.ErrPlan, t.File, w, time.Duration(t.Requests[len(t.Requests)-1].AtNS))
	}
	run := &TraceRun{Source: schema.TraceSource{Format: t.Format, File: t.File, SHA256: t.SHA256, Speedup: speedup,
		WindowStartNS: int64(w.Start), WindowEndNS: int64(w.End), Requests: len(sel)}}
	gen := newPromptWords(uint64(seed), traceStream)
	blocks := newPrefixBlocks(uint64(seed))
	t0 := sel[0].AtNS
	run.Items = make([]Item, len(sel))
	for i, q := range sel {
		at := q.AtNS - t0
		it := Item{InputTokens: q.InputTokens, OutputTokens: q.OutputTokens, TraceNS: &at}
		if q.HashIDs == nil {
			it.Prompt = gen.words(q.InputTokens)
		} else {
			var cacheable int
			it.Prompt, cacheable = blocks.prompt(q, gen)
			it.CacheableTokens = &cacheable
		}
		run.Items[i] = it
	}
	return run, nil
}

// TraceBlockTokens is the length of a Mooncake prefix block: the
// published traces' hash_ids cover input_length in blocks of 512 tokens
// (the README's sample: 6955 tokens in 14 blocks, 6472 in 13).
const TraceBlockTokens = 512

// blockStream is the random stream of the prefix blocks' words.
const blockStream = 0x626c6f636b // "block"

// prefixBlocks makes the prompts of a trace whose requests name their
// prefix blocks (Mooncake's hash_ids): block id's text is the same
// TraceBlockTokens words wherever it appears, so a prefix cache sees the
// sharing the trace recorded. It remembers, per block, the most words
// of it sent so far, to count each request's cacheable prefix.
type prefixBlocks struct {
	seed  uint64
	text  map[int64][]string
	sent  map[int64]int
	words strings.Builder
}

func newPrefixBlocks(seed uint64) *prefixBlocks {
	return &prefixBlocks{seed: seed, text: map[int64][]string{}, sent: map[int64]int{}}
}

// block returns the words of block id, drawn from the seed and the id
// alone (so the same in any window of the trace).
func (b *prefixBlocks) block(id int64) []string {
	if w, ok := b.text[id]; ok {
		return w
	}
	g := newPromptWords(b.seed, blockStream^uint64(id))
	w := make([]string, TraceBlockTokens)
	for i := range w {
		w[i] = vocabulary[g.rng.IntN(len(vocabulary))]
	}
	b.text[id] = w
	return w
}

// prompt returns q's prompt — its blocks in order, each TraceBlockTokens
// words but the last, cut to input_length; words of its own past its
// blocks — and its expected cacheable tokens: the words of its leading
// blocks that earlier requests of the window sent (an unbounded prefix
// cache holding every block it saw), up to the first block not sent as
// far before.
func (b *prefixBlocks) prompt(q TraceRequest, gen *promptWords) (string, int) {
	b.words.Reset()
	left, cacheable, prefix := q.InputTokens, 0, true
	for _, id := range q.HashIDs {
		if left == 0 {
			break
		}
		w := b.block(id)[:min(TraceBlockTokens, left)]
		for _, x := range w {
			if b.words.Len() > 0 {
				b.words.WriteByte(' ')
			}
			b.words.WriteString(x)
		}
		if prefix {
			cacheable += min(len(w), b.sent[id])
			prefix = b.sent[id] >= len(w)
		}
		b.sent[id] = max(b.sent[id], len(w))
		left -= len(w)
	}
	if left > 0 {
		if b.words.Len() > 0 {
			b.words.WriteByte(' ')
		}
		b.words.WriteString(gen.words(left))
	}
	return b.words.String(), cacheable
}

// traceStream is the random stream of a trace replay's prompts.
const traceStream = 0x7472616365 // "trace"

// Rate is the replay's mean offered rate in requests per second: its
// requests over its last send offset (at least a millisecond), at most
// MaxRate. It labels the point; the schedule is the trace's.
func (tr *TraceRun) Rate() float64 {
	last := schema.TraceOffset(*tr.Items[len(tr.Items)-1].TraceNS, tr.Source.Speedup)
	span := max(float64(last)/1e9, 1e-3)
	return min(float64(len(tr.Items))/span, MaxRate)
}

// prefixTally sums, over a trace replay's measured requests that ended
// ok, the prompt tokens its prefix blocks make cacheable (Item's
// CacheableTokens) and the cached tokens the server reported for them.
type prefixTally struct {
	requests, prompt, cacheable atomic.Int64
	reported, cached            atomic.Int64
}

// add counts rec, sent from item it.
func (t *prefixTally) add(it *Item, rec *schema.Record) {
	if it.CacheableTokens == nil || rec.Status != schema.StatusOK {
		return
	}
	t.requests.Add(1)
	t.prompt.Add(int64(it.InputTokens))
	t.cacheable.Add(int64(*it.CacheableTokens))
	if n, ok := rec.Server.Cached(); ok {
		t.reported.Add(1)
		t.cached.Add(n)
	}
}

// NotePrefixCache is the manifest note comparing a trace replay's
// expected cacheable tokens with the server's cached tokens.
const NotePrefixCache = "prefix_cache_expected"

// note states the comparison in the manifest (nothing when the replay
// named no prefix blocks).
func (t *prefixTally) note(m *schema.Manifest) {
	n := t.requests.Load()
	if n == 0 {
		return
	}
	pct := func(a, b int64) string {
		return strconv.FormatFloat(100*float64(a)/float64(max(b, 1)), 'f', 1, 64) + " %"
	}
	msg := fmt.Sprintf("the trace's prefix blocks (hash_ids, %d tokens each, the same block text wherever an id recurs) make %d of the %d prompt tokens (%s) of the %d measured requests that ended ok a prefix an earlier request of the window sent: what an unbounded prefix cache would serve (workload items' cacheable_tokens; the prompts' words, or the served model's tokens when fitted: notes.input_tokens); ",
		TraceBlockTokens, t.cacheable.Load(), t.prompt.Load(), pct(t.cacheable.Load(), t.prompt.Load()), n)
	if r := t.reported.Load(); r > 0 {
		msg += fmt.Sprintf("the server reported %d cached prompt tokens (%s of those prompt tokens) over the %d of them whose answers stated cached tokens (records' server.cached_tokens or cache_n)", t.cached.Load(), pct(t.cached.Load(), t.prompt.Load()), r)
	} else {
		msg += "the server reported no cached tokens (no answer stated usage.prompt_tokens_details.cached_tokens or timings.cache_n), so nothing compares them"
	}
	setNote(m, NotePrefixCache, msg)
}
