// What each workload item allows its requests' token counts.

package schema

import (
	"bytes"
	"encoding/json"
	"slices"
	"unicode/utf8"
)

// WorkloadItems reads workload.jsonl as it is written to it (it is an
// io.Writer, fed by the pass that hashes the file) and keeps, for each
// item that states something, what bounds the token counts of a request
// made from it: the UTF-8 bytes of its text (no tokenizer makes more
// tokens of a text than it has bytes: byte-level BPE makes at most one per
// byte, SentencePiece with byte fallback the same), and the input and
// output lengths the item states in tokens. RecordChecker.SetWorkload
// hands it to the record checks.
//
// The file is the publisher's, and it compresses as well as they like
// (lines of "{}" about 1000:1), so what it costs is bounded by its
// decompressed bytes: an item that states nothing keeps nothing and is
// only checked to be valid JSON (no decode, no allocation), and one that
// states something ("text":"" at least, 11 bytes) keeps 20 bytes, about
// 2 bytes per byte of the file (2.5 with the slices' growth).
type WorkloadItems struct {
	// lines are the (0-based) lines of the items that state something, in
	// order; stated their bounds.
	lines  []int64
	stated []itemBound
	n      int64
	line   []byte
	long   bool
	// trace holds the trace_ns of items 0, 1, … while each states one
	// (a trace replay's items all do: see TraceSource), 8 bytes an item;
	// traceGap is set when an item without one came before one with.
	trace    []int64
	traceGap bool
	// turnLines are the (0-based) lines of the items that state a session
	// turn (at least `"session":0,"turn":0`, 20 bytes), in order; turns
	// what they state (20 bytes an item).
	turnLines []int64
	turns     []itemTurn
	// cacheLines are the (0-based) lines of the items that state
	// cacheable_tokens (a trace replay's with prefix blocks), in order;
	// cacheable what they state (16 bytes an item of at least 20 bytes).
	cacheLines []int64
	cacheable  []int64
	// Bad is the first line (1-based) that does not decode as a workload
	// item, 0 when every line did.
	Bad int
}

// itemBound is what one workload item states: its text's bytes (-1: not
// all text, such as an image part, so no byte bound), and its input and
// output lengths in tokens (0: not stated).
type itemBound struct {
	textBytes, input, outp int32
}

// noBound is the bound of an item that states nothing.
var noBound = itemBound{textBytes: -1}

// itemTurn is what a session run's item states of its turn: its session
// and turn, and its messages other than system ones (-1: not chat
// messages). noTurn: the item states none.
type itemTurn struct{ session, turn, msgs int32 }

var noTurn = itemTurn{-1, -1, -1}

// NewWorkloadItems returns an empty reader of workload items.
func NewWorkloadItems() *WorkloadItems { return &WorkloadItems{} }

// Write takes the next bytes of the workload file.
func (w *WorkloadItems) Write(p []byte) (int, error) {
	n := len(p)
	for len(p) > 0 {
		i := bytes.IndexByte(p, '\n')
		if i < 0 {
			w.appendLine(p)
			break
		}
		if len(w.line) == 0 && !w.long && i <= MaxWorkloadLine {
			// The whole line is in p: decode it in place.
			w.endLine(p[:i])
		} else {
			w.appendLine(p[:i])
			w.endLine(w.line)
		}
		p = p[i+1:]
	}
	return n, nil
}

func (w *WorkloadItems) appendLine(p []byte) {
	if w.long || len(w.line)+len(p) > MaxWorkloadLine {
		w.long, w.line = true, w.line[:0]
		return
	}
	w.line = append(w.line, p...)
}

// Close ends the last line when the file does not end with a newline.
func (w *WorkloadItems) Close() error {
	if len(w.line) > 0 || w.long {
		w.endLine(w.line)
	}
	return nil
}

// Len returns the number of items (lines) read.
func (w *WorkloadItems) Len() int64 { return w.n }

// item returns the bound of item i (noBound for an item that states
// nothing).
func (w *WorkloadItems) item(i int64) itemBound {
	// lines ascends without repeats from 0 or more, so lines[k] >= k:
	// where lines[i] is i, i is at i (every item states a bound, as
	// synth's and most workloads' do), with no search per record.
	if i >= 0 && i < int64(len(w.lines)) && w.lines[i] == i {
		return w.stated[i]
	}
	k, ok := slices.BinarySearch(w.lines, i)
	if !ok {
		return noBound
	}
	return w.stated[k]
}

