// The llama.cpp flavor: what llama.cpp's server (tools/server in
// ggml-org/llama.cpp, release v0.5.0 as node-llama-cpp 3.22.1 bundles it)
// shows a client, so capture's handling of it is tested without building
// it: its tokenizer endpoints, slots with a prompt cache reported in
// usage and timings, slot erase, /props and /metrics in its names.

package simulator

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"

	"github.com/benchseal/benchseal/internal/digits"
)

// LlamaCppBuildInfo is the build_info (and system_fingerprint) the
// llama.cpp flavor reports, shaped as llama.cpp's "b<build>-<commit>".
const LlamaCppBuildInfo = "b1-sim0000"

// LlamaCppServerHeader is the Server header llama.cpp's HTTP library sets.
const LlamaCppServerHeader = "llama.cpp"

// llamaTokens tokenizes text as the flavor's model does: a BOS token
// first when addSpecial, then each whitespace-separated word one token,
// and a word longer than five bytes one more (so tokens are not words,
// as with a real tokenizer).
func llamaTokens(text string, addSpecial bool) []string {
	var out []string
	if addSpecial {
		out = append(out, "<s>")
	}
	for _, w := range strings.Fields(text) {
		out = append(out, w)
		if len(w) > 5 {
			out = append(out, "##"+w)
		}
	}
	return out
}

// llamaTemplate renders chat messages (their text, flattened) with the
// flavor's chat template.
func llamaTemplate(content string) string {
	return "[INST] " + strings.TrimRight(content, "\n") + " [/INST]"
}

// slotCache is llama.cpp's prompt cache: each slot keeps the tokens of
// its last prompt, and prompts a slot gives up move to a host-memory
// cache (llama.cpp's --cache-ram, on by default) of up to hostCacheSize
// prompts. A request goes to the slot sharing the longest prefix with it
// (the least recently used one when none shares any) and reuses the
// longest prefix any slot or cached prompt shares with it, all but the
// last token (which llama.cpp always computes again to get the next
// token's logits). Erasing a slot empties that slot only: as with
// llama.cpp (measured against commit de3ff815), the host cache keeps
// what it holds; noHost (--cache-ram 0) leaves no host cache at all.
type slotCache struct {
	mu     sync.Mutex
	slots  [][]string
	used   []int64
	tick   int64
	host   [][]string
	noHost bool
}

const hostCacheSize = 1024

func newSlotCache(n int) *slotCache {
	return &slotCache{slots: make([][]string, n), used: make([]int64, n)}
}

func commonPrefix(a, b []string) int {
	n := 0
	for n < len(a) && n < len(b) && a[n] == b[n] {
		n++
	}
	return n
}

// take assigns prompt a slot and returns how many of its tokens were
// cached.
func (c *slotCache) take(prompt []string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	best, bestN := -1, 0
	for i, s := range c.slots {
		if n := commonPrefix(s, prompt); n > bestN {
			best, bestN = i, n
		}
	}
	cached := bestN
	for _, h := range c.host {
		cached = max(cached, commonPrefix(h, prompt))
	}
	if best < 0 {
		best = 0
		for i := range c.slots {
			if c.used[i] < c.used[best] {
				best = i
			}
		}
	}
	if old := c.slots[best]; !c.noHost && len(old) > 0 && commonPrefix(old, prompt) < len(old) {
		c.host = append(c.host, old)
		if len(c.host) > hostCacheSize {
			c.host = c.host[1:]
		}
	}
	c.tick++
	c.used[best] = c.tick
	c.slots[best] = prompt
	return min(cached, max(len(prompt)-1, 0))
}

// erase empties slot id and returns the tokens it held; ok is false for
// no such slot.
func (c *slotCache) erase(id int) (n int, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if id < 0 || id >= len(c.slots) {
		return 0, false
	}
	n = len(c.slots[id])
	c.slots[id] = nil
	return n, true
}

// llamaMetrics are llama.cpp's counters: prompt tokens computed and
// reused, tokens generated, the seconds each took, decode calls and the
// busy slots summed over them.
type llamaMetrics struct {
	prompt, cached, predicted uint64
	promptSec, predictedSec   float64
	decodes, busy             uint64
}

func (s *Server) llamaFinished(t *timing, cached int) {
	m := s.metrics
	m.mu.Lock()
	defer m.mu.Unlock()
	l := &m.llama
	l.prompt += uint64(t.prompt - cached)
	l.cached += uint64(cached)
	l.predicted += uint64(t.output)
	l.promptSec += t.first.Sub(t.scheduled).Seconds()
	l.predictedSec += t.last.Sub(t.first).Seconds()
	l.decodes += uint64(t.output)
	l.busy += uint64(t.output) * uint64(max(s.running.Load(), 1))
}

func (s *Server) writeLlamaMetrics(w io.Writer) {
	m := s.metrics
	m.mu.Lock()
	l := m.llama
	m.mu.Unlock()
	item := func(kind, name, help, v string) {
		fmt.Fprintf(w, "# HELP llamacpp:%s %s\n# TYPE llamacpp:%s %s\nllamacpp:%s %s\n", name, help, name, kind, name, v)
	}
	u := func(v uint64) string { return strconv.FormatUint(v, 10) }
	item("counter", "prompt_tokens_total", "Number of prompt tokens processed, excluding cached tokens", u(l.prompt))
	item("counter", "prompt_tokens_cached_total", "Number of prompt tokens reused from the cache", u(l.cached))
	item("counter", "prompt_seconds_total", "Total time spent processing prompts", fmtFloat(l.promptSec))
	item("counter", "tokens_predicted_total", "Number of generation tokens processed", u(l.predicted))
	item("counter", "tokens_predicted_seconds_total", "Total time spent generating tokens", fmtFloat(l.predictedSec))
	item("counter", "n_decode_total", "Total number of llama_decode() calls", u(l.decodes))
	item("gauge", "requests_processing", "Number of requests processing", strconv.FormatInt(s.running.Load(), 10))
	item("gauge", "requests_deferred", "Number of requests deferred", strconv.FormatInt(s.waiting.Load(), 10))
	busy := 0.0
	if l.decodes > 0 {
		busy = float64(l.busy) / float64(l.decodes)
	}
	item("gauge", "n_busy_slots_per_decode", "Average number of busy slots per llama_decode() call", fmtFloat(busy))
}

