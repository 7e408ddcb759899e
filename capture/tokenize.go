// Synthetic prompts of exactly N tokens of the served model, counted by the
// server's own tokenizer endpoint.

package capture

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/benchseal/benchseal/schema"
)

// Tokenizer counts the prompt tokens the server will count for one
// synthetic prompt sent through the run's API: its usage.prompt_tokens.
type Tokenizer interface {
	// Count returns the prompt tokens of text sent as a completion prompt
	// or as the one user message of a chat request.
	Count(ctx context.Context, text string) (int, error)
	// Name says which endpoint counts, for the manifest's note.
	Name() string
}

// tokenizeTimeout bounds one call of a tokenizer endpoint.
const tokenizeTimeout = 10 * time.Second

// maxFitCalls bounds the tokenizer calls spent on one prompt.
const maxFitCalls = 24

// serverTokenizer is a tokenizer endpoint of the server at base.
type serverTokenizer struct {
	client *http.Client
	base   string
	apiKey string
	model  string
	chat   bool
	// llama: llama.cpp's shapes, else vLLM's (SGLang serves the same).
	llama bool
}

// newTokenizer returns the tokenizer endpoint of the engine the probe
// recognised, nil when it knows of none.
//
// llama.cpp (ggml-org/llama.cpp, tools/server/README.md): POST /tokenize
// {"content", "add_special"} answers {"tokens": [...]}; POST
// /apply-template {"messages"} answers {"prompt"}, the text a chat
// request's messages become. Its usage.prompt_tokens is the tokens of that
// text with the BOS token (add_special), as measured against its server at
// commit de3ff815 for chat and completions.
//
// vLLM (vllm-project/vllm, vllm/entrypoints/openai/protocol.py,
// TokenizeCompletionRequest, TokenizeChatRequest, TokenizeResponse): POST
// /tokenize {"model", "prompt", "add_special_tokens"} or {"model",
// "messages", "add_generation_prompt"} answers {"count", "tokens",
// "max_model_len"}. SGLang's /tokenize takes the completion form and
// answers the same members.
func newTokenizer(client *http.Client, base, apiKey, model, api string, si *ServerInfo) Tokenizer {
	if si == nil {
		return nil
	}
	t := &serverTokenizer{client: client, base: strings.TrimRight(base, "/"), apiKey: apiKey, model: model, chat: api == APIChat}
	switch {
	case si.Speaks == EngineLlamaCpp:
		t.llama = true
	case si.EngineName == "vllm":
	case si.EngineName == "sglang" && !t.chat:
	default:
		return nil
	}
	return t
}

func (t *serverTokenizer) Name() string {
	switch {
	case t.llama && t.chat:
		return "POST /apply-template, then POST /tokenize with add_special (llama.cpp)"
	case t.llama:
		return "POST /tokenize with add_special (llama.cpp)"
	case t.chat:
		return "POST /tokenize with the messages and add_generation_prompt (vLLM)"
	}
	return "POST /tokenize with add_special_tokens (vLLM, SGLang)"
}

func (t *serverTokenizer) Count(ctx context.Context, text string) (int, error) {
	msgs := []Message{{Role: "user", Content: text}}
	if !t.llama {
		q := map[string]any{"model": t.model, "prompt": text, "add_special_tokens": true}
		if t.chat {
			q = map[string]any{"model": t.model, "messages": msgs, "add_generation_prompt": true}
		}
		var a struct {
			Count  *int  `json:"count"`
			Tokens []int `json:"tokens"`
		}
		if err := t.post(ctx, "/tokenize", q, &a); err != nil {
			return 0, err
		}
		if a.Count == nil {
			return 0, errors.New("POST /tokenize: the answer has no count")
		}
		return *a.Count, nil
	}
	if t.chat {
		var a struct {
			Prompt *string `json:"prompt"`
		}
		if err := t.post(ctx, "/apply-template", map[string]any{"messages": msgs}, &a); err != nil {
			return 0, err
		}
		if a.Prompt == nil {
			return 0, errors.New("POST /apply-template: the answer has no prompt")
		}
		text = *a.Prompt
	}
	var a struct {
		Tokens *[]json.RawMessage `json:"tokens"`
	}
	if err := t.post(ctx, "/tokenize", map[string]any{"content": text, "add_special": true}, &a); err != nil {
		return 0, err
	}
	if a.Tokens == nil {
		return 0, errors.New("POST /tokenize: the answer has no tokens")
	}
	return len(*a.Tokens), nil
}

func (t *serverTokenizer) post(ctx context.Context, path string, q, a any) error {
	body, err := json.Marshal(q)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, tokenizeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, t.base+path, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if t.apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+t.apiKey)
	}
	resp, err := t.client.Do(req)
	if err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	if resp.StatusCode/100 != 2 {
		return fmt.Errorf("POST %s: %s: %.200s", path, resp.Status, bytes.TrimSpace(b))
	}
	if err := json.Unmarshal(b, a); err != nil {
		return fmt.Errorf("POST %s: %w", path, err)
	}
	return nil
}