func (w *WorkloadItems) endLine(line []byte) {
	it, traceNS, tn, cache, ok := decodeItem(line, w.long)
	if cache >= 0 {
		w.cacheLines = append(w.cacheLines, w.n)
		w.cacheable = append(w.cacheable, cache)
	}
	if !ok && w.Bad == 0 {
		w.Bad = int(min(w.n+1, 1<<31-1))
	}
	if traceNS >= 0 {
		if int64(len(w.trace)) == w.n {
			w.trace = append(w.trace, traceNS)
		} else {
			w.traceGap = true
		}
	}
	if tn != noTurn {
		w.turnLines = append(w.turnLines, w.n)
		w.turns = append(w.turns, tn)
	}
	if it != noBound {
		w.lines = append(w.lines, w.n)
		w.stated = append(w.stated, it)
	}
	w.n++
	w.line, w.long = w.line[:0], false
}

// keyFree reports whether b holds noBound of the bytes every name decodeItem
// reads is spelt with ('e' or 't', either case; encoding/json matches names
// without regard to case, and no other character folds to either) and no
// escape: such a line names noBound of them, so it bounds nothing.
func keyFree(b []byte) bool {
	for _, c := range b {
		switch c {
		case 'e', 'E', 't', 'T', '\\':
			return false
		}
	}
	return true
}

// decodeItem reads one workload line: "prompt" or "text" (a string), or
// "messages" whose every content is a string; "input_tokens"; and the
// output length as benchseal's load client reads it (the largest of
// "output_tokens", "max_tokens" and "output_len"); and "trace_ns", the
// item's time in a replayed trace (-1: none, or negative). A line that does
// not decode bounds nothing.
func decodeItem(b []byte, long bool) (itemBound, int64, itemTurn, int64, bool) {
	if long {
		return noBound, -1, noTurn, -1, false
	}
	if keyFree(b) {
		// What json.Unmarshal into the struct below accepts: an object
		// or null (no name it reads can be in it).
		t := bytes.TrimLeft(b, " \t\r\n")
		return noBound, -1, noTurn, -1, json.Valid(b) && len(t) > 0 && (t[0] == '{' || t[0] == 'n')
	}
	var in struct {
		Prompt   *string `json:"prompt"`
		Text     *string `json:"text"`
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
		InputTokens  int64  `json:"input_tokens"`
		OutputTokens int64  `json:"output_tokens"`
		MaxTokens    int64  `json:"max_tokens"`
		OutputLen    int64  `json:"output_len"`
		TraceNS      *int64 `json:"trace_ns"`
		Session      *int64 `json:"session"`
		Turn         *int64 `json:"turn"`
		Cacheable    *int64 `json:"cacheable_tokens"`
	}
	if err := json.Unmarshal(b, &in); err != nil {
		return noBound, -1, noTurn, -1, false
	}
	traceNS := int64(-1)
	if in.TraceNS != nil && *in.TraceNS >= 0 {
		traceNS = *in.TraceNS
	}
	clamp := func(v int64) int32 { return int32(min(max(v, 0), 1<<31-1)) }
	it := noBound
	switch {
	case in.Prompt != nil:
		it.textBytes = clamp(int64(len(*in.Prompt)))
	case in.Text != nil:
		it.textBytes = clamp(int64(len(*in.Text)))
	case len(in.Messages) > 0:
		n := int64(0)
		for _, m := range in.Messages {
			var s string
			if json.Unmarshal(m.Content, &s) != nil || !utf8.ValidString(s) {
				n = -1
				break
			}
			n += int64(len(s))
		}
		it.textBytes = int32(min(n, 1<<31-1))
	}
	tn := noTurn
	if in.Session != nil && in.Turn != nil && *in.Session >= 0 && *in.Turn >= 0 {
		tn = itemTurn{clamp(*in.Session), clamp(*in.Turn), -1}
		if len(in.Messages) > 0 {
			tn.msgs = 0
			for _, m := range in.Messages {
				if m.Role != "system" {
					tn.msgs++
				}
			}
		}
	}
	it.input = clamp(in.InputTokens)
	it.outp = clamp(max(in.OutputTokens, in.MaxTokens, in.OutputLen))
	cache := int64(-1)
	if in.Cacheable != nil && *in.Cacheable >= 0 {
		cache = *in.Cacheable
	}
	return it, traceNS, tn, cache, true
}

