package simulator

import (
	"hash/fnv"
	"io"
	"math/rand/v2"
	"strings"
	"time"
)

type request struct {
	Model    string `json:"model"`
	Prompt   any    `json:"prompt"`
	Messages []struct {
		Role    string `json:"role"`
		Content any    `json:"content"`
	} `json:"messages"`
	Stream        bool `json:"stream"`
	StreamOptions *struct {
		IncludeUsage         bool `json:"include_usage"`
		ContinuousUsageStats bool `json:"continuous_usage_stats"`
	} `json:"stream_options"`
	MaxTokens           *int `json:"max_tokens"`
	MaxCompletionTokens *int `json:"max_completion_tokens"`
	MinTokens           int  `json:"min_tokens"`
	IgnoreEOS           bool `json:"ignore_eos"`
}

// promptText flattens a prompt or the messages' text.
func (q *request) promptText() string {
	var b strings.Builder
	add := func(v any) {
		switch t := v.(type) {
		case string:
			b.WriteString(t)
			b.WriteByte('\n')
		case []any:
			for _, e := range t {
				if m, ok := e.(map[string]any); ok {
					if s, ok := m["text"].(string); ok {
						b.WriteString(s)
						b.WriteByte('\n')
					}
				} else if s, ok := e.(string); ok {
					b.WriteString(s)
					b.WriteByte('\n')
				}
			}
		}
	}
	add(q.Prompt)
	for _, m := range q.Messages {
		add(m.Content)
	}
	return b.String()
}

// errorStream sets the top bit of the error draw's stream selector, so it
// never coincides with a prompt's stream (its hash) for small request numbers.
const errorStream = 1 << 63

// plan is what the simulator decides for one request, up front.
type plan struct {
	promptTokens int
	// cached is the prompt tokens reused from the cache (FlavorLlamaCpp).
	cached       int
	outputTokens int
	chunks       []int         // tokens per chunk
	stalls       []bool        // stall before chunk i
	failAt       int           // chunk index of an in-band error, or -1
	prefill      time.Duration // unscaled
	rng          *rand.Rand    // for the generated words
}

func (s *Server) plan(q *request, chat bool) *plan {
	text := q.promptText()
	h := fnv.New64a()
	io.WriteString(h, text)
	rng := rand.New(rand.NewPCG(uint64(s.cfg.Seed), h.Sum64()))
	p := &plan{promptTokens: len(strings.Fields(text)), failAt: -1, rng: rng}
	maxT := s.cfg.DefaultMaxTokens
	if q.MaxTokens != nil {
		maxT = *q.MaxTokens
	} else if q.MaxCompletionTokens != nil {
		maxT = *q.MaxCompletionTokens
	}
	maxT = max(1, maxT)
	if q.IgnoreEOS || q.MinTokens >= maxT {
		p.outputTokens = maxT
	} else {
		lo := max(1, q.MinTokens)
		p.outputTokens = lo + rng.IntN(maxT-lo+1)
	}
	for left := p.outputTokens; left > 0; {
		k := min(left, 1+rng.IntN(s.cfg.MaxChunkTokens))
		p.chunks = append(p.chunks, k)
		p.stalls = append(p.stalls, s.cfg.StallProb > 0 && rng.Float64() < s.cfg.StallProb)
		left -= k
	}
	// The error draw is per request, not per prompt: a stream of its own,
	// of the seed and the request's number, so a run that repeats a few
	// prompts still fails about ErrorRate of its requests, and the same
	// seed fails the same request numbers.
	if s.cfg.ErrorRate > 0 {
		erng := rand.New(rand.NewPCG(uint64(s.cfg.Seed), errorStream|s.planned.Add(1)))
		if erng.Float64() < s.cfg.ErrorRate {
			p.failAt = erng.IntN(len(p.chunks) + 1)
		}
	}
	if s.cfg.Flavor == FlavorLlamaCpp {
		// The server's own count: the rendered prompt with BOS, part
		// of it reused from a slot's cache.
		if chat {
			text = llamaTemplate(text)
		}
		toks := llamaTokens(text, true)
		p.promptTokens = len(toks)
		p.cached = s.lcache.take(toks)
	}
	p.prefill = s.cfg.PrefillBase + time.Duration(p.promptTokens-p.cached)*s.cfg.PrefillPerToken
	if s.cfg.PrefixCaching && s.cfg.Flavor != FlavorLlamaCpp {
		key := h.Sum64()
		s.cacheMu.Lock()
		if s.cache[key] {
			p.prefill = s.cfg.PrefillBase
		}
		s.cache[key] = true
		s.cacheMu.Unlock()
	}
	if s.cold.Swap(false) {
		p.prefill += s.cfg.ColdStart
	}
	return p
}
