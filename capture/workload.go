package capture

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"

	"github.com/benchseal/benchseal/schema"
)

// Item is one workload item: a prompt (text or chat messages) and the
// output length to ask for. It is also the line format of workload.jsonl.
type Item struct {
	Prompt   string    `json:"prompt,omitempty"`
	Messages []Message `json:"messages,omitempty"`
	// InputTokens is the prompt length in tokens when known (synthetic
	// prompts), else 0.
	InputTokens int `json:"input_tokens,omitempty"`
	// OutputTokens is the target output length (max_tokens); 0 leaves it to
	// the server.
	OutputTokens int `json:"output_tokens,omitempty"`
	// TraceNS is, in a trace replay, the request's time in the trace less
	// that of the replayed window's first request (schema.TraceSource).
	TraceNS *int64 `json:"trace_ns,omitempty"`
	// CacheableTokens is, in a replay of a trace naming prefix blocks,
	// the prompt's leading words that earlier requests sent as the same
	// blocks: what an unbounded prefix cache would serve.
	CacheableTokens *int `json:"cacheable_tokens,omitempty"`
	// Conversation, Session and Turn are, in a run of multi-turn sessions
	// (SessionRun), the id of the dataset's conversation, the session
	// (0-based) and the turn in it (0-based) this item is; the messages
	// are the turn's question with its history.
	Conversation string `json:"conversation,omitempty"`
	Session      *int   `json:"session,omitempty"`
	Turn         *int   `json:"turn,omitempty"`
}

// ReadPrompts reads a JSONL prompt file. Each line is an object with either
// "prompt" (or "text") or "messages" ([{role, content}]), and optionally
// "output_tokens" (or "max_tokens", "output_len") for the target output
// length. defaultOutput applies to lines that give none.
func ReadPrompts(r io.Reader, name string, defaultOutput int) ([]Item, error) {
	var items []Item
	err := schema.EachJSONLine(r, 16<<20, func(line int, b []byte) error {
		var in struct {
			Prompt       *string   `json:"prompt"`
			Text         *string   `json:"text"`
			Messages     []Message `json:"messages"`
			OutputTokens int       `json:"output_tokens"`
			MaxTokens    int       `json:"max_tokens"`
			OutputLen    int       `json:"output_len"`
			InputTokens  int       `json:"input_tokens"`
		}
		if err := json.Unmarshal(b, &in); err != nil {
			return fmt.Errorf("%s:%d: read prompt: %w", name, line, err)
		}
		it := Item{Messages: in.Messages, InputTokens: in.InputTokens}
		switch {
		case in.Prompt != nil:
			it.Prompt = *in.Prompt
		case in.Text != nil:
			it.Prompt = *in.Text
		}
		if it.Prompt == "" && len(it.Messages) == 0 {
			return fmt.Errorf("%s:%d: read prompt: need \"prompt\", \"text\" or \"messages\"", name, line)
		}
		if it.Prompt != "" && len(it.Messages) > 0 {
			return fmt.Errorf("%s:%d: read prompt: give \"prompt\" or \"messages\", not both", name, line)
		}
		it.OutputTokens = max(in.OutputTokens, in.MaxTokens, in.OutputLen)
		if it.OutputTokens < 0 || in.InputTokens < 0 {
			return fmt.Errorf("%s:%d: read prompt: negative token count", name, line)
		}
		if it.OutputTokens == 0 {
			it.OutputTokens = defaultOutput
		}
		items = append(items, it)
		if len(items) > MaxWorkloadItems {
			return fmt.Errorf("%s: read prompts: more than %d items", name, MaxWorkloadItems)
		}
		return nil
	}, func(line int, err error) error { return fmt.Errorf("%s:%d: read prompts: %w", name, line, err) })
	if err != nil {
		return nil, err
	}
	if len(items) == 0 {
		return nil, fmt.Errorf("%s: read prompts: no items", name)
	}
	return items, nil
}

// vocabulary of synthetic prompts: short common English words, most of
// which are one token in the usual BPE vocabularies.
var vocabulary = strings.Fields(`the of and to in is was for on are with as be at by this have from or
one had not but what all were when we there can an your which their said if do will each about how up
out them then she many some so these would other into has more her two like him see time could no make
than first been its who now people my made over did down only way find use may water long little very
after words called just where most know get through back much before go good new write our used me man
too any day same right look think also around another came come work three word must because does part
even place well such here take why things help put years different away again off went old number great
tell men say small every found still between name should home big give air line set own under read last
never us left end along while might next sound below saw something thought both few those always looked
show large often together asked house world going want school important until form food keep children
feet land side without boy once animals life enough took sometimes four head above kind began almost live
page got earth need far hand high year mother light parts country father let night following picture being
study second eyes soon times story boys since white days ever paper hard near sentence better best across
during today others however sure means knew its try told young miles sun ways thing whole hear example
heard several change answer room sea against top turned learn point city play toward five using himself
usually money seen car morning given body family later order close open fire river`)

// SyntheticItems returns n deterministic prompts of inputTokens words each
// (one word approximates one token), asking for outputTokens tokens. The
// same seed, stream and lengths give the same prompts.
func SyntheticItems(seed uint64, stream uint64, n, inputTokens, outputTokens int) []Item {
	gen := newPromptWords(seed, stream)
	items := make([]Item, n)
	for i := range items {
		items[i] = Item{Prompt: gen.words(inputTokens), InputTokens: inputTokens, OutputTokens: outputTokens}
	}
	return items
}

// promptWords draws synthetic prompts from one seeded stream.
type promptWords struct {
	rng *rand.Rand
	b   strings.Builder
}

func newPromptWords(seed, stream uint64) *promptWords {
	return &promptWords{rng: rand.New(rand.NewPCG(seed, stream^0x9e3779b97f4a7c15))}
}

// words returns the next prompt of n words.
func (g *promptWords) words(n int) string {
	g.b.Reset()
	for w := range n {
		if w > 0 {
			g.b.WriteByte(' ')
		}
		g.b.WriteString(vocabulary[g.rng.IntN(len(vocabulary))])
	}
	return g.b.String()
}

// EncodeWorkload writes items as workload.jsonl and returns the SHA-256
// (hex) of the bytes written.
func EncodeWorkload(w io.Writer, items []Item) (string, error) {
	h := sha256.New()
	bw := bufio.NewWriter(io.MultiWriter(w, h))
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	for i := range items {
		if err := enc.Encode(&items[i]); err != nil {
			return "", fmt.Errorf("write workload item %d: %w", i, err)
		}
	}
	if err := bw.Flush(); err != nil {
		return "", fmt.Errorf("write workload: %w", err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

var errEmptyWorkload = errors.New("empty workload")