func (s *Server) props(w http.ResponseWriter, r *http.Request) {
	s.mark(w)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"default_generation_settings":{"n_ctx":4096},"total_slots":%d,"model_path":"sim.gguf","build_info":%q}`+"\n", s.cfg.MaxRunning, LlamaCppBuildInfo)
}

// slotAction serves POST /slots/{id}?action=erase: 501 unless SlotSave,
// as llama.cpp answers without --slot-save-path.
func (s *Server) slotAction(w http.ResponseWriter, r *http.Request) {
	s.mark(w)
	if !s.cfg.SlotSave {
		writeLlamaError(w, http.StatusNotImplemented, "not_supported_error", "This server does not support slots action. Start it with `--slot-save-path`")
		return
	}
	id, err := strconv.Atoi(r.PathValue("id"))
	if err != nil || r.URL.Query().Get("action") != "erase" {
		writeLlamaError(w, http.StatusBadRequest, "invalid_request_error", "Invalid action or slot id")
		return
	}
	n, ok := s.lcache.erase(id)
	if !ok {
		writeLlamaError(w, http.StatusBadRequest, "invalid_request_error", "Invalid slot ID")
		return
	}
	s.resets.Add(1)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"id_slot":%d,"n_erased":%d}`+"\n", id, n)
}

func writeLlamaError(w http.ResponseWriter, code int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"error":{"code":%d,"message":%s,"type":%q}}`+"\n", code, quote(msg), typ)
}

// tokenize serves POST /tokenize {"content", "add_special"} →
// {"tokens": [ids]}, ids being positions in a vocabulary built as words
// are seen.
func (s *Server) tokenize(w http.ResponseWriter, r *http.Request) {
	s.mark(w)
	var q struct {
		Content    *string `json:"content"`
		AddSpecial bool    `json:"add_special"`
	}
	if json.NewDecoder(io.LimitReader(r.Body, 64<<20)).Decode(&q) != nil || q.Content == nil {
		writeLlamaError(w, http.StatusBadRequest, "invalid_request_error", "\"content\" must be provided")
		return
	}
	toks := llamaTokens(*q.Content, q.AddSpecial)
	ids := make([]int, len(toks))
	s.vocabMu.Lock()
	for i, t := range toks {
		id, ok := s.vocab[t]
		if !ok {
			id = len(s.vocab)
			s.vocab[t] = id
		}
		ids[i] = id
	}
	s.vocabMu.Unlock()
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]any{"tokens": ids})
}

// applyTemplate serves POST /apply-template {"messages"} → {"prompt"}.
func (s *Server) applyTemplate(w http.ResponseWriter, r *http.Request) {
	s.mark(w)
	var q request
	if json.NewDecoder(io.LimitReader(r.Body, 64<<20)).Decode(&q) != nil || len(q.Messages) == 0 {
		writeLlamaError(w, http.StatusBadRequest, "invalid_request_error", "\"messages\" must be provided")
		return
	}
	w.Header().Set("Content-Type", "application/json")
	json.NewEncoder(w).Encode(map[string]string{"prompt": llamaTemplate(q.promptText())})
}

// llamaUsage appends the flavor's usage (with cached tokens) and timings
// members (timings alone without usage), without braces around them.
func (p *plan) llamaUsage(buf []byte, done int, tm *timing, usage bool) []byte {
	if !usage {
		buf = append(buf, `"timings":{"cache_n":`...)
		return p.llamaTimings(buf, done, tm)
	}
	buf = append(buf, `"usage":{"completion_tokens":`...)
	buf = strconv.AppendInt(buf, int64(done), 10)
	buf = append(buf, `,"prompt_tokens":`...)
	buf = strconv.AppendInt(buf, int64(p.promptTokens), 10)
	buf = append(buf, `,"total_tokens":`...)
	buf = strconv.AppendInt(buf, int64(p.promptTokens+done), 10)
	buf = append(buf, `,"prompt_tokens_details":{"cached_tokens":`...)
	buf = strconv.AppendInt(buf, int64(p.cached), 10)
	buf = append(buf, `}},"timings":{"cache_n":`...)
	return p.llamaTimings(buf, done, tm)
}

func (p *plan) llamaTimings(buf []byte, done int, tm *timing) []byte {
	buf = strconv.AppendInt(buf, int64(p.cached), 10)
	buf = append(buf, `,"prompt_n":`...)
	buf = strconv.AppendInt(buf, int64(p.promptTokens-p.cached), 10)
	buf = append(buf, `,"prompt_ms":`...)
	buf = append(buf, digits.Places(float64(tm.first.Sub(tm.scheduled).Microseconds())/1e3, 3)...)
	buf = append(buf, `,"predicted_n":`...)
	buf = strconv.AppendInt(buf, int64(done), 10)
	buf = append(buf, `,"predicted_ms":`...)
	buf = append(buf, digits.Places(float64(tm.last.Sub(tm.first).Microseconds())/1e3, 3)...)
	buf = append(buf, '}')
	return buf
}
