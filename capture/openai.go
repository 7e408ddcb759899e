package capture

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// APIs the client can drive.
const (
	APIChat        = "chat"        // POST /v1/chat/completions
	APICompletions = "completions" // POST /v1/completions
)

// Usage is the token usage a server reports.
type Usage struct {
	PromptTokens     int64
	CompletionTokens int64
	// CachedTokens is usage.prompt_tokens_details.cached_tokens, the
	// prompt tokens served from the engine's prefix cache (OpenAI's field;
	// vLLM, SGLang and llama.cpp send it); HasCached says it was sent as
	// an integer.
	CachedTokens int64
	HasCached    bool
}

// usageJSON is usage as sent. prompt_tokens_details is read apart
// (cachedTokens), so that a server's odd details never fail a request.
type usageJSON struct {
	PromptTokens        int64           `json:"prompt_tokens"`
	CompletionTokens    int64           `json:"completion_tokens"`
	PromptTokensDetails json.RawMessage `json:"prompt_tokens_details"`
}

func (u *usageJSON) usage() *Usage {
	if u == nil {
		return nil
	}
	out := &Usage{PromptTokens: u.PromptTokens, CompletionTokens: u.CompletionTokens}
	out.CachedTokens, out.HasCached = cachedTokens(u.PromptTokensDetails)
	return out
}

// cachedTokens reads prompt_tokens_details.cached_tokens; anything else
// (null, another shape) is none.
func cachedTokens(raw json.RawMessage) (int64, bool) {
	var d struct {
		CachedTokens *int64 `json:"cached_tokens"`
	}
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' || json.Unmarshal(raw, &d) != nil || d.CachedTokens == nil {
		return 0, false
	}
	return *d.CachedTokens, true
}

// Timings are llama.cpp's per-request timers (the "timings" object of its
// last chunk or whole answer): prompt tokens computed and reused from the
// slot's cache, tokens generated, and the milliseconds each phase took on
// the server's clock.
type Timings struct {
	PromptN     *int64   `json:"prompt_n"`
	CacheN      *int64   `json:"cache_n"`
	PredictedN  *int64   `json:"predicted_n"`
	PromptMS    *float64 `json:"prompt_ms"`
	PredictedMS *float64 `json:"predicted_ms"`
}

// parseTimings reads a timings object; anything it cannot read (another
// server's field of that name, wrong types) is no timings, never an error
// of the request.
func parseTimings(raw json.RawMessage) *Timings {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || raw[0] != '{' {
		return nil
	}
	var t Timings
	if json.Unmarshal(raw, &t) != nil {
		return nil
	}
	if t.PromptN == nil && t.CacheN == nil && t.PredictedN == nil && t.PromptMS == nil && t.PredictedMS == nil {
		return nil
	}
	return &t
}

// Chunk is what one streamed event says, as far as the client cares.
type Chunk struct {
	// Content is true when the chunk carries generated output: non-empty
	// text, content, reasoning content or tool-call deltas.
	Content bool
	// Done is true for the "[DONE]" sentinel.
	Done bool
	// Finish is true when a choice carries a finish_reason.
	Finish bool
	// Usage is set when the chunk carries a usage object.
	Usage *Usage
	// Timings is set when the chunk carries llama.cpp's timings.
	Timings *Timings
	// timingsRaw is the timings value the fast parser found, read by
	// parseChunk (with parseTimings, as decodeChunk does).
	timingsRaw []byte
	// Err is the message of an in-band error, or "" when there is none.
	Err string
}

