package simulator

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"
)

func (s *Server) whole(ctx context.Context, w http.ResponseWriter, p *plan, chat bool, id string, tm *timing) {
	// The engine generates the tokens as it would for a stream; only the
	// client sees them at once. Its first token is timed for the metrics.
	first := p.prefill
	for range p.chunks[0] {
		first += s.tokenTime()
	}
	if !s.sleep(ctx, w, first, false) {
		return
	}
	tm.first = time.Now()
	s.metrics.firstToken(tm)
	d := time.Duration(0)
	for _, k := range p.chunks[1:] {
		for range k {
			d += s.tokenTime()
		}
	}
	if !s.sleep(ctx, w, d, false) {
		return
	}
	tm.last = time.Now()
	var text strings.Builder
	for range p.outputTokens {
		text.WriteString(words[p.rng.IntN(len(words))])
		text.WriteByte(' ')
	}
	type usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	}
	u := usage{p.promptTokens, p.outputTokens, p.promptTokens + p.outputTokens}
	var body any
	if chat {
		body = map[string]any{"id": id, "object": "chat.completion", "created": 0, "model": s.cfg.Model,
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": text.String()}, "finish_reason": "length"}},
			"usage":   u}
	} else {
		body = map[string]any{"id": id, "object": "text_completion", "created": 0, "model": s.cfg.Model,
			"choices": []any{map[string]any{"index": 0, "text": text.String(), "finish_reason": "length"}},
			"usage":   u}
	}
	if s.cfg.Flavor == FlavorLlamaCpp {
		// usage with cached tokens, timings and system_fingerprint, spliced
		// into the encoded object.
		b, _ := json.Marshal(body)
		tail := p.llamaUsage(append([]byte(`,"system_fingerprint":"`+LlamaCppBuildInfo+`",`), nil...), p.outputTokens, tm, true)
		u := bytes.LastIndex(b, []byte(`,"usage":`))
		body = json.RawMessage(append(append(b[:u:u], tail...), '}'))
	}
	w.Header().Set("Content-Type", "application/json")
	if json.NewEncoder(w).Encode(body) == nil {
		s.served.Add(1)
		tm.output = p.outputTokens
		s.metrics.finished(tm, "length")
		if s.cfg.Flavor == FlavorLlamaCpp {
			s.llamaFinished(tm, p.cached)
		}
	}
}
