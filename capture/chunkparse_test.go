package capture

import (
	"bytes"
	"os"
	"path/filepath"
	"reflect"
	"testing"
)

// chunkSeeds are the data lines of every transcript plus chunks that probe
// the fast parser's edges.
func chunkSeeds(t testing.TB) [][]byte {
	var out [][]byte
	files, _ := filepath.Glob(filepath.Join("testdata", "sse", "*.sse"))
	for _, fn := range files {
		out = append(out, transcriptData(t, filepath.Base(fn))...)
	}
	for _, s := range []string{
		`{"choices":[{"delta":{"content":"a"}}],"usage":{"prompt_tokens":3,"completion_tokens":9}}`,
		`{"choices":[{"delta":{"content":"\u00e9\n\""},"finish_reason":null,"logprobs":{"x":[1,2.5e-3,{"y":null}]}}]}`,
		`{"choices":[{"delta":{"Content":"a"}}]}`,
		`{"choices":[{"delta":{"content":"a","content":""}}]}`,
		`{"object":"err\u006fr","message":"m"}`,
		`{"choices":[{"delta":{"tool_calls":[ ]}}]}`,
		`{"choices":[{"delta":{"tool_calls":[]}}]}`,
		`{"choices":[{"delta":{"tool_calls":null}}]}`,
		`{"choices":[],"usage":{"prompt_tokens":-0,"completion_tokens":12345678901234567890}}`,
		`{"choices":[],"usage":{"completion_tokens":1e2}}`,
		`{"choices":[],"usage":{"completion_tokens":null}}`,
		`{"choices":[null,{"text":""},{"text":"x"}]}`,
		`{"usage":null,"choices":null,"error":null}`,
		`{"choices":[{"message":{"content":"hi","tool_calls":[1]}}]}`,
		`{"choices":[{"delta":{"content":5}}]}`,
		`{"choices":[{"delta":{"content":"a"}}],}`,
		`{"choices":[{"delta":{"content":"a"}}]} x`,
		`{"a":tru}`,
		`{"error":{"message":"boom"}}`,
		`{"choices":[{"delta":"x"}]}`,
		"{\"choices\":[{\"delta\":{\"content\":\"a\x01\"}}]}",
		`{"ſ":1}`,
		`{"id":"an id with \"quotes\" and \\ slashes long","choices":[{"delta":{"content":"\""}}]}`,
		"{\"id\":\"0123456789abcdef\x1f\",\"choices\":[{\"delta\":{\"content\":\"a\"}}]}",
		"{\"choices\":[{\"delta\":{\"content\":\"\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xff\xfe\"}}]}",
	} {
		out = append(out, []byte(s))
	}
	return out
}

// transcriptData returns the trimmed data of every event of a transcript
// in testdata/sse.
func transcriptData(t testing.TB, name string) [][]byte {
	b, err := os.ReadFile(filepath.Join("testdata", "sse", name))
	if err != nil {
		t.Fatal(err)
	}
	var out [][]byte
	sr := NewSSEReader(bytes.NewReader(b), nil)
	for {
		ev, err := sr.Next()
		if err != nil {
			return out
		}
		out = append(out, bytes.Clone(bytes.TrimSpace(ev.Data)))
	}
}

// sameAsEncodingJSON fails when the fast parser takes data and decides
// otherwise than encoding/json.
func sameAsEncodingJSON(t *testing.T, data []byte) (fast bool) {
	t.Helper()
	got, u, has, ok := fastChunk(data)
	if !ok {
		return false
	}
	want := decodeChunk(&Event{Data: data}, data)
	if want.Err != "" {
		t.Fatalf("fast parser took %q; encoding/json: %s", data, want.Err)
	}
	if got.Content != want.Content || got.Finish != want.Finish || got.Done || got.Err != "" || got.Usage != nil {
		t.Fatalf("%q: fast %+v, encoding/json %+v", data, got, want)
	}
	if has != (want.Usage != nil) || (has && u != *want.Usage) {
		t.Fatalf("%q: fast usage %v %+v, encoding/json %+v", data, has, u, want.Usage)
	}
	if gt := parseTimings(got.timingsRaw); !reflect.DeepEqual(gt, want.Timings) {
		t.Fatalf("%q: fast timings %+v, encoding/json %+v", data, gt, want.Timings)
	}
	return true
}