// FitPrompt returns prompt changed, word by word, until tok counts exactly
// n tokens for it: words dropped from its end while it counts more, words
// of the synthetic vocabulary appended while it counts fewer (a word that
// overshoots is replaced by the next). stream picks the words appended.
// The error says when n cannot be reached within maxFitCalls counts (n is
// below what an empty prompt counts, or no word lands on it).
func FitPrompt(ctx context.Context, tok Tokenizer, prompt string, n int, stream uint64) (string, error) {
	words := strings.Fields(prompt)
	next := int(stream % uint64(len(vocabulary)))
	var c int
	for range maxFitCalls {
		var err error
		if c, err = tok.Count(ctx, strings.Join(words, " ")); err != nil {
			return "", err
		}
		switch {
		case c == n:
			return strings.Join(words, " "), nil
		case c > n && len(words) > 1:
			// Most words are one token or more: drop as many as the
			// excess, at least one.
			drop := max(1, min(c-n, len(words)-1)/2)
			words = words[:len(words)-drop]
		case c > n:
			return "", fmt.Errorf("a prompt of one word counts %d tokens, more than %d", c, n)
		default:
			add := max(1, (n-c)/2)
			for range add {
				words = append(words, vocabulary[next])
				next = (next + 1) % len(vocabulary)
			}
		}
	}
	return "", fmt.Errorf("no prompt of %d tokens reached in %d counts (the last counted %d)", n, maxFitCalls, c)
}

// NoteInputTokens is the manifest note that states the unit of the
// synthetic prompts' lengths (workload.input_tokens, the items'
// input_tokens) and of the records' input_tokens, and how many records
// are uncounted (promptCounts.noteRecords).
const NoteInputTokens = "input_tokens"

// fitPrompts makes every synthetic prompt (and the preflight probe's) n
// tokens of the served model, counted by the server's tokenizer endpoint,
// then rebuilds the request bodies and the workload (wl, its hash in m).
// Without an endpoint, or when one fails, the prompts stay n words and the
// note says so: one unit for the whole run, never a mix.
func (r *runner) fitPrompts(ctx context.Context, base string, si *ServerInfo, m *schema.Manifest, wl *bytes.Buffer) error {
	tok := r.o.Tokenizer
	if tok == nil {
		tok = newTokenizer(r.client, base, r.o.APIKey, r.o.Request.Model, r.o.Request.API, si)
	}
	if tok == nil {
		setNote(m, NoteInputTokens, "synthetic prompts are N words of benchseal's vocabulary, not N tokens: the server offered no tokenizer endpoint benchseal knows (llama.cpp's, vLLM's or SGLang's POST /tokenize); workload.input_tokens and the workload items' input_tokens are words")
		return nil
	}
	fitted := make([]string, len(r.items))
	done := map[[2]string]string{}
	fit := func(it *Item, k int) (string, error) {
		key := [2]string{it.Prompt, fmt.Sprint(it.InputTokens)}
		if p, ok := done[key]; ok {
			return p, nil
		}
		p, err := FitPrompt(ctx, tok, it.Prompt, it.InputTokens, uint64(k))
		if err == nil {
			done[key] = p
		}
		return p, err
	}
	for i := range r.items {
		p, err := fit(&r.items[i], i)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			setNote(m, NoteInputTokens, fmt.Sprintf("synthetic prompts are N words of benchseal's vocabulary, not N tokens: counting them with the server's %s failed (%v); workload.input_tokens and the workload items' input_tokens are words", tok.Name(), err))
			return nil
		}
		fitted[i] = p
	}
	var probe string
	if r.probe != nil {
		p, err := fit(r.probe, len(r.items))
		if err != nil {
			setNote(m, NoteInputTokens, fmt.Sprintf("synthetic prompts are N words, not N tokens: counting the probe's with the server's %s failed (%v)", tok.Name(), err))
			return nil
		}
		probe = p
	}
	for i := range r.items {
		r.items[i].Prompt = fitted[i]
		b, err := RequestBody(r.o.Request, &r.items[i])
		if err != nil {
			return fmt.Errorf("capture failed: %w", err)
		}
		r.bodies[i] = b
	}
	if r.probe != nil {
		r.probe.Prompt = probe
	}
	wl.Reset()
	sum, err := EncodeWorkload(wl, r.items)
	if err != nil {
		return err
	}
	m.Workload.SHA256 = sum
	r.counts.fitted = true
	setNote(m, NoteInputTokens, fmt.Sprintf("synthetic prompts are exactly N tokens of the served model as the server counts them (its usage.prompt_tokens), each counted with the server's %s before the run: workload.input_tokens, the workload items' and every record's input_tokens are tokens", tok.Name()))
	return nil
}
