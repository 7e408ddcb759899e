// ShareGPT conversations: single-turn prompts and multi-turn sessions.

package capture

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"

	"github.com/benchseal/benchseal/schema"
)

// Exchange is one turn of a conversation: the user's message and the
// dataset's answer to it.
type Exchange struct {
	User, Answer string
}

// Conversation is one ShareGPT entry: its id, its system prompt (empty:
// none) and its turns, each a user message with the dataset's answer.
type Conversation struct {
	ID     string
	System string
	Turns  []Exchange
	// Entry is the entry's 0-based position in the file.
	Entry int
}

// ShareGPT is a ShareGPT file read: its conversations, how many entries
// were left out and why, and the file's SHA-256.
type ShareGPT struct {
	Conversations []Conversation
	// Skipped counts the entries left out: no user message answered
	// before the first turn that is not an answer (a conversation that
	// starts with an answer, or two user messages in a row).
	Skipped int
	File    string
	SHA256  string
}

// ReadShareGPT reads a ShareGPT JSON file: a list of entries {"id",
// "conversations": [{"from", "value"}]}, the format of
// ShareGPT_V3_unfiltered_cleaned_split.json (Hugging Face
// anon8231489123/ShareGPT_Vicuna_unfiltered) that vLLM's benchmarks read.
// "from" is human or user (a user message), gpt, chatgpt, bard, bing or
// assistant (an answer), or system (a system prompt, first only); other
// fields of an entry are ignored. A conversation is its leading
// user-answer pairs: it ends at the first message out of that order (a
// trailing question without an answer is dropped), and an entry with no
// answered question is skipped and counted. Errors name the file, the
// entry and the field.
func ReadShareGPT(data []byte, name string) (*ShareGPT, error) {
	sum := sha256.Sum256(data)
	out := &ShareGPT{File: filepath.Base(name), SHA256: hex.EncodeToString(sum[:])}
	dec := json.NewDecoder(bytes.NewReader(data))
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, fmt.Errorf("read sharegpt %s: want a JSON list of conversations", name)
	}
	for entry := 0; dec.More(); entry++ {
		if entry >= MaxConversations {
			return nil, fmt.Errorf("read sharegpt %s: more than %d entries", name, MaxConversations)
		}
		var in struct {
			ID            json.RawMessage `json:"id"`
			Conversations []struct {
				From  *string `json:"from"`
				Value *string `json:"value"`
			} `json:"conversations"`
		}
		if err := dec.Decode(&in); err != nil {
			return nil, fmt.Errorf("read sharegpt %s: entry %d: %w", name, entry, err)
		}
		c := Conversation{Entry: entry, ID: strings.Trim(string(in.ID), `"`)}
		if in.Conversations == nil {
			return nil, fmt.Errorf("read sharegpt %s: entry %d (id %s): field \"conversations\": missing, want a list of {from, value}", name, entry, c.ID)
		}
		size, pending, done := 0, "", false
		var pendingSet bool
		for i, m := range in.Conversations {
			field := fmt.Sprintf("conversations[%d]", i)
			if m.From == nil || m.Value == nil {
				return nil, fmt.Errorf("read sharegpt %s: entry %d (id %s): field %q: want \"from\" and \"value\" strings", name, entry, c.ID, field)
			}
			size += len(*m.Value)
			if size > MaxConversationBytes {
				return nil, fmt.Errorf("read sharegpt %s: entry %d (id %s): field %q: the conversation's text is over %d bytes", name, entry, c.ID, field, MaxConversationBytes)
			}
			if done {
				continue
			}
			switch *m.From {
			case "system":
				if i != 0 {
					return nil, fmt.Errorf("read sharegpt %s: entry %d (id %s): field %q: a system prompt comes first", name, entry, c.ID, field+".from")
				}
				c.System = *m.Value
			case "human", "user":
				if pendingSet {
					done = true // two questions in a row: the conversation ends before
					continue
				}
				pending, pendingSet = *m.Value, true
			case "gpt", "chatgpt", "bard", "bing", "assistant":
				if !pendingSet {
					done = true // an answer to no question
					continue
				}
				c.Turns = append(c.Turns, Exchange{User: pending, Answer: *m.Value})
				pendingSet = false
				done = len(c.Turns) == MaxConversationTurns
			default:
				return nil, fmt.Errorf("read sharegpt %s: entry %d (id %s): field %q: %q is not a ShareGPT role (human, gpt or system)", name, entry, c.ID, field+".from", *m.From)
			}
		}
		if len(c.Turns) == 0 {
			out.Skipped++
			continue
		}
		out.Conversations = append(out.Conversations, c)
	}
	if _, err := dec.Token(); err != nil {
		return nil, fmt.Errorf("read sharegpt %s: %w", name, err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("read sharegpt %s: data after the list", name)
	}
	if len(out.Conversations) == 0 {
		return nil, fmt.Errorf("read sharegpt %s: no conversation with an answered question (%d entries skipped)", name, out.Skipped)
	}
	return out, nil
}

