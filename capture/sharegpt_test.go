package capture

import (
	"os"
	"strings"
	"testing"
)

const shareGPTSample = "../testdata/conversations/sharegpt_sample.json"

func TestReadShareGPTSample(t *testing.T) {
	data, err := os.ReadFile(shareGPTSample)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ReadShareGPT(data, shareGPTSample)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Conversations) != 3 || s.Skipped != 1 {
		t.Fatalf("%d conversations, %d skipped; want 3 and 1 (the entry starting with an answer)", len(s.Conversations), s.Skipped)
	}
	turns := []int{2, 2, 1} // the last one's trailing question has no answer
	for i, c := range s.Conversations {
		if len(c.Turns) != turns[i] {
			t.Errorf("conversation %s: %d turns, want %d", c.ID, len(c.Turns), turns[i])
		}
	}
	if c := s.Conversations[1]; c.System != "You answer in one sentence." || c.Entry != 1 {
		t.Errorf("conversation 1: system %q entry %d", c.System, c.Entry)
	}
	first := s.FirstTurns(0)
	if len(first) != 3 || len(first[1].Messages) != 2 || first[0].OutputTokens != 27 {
		t.Errorf("first turns: %+v", first)
	}
}

// TestSessionTurnsCarryTheDatasetHistory: turn t of a session is its
// question with every earlier question and the dataset's answer to it.
func TestSessionTurnsCarryTheDatasetHistory(t *testing.T) {
	data, _ := os.ReadFile(shareGPTSample)
	s, err := ReadShareGPT(data, shareGPTSample)
	if err != nil {
		t.Fatal(err)
	}
	run, err := s.Sessions(4, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Starts) != 5 || run.Starts[4] != len(run.Items) || run.Source.Turns != len(run.Items) {
		t.Fatalf("starts %v, %d items, source %+v", run.Starts, len(run.Items), run.Source)
	}
	for sess := range 4 {
		for k := run.Starts[sess]; k < run.Starts[sess+1]; k++ {
			it := run.Items[k]
			turn := k - run.Starts[sess]
			if *it.Session != sess || *it.Turn != turn {
				t.Fatalf("item %d: session %d turn %d, want %d %d", k, *it.Session, *it.Turn, sess, turn)
			}
			users := 0
			for _, m := range it.Messages {
				if m.Role != "system" {
					users++
				}
			}
			if users != 2*turn+1 || it.Messages[len(it.Messages)-1].Role != "user" {
				t.Errorf("item %d (turn %d): %d messages besides system ones", k, turn, users)
			}
			if turn > 0 {
				prev := run.Items[k-1].Messages
				if got := it.Messages[:len(prev)]; got[len(got)-1] != prev[len(prev)-1] {
					t.Errorf("item %d does not start with turn %d's messages", k, turn-1)
				}
				if it.Messages[len(prev)].Role != "assistant" {
					t.Errorf("item %d: no dataset answer after turn %d's question", k, turn-1)
				}
			}
		}
	}
	// n larger than the conversations cycles through them; --output-tokens
	// replaces the answers' lengths.
	run, _ = s.Sessions(7, 1, 9)
	if len(run.Starts) != 8 || run.Items[0].OutputTokens != 9 {
		t.Errorf("7 sessions: starts %v, output %d", run.Starts, run.Items[0].OutputTokens)
	}
}

func TestReadShareGPTErrorsNameEntryAndField(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{`{}`, "want a JSON list"},
		{`[{"id":"a"}]`, `entry 0 (id a): field "conversations": missing`},
		{`[{"id":"a","conversations":[{"from":"human","value":"x"},{"from":"gpt"}]}]`, `entry 0 (id a): field "conversations[1]": want "from" and "value"`},
		{`[{"id":"a","conversations":[{"from":"human","value":"x"},{"from":"gpt","value":"y"}]},{"id":"b","conversations":[{"from":"robot","value":"x"}]}]`, `entry 1 (id b): field "conversations[0].from": "robot" is not a ShareGPT role`},
		{`[{"id":"a","conversations":[{"from":"human","value":"x"},{"from":"system","value":"y"}]}]`, `field "conversations[1].from": a system prompt comes first`},
		{`[{"id":"a","conversations":[{"from":"gpt","value":"x"}]}]`, "no conversation with an answered question (1 entries skipped)"},
		{`[{"id":"a","conversations":[{"from":"human","value":"x"},{"from":"gpt","value":"y"}]}] []`, "data after the list"},
		{`[{"id":"a","conversations":[{"from":"human","value":1}]}]`, "entry 0: json: cannot unmarshal"},
	} {
		_, err := ReadShareGPT([]byte(c.in), "conv.json")
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "conv.json") {
			t.Errorf("%s: %v, want %q", c.in, err, c.want)
		}
	}
}

func FuzzReadShareGPT(f *testing.F) {
	if data, err := os.ReadFile(shareGPTSample); err == nil {
		f.Add(data)
	}
	f.Add([]byte(`[{"id":"a","conversations":[{"from":"human","value":"x"},{"from":"gpt","value":"y"}]}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ReadShareGPT(data, "f.json")
		if err != nil {
			return
		}
		for _, c := range s.Conversations {
			if len(c.Turns) == 0 || len(c.Turns) > MaxConversationTurns {
				t.Fatalf("conversation %s: %d turns", c.ID, len(c.Turns))
			}
		}
		run, err := s.Sessions(3, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		if run.Starts[len(run.Starts)-1] != len(run.Items) {
			t.Fatal("starts do not end at the item count")
		}
	})
}
