package schema

import (
	"bytes"
	"testing"
)

// FuzzWorkloadItems: any bytes, written in any pieces, give one item per
// line (the last one without a newline included) and the same items
// however they were split.
func FuzzWorkloadItems(f *testing.F) {
	f.Add([]byte(`{"prompt":"a b c","input_tokens":3,"output_tokens":8}`+"\n"+`{"messages":[{"role":"user","content":"hi"}]}`), 7)
	f.Add([]byte(`{"messages":[{"content":[{"type":"image_url"}]}]}`+"\nnot json\n"), 1)
	f.Fuzz(func(t *testing.T, b []byte, cut int) {
		whole := NewWorkloadItems()
		whole.Write(b)
		whole.Close()
		split := NewWorkloadItems()
		if cut = max(cut, 0) % (len(b) + 1); cut > 0 {
			split.Write(b[:cut])
		}
		split.Write(b[cut:])
		split.Close()
		lines := bytes.Count(b, []byte{'\n'})
		if len(b) > 0 && b[len(b)-1] != '\n' {
			lines++
		}
		if len(whole.items) != lines || len(split.items) != lines || whole.Bad != split.Bad {
			t.Fatalf("%d lines: %d and %d items, bad %d and %d", lines, len(whole.items), len(split.items), whole.Bad, split.Bad)
		}
		for i := range whole.items {
			if whole.items[i] != split.items[i] {
				t.Fatalf("item %d: %+v split, %+v whole", i, split.items[i], whole.items[i])
			}
		}
	})
}

func TestWorkloadItemsBoundOnlyWhatTheyState(t *testing.T) {
	w := NewWorkloadItems()
	w.Write([]byte(`{"prompt":"four words of text","input_tokens":4,"output_tokens":8}` + "\n" +
		`{"messages":[{"role":"user","content":"hi"},{"role":"user","content":[{"type":"image_url"}]}]}` + "\n" +
		`{"text":"xyz","max_tokens":3,"output_len":5}`))
	w.Close()
	want := []itemBound{{textBytes: 18, input: 4, outp: 8}, {textBytes: -1}, {textBytes: 3, outp: 5}}
	if len(w.items) != len(want) || w.Bad != 0 {
		t.Fatalf("%+v, bad line %d", w.items, w.Bad)
	}
	for i := range want {
		if w.items[i] != want[i] {
			t.Errorf("item %d: %+v, want %+v", i, w.items[i], want[i])
		}
	}
}