// TestFastChunkTakesWhatServersSend checks that the fast parser, not
// encoding/json, reads the success chunks of every server's transcript,
// and that it agrees with encoding/json on the edge cases.
func TestFastChunkTakesWhatServersSend(t *testing.T) {
	for _, fn := range []string{"vllm_chat.sse", "vllm_completions.sse", "vllm_reasoning.sse", "sglang_chat.sse",
		"tgi_messages.sse", "llamacpp_chat.sse", "llamacpp_real_chat.sse", "llamacpp_real_completions.sse", "openai_keepalive_crlf.sse", "openai_toolcall_cr.sse"} {
		for _, v := range transcriptData(t, fn) {
			if len(v) == 0 || string(v) == "[DONE]" {
				continue
			}
			if !sameAsEncodingJSON(t, v) {
				t.Errorf("%s: fast parser gave up on %s", fn, v)
			}
		}
	}
	for _, s := range chunkSeeds(t) {
		sameAsEncodingJSON(t, s)
	}
}

// TestParseChunkAllocatesNothing keeps the hot path free of allocations.
func TestParseChunkAllocatesNothing(t *testing.T) {
	ev := &Event{Data: []byte(`{"id":"c","object":"chat.completion.chunk","created":1,"model":"m","choices":[{"index":0,"delta":{"content":"tok "},"logprobs":null,"finish_reason":null}],"usage":{"prompt_tokens":5,"completion_tokens":7,"total_tokens":12}}`)}
	n := testing.AllocsPerRun(100, func() {
		c, u, has := parseChunk(ev)
		if !c.Content || !has || u.CompletionTokens != 7 {
			t.Fatal(c, u, has)
		}
	})
	if n != 0 {
		t.Errorf("%v allocations per chunk", n)
	}
}

// FuzzFastChunk checks that whenever the fast chunk parser takes a chunk,
// encoding/json reads it the same way (content, finish, usage, no error).
func FuzzFastChunk(f *testing.F) {
	for _, s := range chunkSeeds(f) {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		data = bytes.TrimSpace(data)
		if len(data) == 0 || string(data) == "[DONE]" {
			return
		}
		sameAsEncodingJSON(t, data)
	})
}

// TestStringLitControl checks that the string scanner refuses a control
// character and takes every other byte (bar quote and backslash), at every
// position of strings up to 17 bytes among printable and high (UTF-8)
// neighbours.
func TestStringLitControl(t *testing.T) {
	for _, fill := range []byte{'a', 0x20, 0x7f, 0x80, 0xe9, 0xff} {
		for n := 1; n <= 17; n++ {
			for pos := range n {
				for v := range 256 {
					if v == '"' || v == '\\' {
						continue
					}
					b := bytes.Repeat([]byte{fill}, n+2)
					b[0], b[n+1], b[pos+1] = '"', '"', byte(v)
					s := chunkScan{b: b}
					lit, ok := s.stringLit()
					if want := v >= 0x20; ok != want || (ok && !bytes.Equal(lit, b)) {
						t.Fatalf("stringLit(%q) = %q, %v; want ok %v", b, lit, ok, want)
					}
				}
			}
		}
	}
}

// TestStringLitEscapes pins the string scanner's answers on escapes and
// control characters, including a quote that is itself escaped and a
// control character after an escape.
func TestStringLitEscapes(t *testing.T) {
	for _, tc := range []struct {
		in      string
		lit     string
		ok, esc bool
	}{
		{`"abc"x`, `"abc"`, true, false},
		{`""`, `""`, true, false},
		{`"a\"b"`, `"a\"b"`, true, true},
		{`"a\\"b"`, `"a\\"`, true, true},
		{`"\u00e9 long enough to take the word path"`, `"\u00e9 long enough to take the word path"`, true, true},
		{`"\u00g9"`, ``, false, false},
		{`"\x"`, ``, false, false},
		{`"abc`, ``, false, false},
		{`"a\`, ``, false, false},
		{`"a\u12`, ``, false, false},
		{"\"0123456789\tabcdef\"", ``, false, false},
		{"\"a\\n\x01\"", ``, false, false},
		{"\"\xc3\xa9\xff\"", "\"\xc3\xa9\xff\"", true, false},
	} {
		s := chunkScan{b: []byte(tc.in)}
		lit, ok := s.stringLit()
		if ok != tc.ok || string(lit) != tc.lit || (ok && s.esc != tc.esc) {
			t.Errorf("stringLit(%q) = %q, %v (esc %v), want %q, %v (esc %v)", tc.in, lit, ok, s.esc, tc.lit, tc.ok, tc.esc)
		}
	}
}
