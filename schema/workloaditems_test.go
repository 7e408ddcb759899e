package schema

import (
	"bytes"
	"encoding/json"
	"runtime"
	"testing"
	"unsafe"
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
		if whole.Len() != int64(lines) || split.Len() != int64(lines) || whole.Bad != split.Bad {
			t.Fatalf("%d lines: %d and %d items, bad %d and %d", lines, whole.Len(), split.Len(), whole.Bad, split.Bad)
		}
		for i := range whole.Len() {
			if whole.item(i) != split.item(i) {
				t.Fatalf("item %d: %+v split, %+v whole", i, split.item(i), whole.item(i))
			}
		}
		// A line skipped as naming nothing is bad exactly when
		// encoding/json does not decode it as an object or null.
		for i, line := range bytes.Split(b, []byte{'\n'}) {
			if i == lines {
				break
			}
			if !keyFree(line) {
				continue
			}
			var in map[string]any
			err := json.Unmarshal(line, &in)
			one := NewWorkloadItems()
			one.Write(append(line, '\n'))
			if (one.Bad == 0) != (err == nil) {
				t.Fatalf("line %q: bad %d, encoding/json: %v", line, one.Bad, err)
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
	if w.Len() != int64(len(want)) || w.Bad != 0 {
		t.Fatalf("%d items, bad line %d", w.Len(), w.Bad)
	}
	for i := range want {
		if got := w.item(int64(i)); got != want[i] {
			t.Errorf("item %d: %+v, want %+v", i, got, want[i])
		}
	}
}

// TestWorkloadItemsCostIsBoundedByTheirBytes: a workload of lines that
// compress about 1000:1 ("{}" and the like) made verify keep 16 bytes per
// line and decode every one (a 87 KB bundle held 612 MB). What is kept is
// at most 2.5 bytes per byte of the file (slice growth included), and a line that names nothing
// decodeItem reads is neither decoded nor allocated for.
func TestWorkloadItemsCostIsBoundedByTheirBytes(t *testing.T) {
	const n = 1 << 16
	for _, line := range []string{`{}`, ` null`, `{"a":1,"b":[1,2,{"c":null}]}`, `{"text":""}`, `{"TEXT":"","max_tokens":1}`, `{"input_tokens":7}`, `{"prompt":"x","output_len":3}`} {
		t.Run(line, func(t *testing.T) {
			b := bytes.Repeat([]byte(line+"\n"), n)
			w := NewWorkloadItems()
			w.Write(b)
			w.Close()
			if w.Len() != n || w.Bad != 0 {
				t.Fatalf("%d items, bad line %d", w.Len(), w.Bad)
			}
			kept := uintptr(cap(w.lines))*8 + uintptr(cap(w.stated))*unsafe.Sizeof(itemBound{}) + uintptr(cap(w.line))
			if kept > 5*uintptr(len(b))/2 {
				t.Errorf("keeps %d bytes for %d bytes of items", kept, len(b))
			}
		})
	}
	// Lines that state nothing: no allocation per line.
	b := bytes.Repeat([]byte("{}\n{\"a\":[1,2]}\n null \n"), n)
	w := NewWorkloadItems()
	var m0, m1 runtime.MemStats
	runtime.ReadMemStats(&m0)
	w.Write(b)
	w.Close()
	runtime.ReadMemStats(&m1)
	if allocs := m1.Mallocs - m0.Mallocs; allocs > 16 {
		t.Errorf("%d allocations for %d lines that state nothing", allocs, 3*n)
	}
	if len(w.stated) != 0 || w.Len() != 3*n {
		t.Errorf("%d stated of %d items", len(w.stated), w.Len())
	}
}
