package capture_test

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/benchseal/benchseal/capture"
)

// TestTranscripts reads stream transcripts in the formats vLLM, SGLang,
// TGI, llama.cpp and OpenAI send (see testdata/README.md) and checks what
// the client takes from each: content chunks only, usage, in-band errors.
func TestTranscripts(t *testing.T) {
	tests := []struct {
		file      string
		content   int
		done      bool
		finished  bool
		usage     int64 // completion tokens, -1 none
		errSubstr string
		comments  int
	}{
		{"vllm_chat.sse", 2, true, true, 3, "", 0},
		{"vllm_completions.sse", 2, true, true, 3, "", 0},
		{"vllm_inband_error.sse", 1, false, false, -1, "The engine died", 0},
		{"vllm_reasoning.sse", 3, true, true, 5, "", 0},
		{"sglang_chat.sse", 2, true, true, 2, "", 0},
		{"sglang_inband_error.sse", 1, false, false, -1, "InternalServerError: Request aborted", 0},
		{"tgi_messages.sse", 2, true, true, 2, "", 0},
		{"tgi_error_event.sse", 1, false, false, -1, "generation: Request failed", 0},
		{"llamacpp_chat.sse", 1, true, true, 1, "", 0},
		{"llamacpp_error.sse", 1, false, false, -1, "context shift is disabled", 0},
		{"llamacpp_real_chat.sse", 3, true, true, 3, "", 0},
		{"llamacpp_real_completions.sse", 3, true, true, 3, "", 0},
		{"openai_keepalive_crlf.sse", 2, true, true, 2, "", 2},
		{"openai_toolcall_cr.sse", 2, true, true, -1, "", 0},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			b, err := os.ReadFile(filepath.Join("testdata", "sse", tt.file))
			if err != nil {
				t.Fatal(err)
			}
			for name, r := range map[string]io.Reader{
				"whole":    bytes.NewReader(b),
				"one-byte": iotest.OneByteReader(bytes.NewReader(b)),
				"half":     iotest.HalfReader(bytes.NewReader(b)),
			} {
				clock := int64(0)
				res := capture.ReadStream(capture.NewSSEReader(r, func() int64 { clock++; return clock }), 0)
				if len(res.Chunks) != tt.content || res.Done != tt.done || res.Finished != tt.finished || res.KeepAlives != tt.comments {
					t.Errorf("%s: content %d done %v finished %v comments %d; want %d %v %v %d", name,
						len(res.Chunks), res.Done, res.Finished, res.KeepAlives, tt.content, tt.done, tt.finished, tt.comments)
				}
				got := int64(-1)
				if res.Usage != nil {
					got = res.Usage.CompletionTokens
				}
				if got != tt.usage {
					t.Errorf("%s: usage %d, want %d", name, got, tt.usage)
				}
				if strings.HasPrefix(tt.file, "llamacpp_real") && (res.Timings == nil || res.Timings.PredictedN == nil || *res.Timings.PredictedN != tt.usage || !res.Usage.HasCached) {
					t.Errorf("%s: timings %+v usage %+v, want llama.cpp's predicted_n and cached tokens", name, res.Timings, res.Usage)
				}
				if (tt.errSubstr == "") != (res.Err == "") || !strings.Contains(res.Err, tt.errSubstr) {
					t.Errorf("%s: err %q, want %q", name, res.Err, tt.errSubstr)
				}
				for i := 1; i < len(res.Chunks); i++ {
					if res.Chunks[i] < res.Chunks[i-1] {
						t.Errorf("%s: chunk times decrease", name)
					}
				}
			}
		})
	}
}

// TestChunkTimeIsTheReadThatCompletedIt checks that an event's time is the
// clock reading after the read that delivered the end of its data line, and
// that the clock is read once per read, not when parsing finishes.
func TestChunkTimeIsTheReadThatCompletedIt(t *testing.T) {
	parts := []string{
		"data: {\"choices\":[{\"delta\":{\"content\":\"a\"}}]}\n\ndata: {\"choices\":[{\"del",
		"ta\":{\"content\":\"b\"}}]}\n",
		"\n: ping\n\ndata: [DONE]\n\n",
	}
	var rs []io.Reader
	for _, p := range parts {
		rs = append(rs, strings.NewReader(p))
	}
	clock := int64(0)
	sr := capture.NewSSEReader(io.MultiReader(rs...), func() int64 { clock += 10; return clock })
	res := capture.ReadStream(sr, 0)
	if len(res.Chunks) != 2 || res.Chunks[0] != 10 || res.Chunks[1] != 20 || res.End != 30 || !res.Done {
		t.Fatalf("%+v", res)
	}
	// One clock reading per read that returned bytes, none while framing
	// or parsing.
	if clock != 30 {
		t.Errorf("clock read %d times for 3 reads", clock/10)
	}
}

func TestOversizedEventIsAnError(t *testing.T) {
	r := io.MultiReader(strings.NewReader("data: "), io.LimitReader(zeros{}, capture.MaxEventSize+10))
	res := capture.ReadStream(capture.NewSSEReader(r, nil), 0)
	if res.ReadErr == nil {
		t.Fatal("no error")
	}
}

type zeros struct{}

func (zeros) Read(p []byte) (int, error) {
	for i := range p {
		p[i] = 'x'
	}
	return len(p), nil
}

// FuzzSSE checks that the reader never panics and that how the bytes are
// split into reads never changes the events.
func FuzzSSE(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join("testdata", "sse", "*.sse"))
	for _, fn := range files {
		b, _ := os.ReadFile(fn)
		f.Add(b)
	}
	f.Add([]byte("data: x\r\n\r\n:c\rdata:[DONE]"))
	f.Add([]byte("error: {}\n\nevent: error\n\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		whole := events(t, bytes.NewReader(b))
		split := events(t, iotest.OneByteReader(bytes.NewReader(b)))
		if len(whole) != len(split) {
			t.Fatalf("whole %d events, one-byte %d", len(whole), len(split))
		}
		for i := range whole {
			if whole[i] != split[i] {
				t.Fatalf("event %d: %q vs %q", i, whole[i], split[i])
			}
		}
		capture.ReadStream(capture.NewSSEReader(bytes.NewReader(b), nil), 0)
	})
}

func events(t *testing.T, r io.Reader) []string {
	sr := capture.NewSSEReader(r, nil)
	var out []string
	for {
		ev, err := sr.Next()
		if err != nil {
			return out
		}
		c := capture.ParseChunk(ev)
		out = append(out, ev.Name+"|"+string(ev.Data)+"|"+c.Err+"|"+strings.Repeat("c", ev.Comments)+"|"+boolStr(c.Content))
	}
}

func boolStr(b bool) string {
	if b {
		return "1"
	}
	return "0"
}
