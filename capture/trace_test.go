package capture

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchseal/benchseal/schema"
)

const tracesDir = "../testdata/traces"

func readTraceFile(t *testing.T, name string) *Trace {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(tracesDir, name))
	if err != nil {
		t.Fatal(err)
	}
	tr, err := ReadTrace(bytes.NewReader(b), name)
	if err != nil {
		t.Fatal(err)
	}
	return tr
}

// TestReadTraceSamples reads the real-format samples of testdata/traces:
// the format told from the first line, times in ns since the earliest
// request, the lengths as the trace gives them.
func TestReadTraceSamples(t *testing.T) {
	for _, tc := range []struct {
		file, format string
		n            int
		first, last  TraceRequest
	}{
		{"mooncake_conversation.jsonl", schema.TraceMooncake, 14,
			TraceRequest{AtNS: 0, InputTokens: 6758, OutputTokens: 500},
			TraceRequest{AtNS: 9000 * 1e6, InputTokens: 8772, OutputTokens: 1}},
		{"azure_code.csv", schema.TraceAzure, 12,
			TraceRequest{AtNS: 0, InputTokens: 4808, OutputTokens: 10},
			TraceRequest{AtNS: 1399087000, InputTokens: 7427, OutputTokens: 8}},
		// A failed BurstGPT request (Response tokens 0) asks for one token.
		{"burstgpt.csv", schema.TraceBurstGPT, 4,
			TraceRequest{AtNS: 0, InputTokens: 611, OutputTokens: 142},
			TraceRequest{AtNS: 61e9, InputTokens: 240, OutputTokens: 57}},
	} {
		t.Run(tc.file, func(t *testing.T) {
			tr := readTraceFile(t, tc.file)
			if tr.Format != tc.format || len(tr.Requests) != tc.n || len(tr.SHA256) != 64 {
				t.Fatalf("format %q, %d requests, sha256 %q; want %q, %d", tr.Format, len(tr.Requests), tr.SHA256, tc.format, tc.n)
			}
			got := func(q TraceRequest) [3]int64 { return [3]int64{q.AtNS, int64(q.InputTokens), int64(q.OutputTokens)} }
			if f, l := got(tr.Requests[0]), got(tr.Requests[tc.n-1]); f != got(tc.first) || l != got(tc.last) {
				t.Errorf("first %+v, last %+v; want %+v, %+v", f, l, tc.first, tc.last)
			}
		})
	}
	bg := readTraceFile(t, "burstgpt.csv")
	if q := bg.Requests[2]; q.OutputTokens != 1 || q.Line != 4 {
		t.Errorf("failed request: %+v, want 1 output token from line 4", q)
	}
	mc := readTraceFile(t, "mooncake_conversation.jsonl")
	if ids := mc.Requests[3].HashIDs; len(ids) != 5 || ids[0] != 0 || ids[4] != 45 {
		t.Errorf("hash_ids %v, want [0 42 43 44 45]", ids)
	}
}

// TestReadTraceRefusesTimesGoingBackwards: a trace lists its requests in
// arrival order; one whose time goes backwards is refused, naming the
// file, its line and its time field, in every format (it was re-sorted in
// silence). Equal times keep the file's order, times relative to the
// first.
func TestReadTraceRefusesTimesGoingBackwards(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"{\"timestamp\": 0, \"input_length\": 1, \"output_length\": 1}\n{\"timestamp\": 100, \"input_length\": 1, \"output_length\": 1}\n{\"timestamp\": 50, \"input_length\": 1, \"output_length\": 1}\n",
			`read trace back.jsonl:3: field "timestamp": goes backwards: 50ms before line 2's time`},
		{"TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.5,5,6\n2023-11-16 18:17:03.0,5,6\n",
			`read trace back.jsonl:3: field "TIMESTAMP": goes backwards: 500ms before line 2's time`},
		{"Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n5,m,1,1,2,x\n4.5,m,1,1,2,x\n",
			`read trace back.jsonl:3: field "Timestamp": goes backwards: 500ms before line 2's time`},
	} {
		_, err := ReadTrace(strings.NewReader(tc.in), "back.jsonl")
		if err == nil || !strings.HasPrefix(err.Error(), tc.want) || !errors.Is(err, ErrTrace) {
			t.Errorf("got %v, want %s…", err, tc.want)
		}
	}
	in := "{\"timestamp\": 20, \"input_length\": 1, \"output_length\": 1}\n" +
		"{\"timestamp\": 50, \"input_length\": 2, \"output_length\": 1}\n" +
		"{\"timestamp\": 50, \"input_length\": 3, \"output_length\": 1}\n"
	tr, err := ReadTrace(strings.NewReader(in), "t.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	var got []int64
	for _, q := range tr.Requests {
		got = append(got, q.AtNS, int64(q.InputTokens))
	}
	want := []int64{0, 1, 30e6, 2, 30e6, 3}
	if !slicesEqual(got, want) {
		t.Errorf("got %v, want %v", got, want)
	}
}