// Cacheable returns the cacheable_tokens item i states (a trace replay's
// expected prefix-cache hit: the prompt's leading tokens earlier requests
// sent as the same blocks); ok is false when it states none.
func (w *WorkloadItems) Cacheable(i int64) (n int64, ok bool) {
	k, ok := slices.BinarySearch(w.cacheLines, i)
	if !ok {
		return 0, false
	}
	return w.cacheable[k], true
}

// turn returns what item i states of its session turn (noTurn: none).
func (w *WorkloadItems) turn(i int64) itemTurn {
	k, ok := slices.BinarySearch(w.turnLines, i)
	if !ok {
		return noTurn
	}
	return w.turns[k]
}

// TraceNS returns the trace times of the items, in item order, when every
// item from the first up to some item states one and none after it does
// (a trace replay's workload); ok is false otherwise.
func (w *WorkloadItems) TraceNS() (ns []int64, ok bool) {
	return w.trace, len(w.trace) > 0 && !w.traceGap
}

// SetWorkload gives the checker the items of the run's workload, read
// before the records (nil: noBound shipped): each record's token counts are
// then checked against its item (see checkItemTokens).
func (c *RecordChecker) SetWorkload(w *WorkloadItems) { c.workload = w }

// checkItemTokens checks a record's token counts against its workload
// item: input_tokens at most MaxTemplateTokens above the input length
// the item states in tokens, and at most the item's
// text bytes plus MaxTemplateTokens (when the item states no length, or
// under GeneratorBenchsealV1, whose client sends the text); under
// GeneratorBenchsealV1 with the server's token counts, output_tokens at
// most the item's output length, which the load client sent as the
// request's max_tokens. Fewer input tokens than stated are not bounded:
// a tokenizer may merge words, and a smaller count only lowers every
// token throughput. inChecked: input_tokens was already held to its
// point's synthetic length, so only output_tokens is checked here.
// outputCap is the most output tokens an engine can have generated for
// rec: the max_tokens load.generator benchseal/v1 sent for it, its
// workload item's output length; -1 when that is not known (another
// load client, no workload, an item stating no output length, which
// capture sends without max_tokens).
func (c *RecordChecker) outputCap(rec *Record) int64 {
	w := c.workload
	if c.gen == nil || w == nil || rec.Item == nil || *rec.Item < 0 || *rec.Item >= w.n {
		return -1
	}
	if it := w.item(*rec.Item); it.outp > 0 {
		return int64(it.outp)
	}
	return -1
}

func (c *RecordChecker) checkItemTokens(rec *Record, inChecked bool, add func(field, format string, args ...any)) {
	w := c.workload
	if w == nil || rec.Item == nil || *rec.Item < 0 || *rec.Item >= w.n {
		return
	}
	it := w.item(*rec.Item)
	// An item that states its input length is held to it; its text may
	// be a placeholder (synth's "synthetic prompt 3") unless the load
	// client sent it, which sends the text itself.
	bytesBound := it.textBytes >= 0 && (it.input == 0 || c.gen != nil)
	switch {
	case inChecked:
	case bytesBound && rec.InputTokens > int64(it.textBytes)+MaxTemplateTokens:
		add("input_tokens", "%d is more than workload item %d's %d bytes of text plus %d tokens of chat template: no tokenizer makes more tokens of a text than it has bytes", rec.InputTokens, *rec.Item, it.textBytes, MaxTemplateTokens)
	case it.input > 0 && rec.InputTokens > int64(it.input)+MaxTemplateTokens:
		add("input_tokens", "%d is more than workload item %d's stated input_tokens %d plus %d tokens of chat template", rec.InputTokens, *rec.Item, it.input, MaxTemplateTokens)
	}
	if c.gen != nil && c.serverCounts && it.outp > 0 && rec.OutputTokens > int64(it.outp) {
		add("output_tokens", "%d is more than workload item %d's output_tokens %d, the max_tokens load.generator %q sent for it (client.token_counts %q: the server's count, which max_tokens bounds)", rec.OutputTokens, *rec.Item, it.outp, GeneratorBenchsealV1, c.m.Client.TokenCounts)
	}
}
