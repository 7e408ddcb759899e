// Trace replay: reading the public request traces (Mooncake JSONL, the
// Azure LLM inference CSV, BurstGPT CSV) into workload items sent at their
// trace times (schema.TraceSource, schema.TraceOffset).

package capture

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/plan"
	"github.com/benchseal/benchseal/schema"
)

// The trace reader lives in schema, which validate shares.
type (
	// Trace is a trace file read by ReadTrace.
	Trace = schema.Trace
	// TraceRequest is one request of a trace.
	TraceRequest = schema.TraceRequest
	// TraceError is a trace file's problem at a line and field.
	TraceError = schema.TraceError
)

// ErrTrace is the root of every trace-file error.
var ErrTrace = schema.ErrTrace

// ReadTrace reads a trace file (schema.ReadTrace).
func ReadTrace(r io.Reader, name string) (*Trace, error) { return schema.ReadTrace(r, name) }

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
			if ferr != nil || !(f >= 0 && f <= schema.MaxTraceMS/1000) {
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
// states it, one workload item per request, in trace order, and the
// trace file's bytes, which the run keeps as the attachment
// Source.Stored so validate can rebuild the items from it.
type TraceRun struct {
	Source schema.TraceSource
	Items  []Item
	Data   []byte
}

// ReplayTrace selects the requests of t (read from data) in window w and
// makes their workload items: a synthetic prompt of each request's input
// length and its output length, trace_ns its time less the window's first
// request's, drawn from seed. speedup divides the trace's times
// (schema.TraceOffset).
func ReplayTrace(t *Trace, data []byte, w TraceWindow, speedup float64, seed int64) (*TraceRun, error) {
	if !(speedup > 0 && speedup <= schema.MaxTraceSpeedup) {
		return nil, errcond.Errorf(plan.ErrPlan, "invalid plan: speedup %s: want above 0 and at most %s", digits.Shortest(speedup), digits.Shortest(float64(schema.MaxTraceSpeedup)))
	}
	sel := t.Window(int64(w.Start), int64(w.End))
	var total int64
	for _, q := range sel {
		if total += int64(q.InputTokens); total > MaxTraceInputTokens {
			return nil, errcond.Errorf(plan.ErrPlan, "invalid plan: trace %s: the window's prompts total more than %d input tokens; narrow --trace-window", t.File, MaxTraceInputTokens)
		}
	}
	if len(sel) == 0 {
		return nil, errcond.Errorf(plan.ErrPlan, "invalid plan: trace %s: no request in the window %s (the trace spans %s)", t.File, w, time.Duration(t.Requests[len(t.Requests)-1].AtNS))
	}
	run := &TraceRun{Data: data, Source: schema.TraceSource{Format: t.Format, File: t.File, SHA256: t.SHA256, Speedup: speedup,
		WindowStartNS: int64(w.Start), WindowEndNS: int64(w.End), Requests: len(sel), Stored: schema.TraceAttachment}}
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
		return digits.Places(100*float64(a)/float64(max(b, 1)), 1) + " %"
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

// writeWorkload writes the run's workload file and, for a trace replay,
// keeps its trace file as attachments/schema.TraceAttachment.
func writeWorkload(o *Options, wl []byte) error {
	if err := schema.WriteFileAtomic(filepath.Join(o.OutDir, schema.WorkloadFile), wl, 0o644); err != nil || o.Trace == nil {
		return err
	}
	dir := filepath.Join(o.OutDir, schema.AttachmentsDir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return schema.WriteFileAtomic(filepath.Join(dir, schema.TraceAttachment), o.Trace.Data, 0o644)
}