func slicesEqual(a, b []int64) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestReadTraceErrorsNameFileLineField: every bad trace is a TraceError
// (an ErrTrace) naming the file, line and field.
func TestReadTraceErrorsNameFileLineField(t *testing.T) {
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "  \n", "read trace f: empty file"},
		{"not json", "{\"timestamp\": 1\n", "read trace f:1: not a Mooncake trace line"},
		{"missing timestamp", "{\"input_length\": 1, \"output_length\": 1}\n", `read trace f:1: field "timestamp": missing`},
		{"negative time", "{\"timestamp\": -1, \"input_length\": 1, \"output_length\": 1}\n", `read trace f:1: field "timestamp": -1 is out of range`},
		{"zero input", "\n{\"timestamp\": 1, \"input_length\": 0, \"output_length\": 1}\n", `read trace f:2: field "input_length": 0 is out of range 1..1048576`},
		{"huge output", "{\"timestamp\": 1, \"input_length\": 1, \"output_length\": 99999999999}\n", `field "output_length": 99999999999 is out of range`},
		{"negative block", "{\"timestamp\": 1, \"input_length\": 1, \"output_length\": 1, \"hash_ids\": [3, -2]}\n", `field "hash_ids": block id -2 is negative`},
		{"unknown header", "a,b,c\n1,2,3\n", "read trace f:1: header \"a,b,c\" is neither"},
		{"azure time", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.97,5,5\nyesterday,5,5\n", `read trace f:3: field "TIMESTAMP": "yesterday" is not a date and time`},
		{"azure tokens", "TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.97,5.5,5\n", `read trace f:2: field "ContextTokens": "5.5" is not a whole number of tokens`},
		{"burstgpt seconds", "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\nsoon,ChatGPT,1,1,2,API log\n", `read trace f:2: field "Timestamp": "soon" is not a number of seconds`},
		{"burstgpt short line", "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n1,ChatGPT\n", `read trace f:2: wrong number of fields`},
		{"header only", "TIMESTAMP,ContextTokens,GeneratedTokens\n", "read trace f: no requests"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ReadTrace(strings.NewReader(tc.in), "f")
			var te *TraceError
			if !errors.As(err, &te) || !errors.Is(err, ErrTrace) {
				t.Fatalf("err %v: want a *TraceError", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Errorf("err %q, want it to contain %q", err, tc.want)
			}
		})
	}
}