// chunkJSON covers the fields of OpenAI-style stream chunks (chat and
// completions) as sent by OpenAI, vLLM, SGLang, TGI and llama.cpp.
type chunkJSON struct {
	Object  string `json:"object"`
	Choices []struct {
		Text  *string `json:"text"`
		Delta *struct {
			Content          *string         `json:"content"`
			ReasoningContent *string         `json:"reasoning_content"`
			Reasoning        *string         `json:"reasoning"`
			ToolCalls        json.RawMessage `json:"tool_calls"`
		} `json:"delta"`
		Message *struct {
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			Reasoning        *string `json:"reasoning"`
		} `json:"message"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage     *usageJSON      `json:"usage"`
	Timings   json.RawMessage `json:"timings"`
	Error     json.RawMessage `json:"error"`
	Message   string          `json:"message"`
	ErrorType string          `json:"error_type"`
}

var doneSentinel = []byte("[DONE]")

// ParseChunk classifies one server-sent event of an OpenAI-compatible
// stream. Events with no data (keep-alive comments) are neither content nor
// errors. An event named "error", a llama.cpp "error:" field, an object
// with a non-null "error" member or with "object":"error" is an in-band
// error. Data that is not JSON is an error too: a stream the client cannot
// read is not a success.
func ParseChunk(ev *Event) Chunk {
	c, u, has := parseChunk(ev)
	if has {
		c.Usage = &u
	}
	return c
}

// parseChunk is ParseChunk with the usage returned as a value (has: the
// chunk carried one), so the hot path allocates nothing. Well-formed chunks
// are read by fastChunk; the rest by encoding/json.
func parseChunk(ev *Event) (c Chunk, u Usage, has bool) {
	data := bytes.TrimSpace(ev.Data)
	if !ev.ErrorField && ev.Name != "error" && len(data) == 0 {
		return Chunk{}, u, false
	}
	if bytes.Equal(data, doneSentinel) {
		return Chunk{Done: true}, u, false
	}
	if !ev.ErrorField && ev.Name == "" {
		if c, u, has, ok := fastChunk(data); ok {
			if c.timingsRaw != nil {
				c.Timings, c.timingsRaw = parseTimings(c.timingsRaw), nil
			}
			return c, u, has
		}
	}
	c = decodeChunk(ev, data)
	if c.Usage != nil {
		u, c.Usage = *c.Usage, nil
		return c, u, true
	}
	return c, u, false
}

// decodeChunk is ParseChunk's rule by encoding/json, for data (ev.Data
// trimmed) that is neither empty nor "[DONE]".
func decodeChunk(ev *Event, data []byte) Chunk {
	var c chunkJSON
	if err := json.Unmarshal(data, &c); err != nil {
		if ev.ErrorField || ev.Name == "error" {
			return Chunk{Err: "in-band error: " + truncate(string(data), 300)}
		}
		return Chunk{Err: "malformed stream chunk: " + truncate(string(data), 120)}
	}
	if msg, ok := inBandError(ev, &c, data); ok {
		return Chunk{Err: msg}
	}
	out := Chunk{Usage: c.Usage.usage(), Timings: parseTimings(c.Timings)}
	for i := range c.Choices {
		ch := &c.Choices[i]
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			out.Finish = true
		}
		if nonEmpty(ch.Text) {
			out.Content = true
		}
		if d := ch.Delta; d != nil {
			if nonEmpty(d.Content) || nonEmpty(d.ReasoningContent) || nonEmpty(d.Reasoning) || hasToolCalls(d.ToolCalls) {
				out.Content = true
			}
		}
		if m := ch.Message; m != nil {
			if nonEmpty(m.Content) || nonEmpty(m.ReasoningContent) || nonEmpty(m.Reasoning) {
				out.Content = true
			}
		}
	}
	return out
}

func inBandError(ev *Event, c *chunkJSON, data []byte) (string, bool) {
	e := bytes.TrimSpace(c.Error)
	switch {
	case len(e) > 0 && !bytes.Equal(e, []byte("null")):
		var obj struct {
			Message string `json:"message"`
			Type    string `json:"type"`
			Code    any    `json:"code"`
		}
		var s string
		if json.Unmarshal(e, &s) == nil {
			if c.ErrorType != "" {
				return "in-band error: " + c.ErrorType + ": " + truncate(s, 300), true
			}
			return "in-band error: " + truncate(s, 300), true
		}
		if json.Unmarshal(e, &obj) == nil && obj.Message != "" {
			if obj.Type != "" {
				return "in-band error: " + obj.Type + ": " + truncate(obj.Message, 300), true
			}
			return "in-band error: " + truncate(obj.Message, 300), true
		}
		return "in-band error: " + truncate(string(e), 300), true
	case c.Object == "error":
		return "in-band error: " + truncate(c.Message, 300), true
	case ev.ErrorField || ev.Name == "error":
		return "in-band error: " + truncate(string(data), 300), true
	}
	return "", false
}

func nonEmpty(s *string) bool { return s != nil && *s != "" }

func hasToolCalls(raw json.RawMessage) bool {
	t := bytes.TrimSpace(raw)
	return len(t) > 0 && !bytes.Equal(t, []byte("null")) && !bytes.Equal(t, []byte("[]"))
}

func truncate(s string, n int) string {
	s = strings.ToValidUTF8(s, "?")
	if len(s) <= n {
		return s
	}
	for n > 0 && !validStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}

func validStart(b byte) bool { return b&0xC0 != 0x80 }

// Message is one chat message.
type Message struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

// RequestOptions are the body settings every request of a run shares.
type RequestOptions struct {
	Model  string
	API    string // APIChat or APICompletions
	Stream bool
	// ForceLength sends min_tokens and ignore_eos (vLLM, SGLang, llama.cpp
	// extensions) besides max_tokens, so the server generates exactly the
	// target output length.
	ForceLength bool
	// PerChunkUsage asks for usage on every chunk (vLLM's
	// stream_options.continuous_usage_stats), giving chunk_tokens.
	PerChunkUsage bool
	Temperature   *float64
	Seed          *int64
}

// RequestBody returns the JSON body for one workload item.
func RequestBody(o RequestOptions, it *Item) ([]byte, error) {
	body := map[string]any{"model": o.Model}
	switch o.API {
	case APIChat:
		if len(it.Messages) > 0 {
			body["messages"] = it.Messages
		} else {
			body["messages"] = []Message{{Role: "user", Content: it.Prompt}}
		}
	case APICompletions:
		if it.Prompt == "" && len(it.Messages) > 0 {
			var b strings.Builder
			for _, m := range it.Messages {
				b.WriteString(m.Content)
				b.WriteString("\n")
			}
			body["prompt"] = b.String()
		} else {
			body["prompt"] = it.Prompt
		}
	default:
		return nil, fmt.Errorf("unknown api %q (want %s or %s)", o.API, APIChat, APICompletions)
	}
	if o.Stream {
		body["stream"] = true
		so := map[string]any{"include_usage": true}
		if o.PerChunkUsage {
			so["continuous_usage_stats"] = true
		}
		body["stream_options"] = so
	}
	if it.OutputTokens > 0 {
		body["max_tokens"] = it.OutputTokens
		if o.ForceLength {
			body["min_tokens"] = it.OutputTokens
			body["ignore_eos"] = true
		}
	}
	if o.Temperature != nil {
		body["temperature"] = *o.Temperature
	}
	if o.Seed != nil {
		body["seed"] = *o.Seed
	}
	return json.Marshal(body)
}