// answerLength is a turn's output length from the dataset's answer: its
// whitespace-separated words (at least 1), or outputTokens when set.
func answerLength(answer string, outputTokens int) int {
	if outputTokens > 0 {
		return outputTokens
	}
	return max(1, len(strings.Fields(answer)))
}

// messages returns turn t of c with its history: the system prompt, the
// earlier questions with the dataset's answers, and question t.
func (c *Conversation) messages(t int) []Message {
	var ms []Message
	if c.System != "" {
		ms = append(ms, Message{Role: "system", Content: c.System})
	}
	for _, e := range c.Turns[:t] {
		ms = append(ms, Message{Role: "user", Content: e.User}, Message{Role: "assistant", Content: e.Answer})
	}
	return append(ms, Message{Role: "user", Content: c.Turns[t].User})
}

// FirstTurns returns one single-turn item per conversation, in file
// order: its first question (with its system prompt), asking for the
// dataset answer's length in words, or outputTokens when set (what vLLM's
// ShareGPT benchmark sends: the first question, the first answer's
// length).
func (s *ShareGPT) FirstTurns(outputTokens int) []Item {
	items := make([]Item, len(s.Conversations))
	for i := range s.Conversations {
		c := &s.Conversations[i]
		items[i] = Item{Messages: c.messages(0), OutputTokens: answerLength(c.Turns[0].Answer, outputTokens)}
	}
	return items
}

// SessionRun is the workload of a session run: every turn of every
// session, one item each, in session order.
type SessionRun struct {
	Source schema.SessionSource
	Items  []Item
	// Starts holds each session's first request number, then the number
	// of requests.
	Starts []int
}

// Sessions lays out n sessions, each one conversation of s in an order
// drawn from seed (cycling when n is larger than the conversations):
// every turn is an item carrying its history with the dataset's answers
// (schema.HistoryDataset) and asking for the dataset answer's length in
// words, or outputTokens when set.
func (s *ShareGPT) Sessions(n int, seed int64, outputTokens int) (*SessionRun, error) {
	if n < 1 || n > MaxConversations {
		return nil, fmt.Errorf("--sessions %d: want 1 to %d sessions", n, MaxConversations)
	}
	perm := Order(len(s.Conversations), seed, sessionStream)
	run := &SessionRun{Source: schema.SessionSource{Format: schema.ConversationsShareGPT, File: s.File,
		SHA256: s.SHA256, Sessions: n, History: schema.HistoryDataset}}
	for sess := range n {
		c := &s.Conversations[perm[sess%len(perm)]]
		run.Starts = append(run.Starts, len(run.Items))
		for t := range c.Turns {
			if len(run.Items) >= MaxWorkloadItems {
				return nil, fmt.Errorf("--sessions %d: more than %d turns", n, MaxWorkloadItems)
			}
			session, turn := sess, t
			run.Items = append(run.Items, Item{Messages: c.messages(t), OutputTokens: answerLength(c.Turns[t].Answer, outputTokens),
				Conversation: c.ID, Session: &session, Turn: &turn})
		}
	}
	run.Starts = append(run.Starts, len(run.Items))
	run.Source.Turns = len(run.Items)
	return run, nil
}

// sessionStream is the seeded stream of the sessions' conversation order.
const sessionStream = 0x73657373 // "sess"