// TestTraceReplayWindowAndSchedule: the window selects by trace time,
// trace_ns is relative to its first request, and the schedule divides by
// the speedup.
func TestTraceReplayWindowAndSchedule(t *testing.T) {
	tr := readTraceFile(t, "mooncake_conversation.jsonl")
	run, err := ReplayTrace(tr, nil, TraceWindow{Start: 3 * time.Second, End: 9 * time.Second}, 4, 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(run.Items) != 6 || run.Source.Requests != 6 || run.Source.WindowStartNS != 3e9 || run.Source.WindowEndNS != 9e9 {
		t.Fatalf("%d items, source %+v; want the 6 requests at 3 s and 5.999 s", len(run.Items), run.Source)
	}
	it := run.Items[5]
	if *it.TraceNS != 2999e6 || it.InputTokens != 7238 || it.OutputTokens != 11 || len(strings.Fields(it.Prompt)) != 7238 {
		t.Errorf("last item %d ns, %d in, %d out, %d words", *it.TraceNS, it.InputTokens, it.OutputTokens, len(strings.Fields(it.Prompt)))
	}
	if got := schema.TraceOffset(*it.TraceNS, run.Source.Speedup); got != 749750000 {
		t.Errorf("offset %d, want 749750000 (2.999 s / 4)", got)
	}
	if _, err := ReplayTrace(tr, nil, TraceWindow{Start: time.Hour}, 1, 1); err == nil || !strings.Contains(err.Error(), "no request in the window") {
		t.Errorf("empty window: %v", err)
	}
	if _, err := ReplayTrace(tr, nil, TraceWindow{}, 0, 1); err == nil {
		t.Error("speedup 0 accepted")
	}
}

func TestParseTraceWindow(t *testing.T) {
	for in, want := range map[string]TraceWindow{
		"60s..120s": {60 * time.Second, 120 * time.Second},
		"..2m":      {0, 2 * time.Minute},
		"1.5..":     {1500 * time.Millisecond, 0},
	} {
		if got, err := ParseTraceWindow(in); err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"60s", "2m..1m", "x..y", "-5s..", "1e300.."} {
		if _, err := ParseTraceWindow(in); err == nil {
			t.Errorf("%q accepted", in)
		}
	}
}

// FuzzReadTrace: no input panics, and an accepted trace holds requests
// in time order from 0 with lengths within the limits.
func FuzzReadTrace(f *testing.F) {
	names, _ := filepath.Glob(filepath.Join(tracesDir, "*"))
	for _, n := range names {
		if b, err := os.ReadFile(n); err == nil && len(b) < 64<<10 {
			f.Add(b)
		}
	}
	f.Add([]byte("TIMESTAMP,ContextTokens,GeneratedTokens\n2023-11-16 18:17:03.97,5,5\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		tr, err := ReadTrace(bytes.NewReader(b), "fuzz")
		if err != nil {
			if !errors.Is(err, ErrTrace) {
				t.Fatalf("error %v is not an ErrTrace", err)
			}
			return
		}
		prev := int64(0)
		for _, q := range tr.Requests {
			if q.AtNS < prev || q.InputTokens < 1 || q.InputTokens > MaxTraceLength || q.OutputTokens < 1 || q.OutputTokens > MaxTraceLength {
				t.Fatalf("bad request %+v after %d", q, prev)
			}
			prev = q.AtNS
		}
		if tr.Requests[0].AtNS != 0 {
			t.Fatalf("first request at %d", tr.Requests[0].AtNS)
		}
	})
}

// Prefix blocks: the same hash id is the same text wherever it recurs,
// a prompt is its blocks cut to its input length, and a request's
// cacheable tokens are the leading words earlier requests sent as the
// same blocks.
func TestTracePrefixBlocks(t *testing.T) {
	in := `{"timestamp": 0, "input_length": 600, "output_length": 1, "hash_ids": [7, 8]}
{"timestamp": 1, "input_length": 700, "output_length": 1, "hash_ids": [7, 8]}
{"timestamp": 2, "input_length": 300, "output_length": 1, "hash_ids": [7]}
{"timestamp": 3, "input_length": 1100, "output_length": 1, "hash_ids": [9, 7]}
{"timestamp": 4, "input_length": 5, "output_length": 1}
`
	tr, err := ReadTrace(strings.NewReader(in), "p.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	run, err := ReplayTrace(tr, nil, TraceWindow{}, 1, 4)
	if err != nil {
		t.Fatal(err)
	}
	words := func(i int) []string { return strings.Fields(run.Items[i].Prompt) }
	for i, it := range run.Items {
		if n := len(words(i)); n != it.InputTokens {
			t.Errorf("item %d has %d words, input_tokens %d", i, n, it.InputTokens)
		}
	}
	if strings.Join(words(0), " ") != strings.Join(words(1)[:600], " ") || strings.Join(words(2), " ") != strings.Join(words(0)[:300], " ") {
		t.Error("the same blocks are not the same text")
	}
	if strings.Join(words(3)[512:1024], " ") != strings.Join(words(0)[:512], " ") {
		t.Error("block 7 after block 9 is not block 7's text")
	}
	// 0: nothing before; 1: block 7 and the 88 words of block 8 sent;
	// 2: 300 words of block 7; 3: block 9 is new, so nothing.
	for i, want := range []int{0, 600, 300, 0} {
		if got := *run.Items[i].CacheableTokens; got != want {
			t.Errorf("item %d: cacheable %d, want %d", i, got, want)
		}
	}
	if run.Items[4].CacheableTokens != nil {
		t.Error("a request without hash_ids states cacheable tokens")
	}
}
