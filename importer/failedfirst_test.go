package importer

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/importer/internal/importtest"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/verify"
)

// failedFirst is, per tool with records, a real fixture edited so that the
// first record the import writes is a failed request without chunks, and
// the overlay the import then needs. Claims the edit would falsify are
// dropped (the summary file left out, or the edited file's summary keys
// made to agree), so that verify passes on an honest run.
var failedFirst = map[string]func(testing.TB) ([]ingest.File, []string){
	"aiperf": func(tb testing.TB) ([]ingest.File, []string) {
		// The fixture's first line is a cancelled request (code 499, no
		// response); moved before every other start it becomes record 0.
		// The summary is left out: its window starts at the first start.
		f := importtest.Load(tb, "aiperf", "run1_profile_export.jsonl")[0]
		lines := strings.Split(strings.TrimSuffix(string(f.Data), "\n"), "\n")
		first := ""
		for _, l := range lines {
			var r struct {
				Metadata struct {
					Start json.Number `json:"timestamp_ns"`
				} `json:"metadata"`
			}
			decodeNumbers(tb, []byte(l), &r)
			if first == "" || len(r.Metadata.Start) < len(first) || (len(r.Metadata.Start) == len(first) && string(r.Metadata.Start) < first) {
				first = string(r.Metadata.Start)
			}
		}
		v, _ := strconv.ParseInt(first, 10, 64)
		old := `"timestamp_ns":` + extractNumber(tb, lines[0], `"timestamp_ns":`)
		lines[0] = strings.Replace(lines[0], old, `"timestamp_ns":`+strconv.FormatInt(v-1000, 10), 1)
		f.Data = []byte(strings.Join(lines, "\n") + "\n")
		return []ingest.File{f}, []string{"model.name=openai/gpt-oss-20b"}
	},
	"genai-perf": func(tb testing.TB) ([]ingest.File, []string) {
		// The earliest request gets no response; the summary (claims) is
		// left out.
		f := importtest.Load(tb, "genai-perf", "profile_export.json")[0]
		var fx map[string]any
		decodeNumbers(tb, f.Data, &fx)
		reqs := fx["experiments"].([]any)[0].(map[string]any)["requests"].([]any)
		first := reqs[0].(map[string]any)
		for _, r := range reqs {
			if r.(map[string]any)["timestamp"].(json.Number) < first["timestamp"].(json.Number) {
				first = r.(map[string]any)
			}
		}
		first["response_timestamps"], first["response_outputs"] = []any{}, []any{}
		f.Data = mustJSON(tb, fx)
		return []ingest.File{f}, nil
	},
	"vllm": func(tb testing.TB) ([]ingest.File, []string) {
		// Request 0 fails as vLLM stores a failure (success false: empty
		// text, no ttft or itls, an error); the summary keeps what stays
		// true (duration) and the two figures recomputed for 9 of 10.
		f := importtest.Load(tb, "vllm", "lambdalabs_llama3_8b_h100_prompt10.json")[0]
		var fx map[string]any
		decodeNumbers(tb, f.Data, &fx)
		out := map[string]any{}
		for _, k := range []string{"date", "backend", "model_id", "tokenizer_id", "num_prompts", "request_rate", "duration", "input_lens", "output_lens", "ttfts", "itls", "generated_texts", "errors"} {
			out[k] = fx[k]
		}
		out["output_lens"].([]any)[0] = json.Number("0")
		out["ttfts"].([]any)[0] = json.Number("0.0")
		out["itls"].([]any)[0] = []any{}
		out["generated_texts"].([]any)[0] = ""
		out["errors"].([]any)[0] = "Server disconnected"
		dur, _ := fx["duration"].(json.Number).Float64()
		out["completed"] = json.Number("9")
		out["request_throughput"] = json.Number(strconv.FormatFloat(9/dur, 'g', -1, 64))
		f.Data = mustJSON(tb, out)
		return []ingest.File{f}, nil
	},
	"sglang": func(tb testing.TB) ([]ingest.File, []string) {
		// Each line's failed request (the last) is moved to the front of
		// its per-request lists: its summary does not depend on order.
		f := importtest.Load(tb, "sglang", "sglang_0101_12_256_64.jsonl")[0]
		var out bytes.Buffer
		sc := bufio.NewScanner(bytes.NewReader(f.Data))
		sc.Buffer(nil, 1<<24)
		for sc.Scan() {
			var line map[string]any
			decodeNumbers(tb, sc.Bytes(), &line)
			errs := line["errors"].([]any)
			bad := -1
			for i, e := range errs {
				if e != "" {
					bad = i
				}
			}
			if bad < 0 {
				tb.Fatal("sglang fixture line without a failed request")
			}
			for _, k := range []string{"input_lens", "output_lens", "ttfts", "itls", "generated_texts", "errors"} {
				l := line[k].([]any)
				v := l[bad]
				l = append(l[:bad:bad], l[bad+1:]...)
				line[k] = append([]any{v}, l...)
			}
			b, err := json.Marshal(line)
			if err != nil {
				tb.Fatal(err)
			}
			out.Write(append(b, '\n'))
		}
		f.Data = out.Bytes()
		return []ingest.File{f}, nil
	},
	"guidellm": func(tb testing.TB) ([]ingest.File, []string) {
		// The earliest request is moved to errored (with GuideLLM's error
		// text); the benchmark's metrics (claims) are dropped.
		f := importtest.Load(tb, "guidellm", "qwen3_4b_concurrent_benchmarks.json")[0]
		var fx map[string]any
		decodeNumbers(tb, f.Data, &fx)
		b := fx["benchmarks"].([]any)[0].(map[string]any)
		reqs := b["requests"].(map[string]any)
		ok := reqs["successful"].([]any)
		start := func(r any) json.Number {
			return r.(map[string]any)["info"].(map[string]any)["timings"].(map[string]any)["request_start"].(json.Number)
		}
		sort.Slice(ok, func(i, j int) bool { return start(ok[i]) < start(ok[j]) })
		e := ok[0].(map[string]any)
		e["info"].(map[string]any)["error"] = "HTTP 500"
		e["info"].(map[string]any)["status"] = "errored"
		e["output_tokens"] = json.Number("0")
		tm := e["info"].(map[string]any)["timings"].(map[string]any)
		for _, k := range []string{"first_token_iteration", "last_token_iteration", "first_request_iteration", "last_request_iteration"} {
			delete(tm, k)
		}
		reqs["successful"], reqs["errored"] = ok[1:], []any{e}
		delete(b, "metrics")
		f.Data = mustJSON(tb, fx)
		return []ingest.File{f}, nil
	},
	"inference-perf": func(tb testing.TB) ([]ingest.File, []string) {
		// The earliest request fails as inference-perf stores a failure
		// (an ErrorResponseInfo, no response metrics); the summaries
		// (claims) are left out.
		f := importtest.Load(tb, "inference-perf", "per_request_lifecycle_metrics.json")[0]
		var fx []map[string]any
		decodeNumbers(tb, f.Data, &fx)
		sort.Slice(fx, func(i, j int) bool { return fx[i]["start_time"].(json.Number) < fx[j]["start_time"].(json.Number) })
		fx[0]["error"] = map[string]any{"error_type": "ClientResponseError", "error_msg": "503, message='Service Unavailable'"}
		fx[0]["info"].(map[string]any)["response_metrics"] = nil
		f.Data = mustJSON(tb, fx)
		return []ingest.File{f}, []string{"model.name=HuggingFaceTB/SmolLM2-135M-Instruct"}
	},
	"llmperf": func(tb testing.TB) ([]ingest.File, []string) {
		// Request 0 fails as LLMPerf stores a failure (error code and
		// message, zero latencies and output); the summary is left out,
		// so its concurrency is stated.
		f := importtest.Load(tb, "llmperf", "groq_70b_individual_responses.json")[0]
		var fx []map[string]any
		decodeNumbers(tb, f.Data, &fx)
		fx[0] = map[string]any{"error_code": json.Number("500"), "error_msg": "Internal Server Error", "inter_token_latency_s": json.Number("0"),
			"ttft_s": json.Number("0"), "end_to_end_latency_s": json.Number("0"), "request_output_throughput_token_per_s": json.Number("0"),
			"number_total_tokens": json.Number("550"), "number_output_tokens": json.Number("0"), "number_input_tokens": json.Number("550")}
		f.Data = mustJSON(tb, fx)
		return []ingest.File{f}, []string{`load.points=[{"name":"llmperf","concurrency":5,"requests":150}]`, "model.name=llama2-70b-4096"}
	},
}

func mustJSON(tb testing.TB, v any) []byte {
	tb.Helper()
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// extractNumber returns the number that follows key in line.
func extractNumber(tb testing.TB, line, key string) string {
	tb.Helper()
	i := strings.Index(line, key)
	if i < 0 {
		tb.Fatalf("no %s in %.80s", key, line)
	}
	s := line[i+len(key):]
	n := strings.IndexFunc(s, func(r rune) bool { return r != '-' && (r < '0' || r > '9') })
	return s[:n]
}

// TestFailedFirstRecordVerifies: an honest import whose first record is a
// failed request without chunks imports, validates, packs and verifies
// (the bundle's records re-encode to the bytes the re-import gives).
func TestFailedFirstRecordVerifies(t *testing.T) {
	for _, tool := range Tools() {
		if im, _ := Lookup(tool); !im.Peer.Records {
			continue // no records (mlperf)
		}
		t.Run(tool, func(t *testing.T) {
			edit, ok := failedFirst[tool]
			if !ok {
				t.Fatalf("no failed-first input for %s", tool)
			}
			files, set := edit(t)
			tmp := t.TempDir()
			for i := range files {
				p := filepath.Join(tmp, files[i].Name)
				if err := os.WriteFile(p, files[i].Data, 0o644); err != nil {
					t.Fatal(err)
				}
				files[i].Name = p
			}
			dir := filepath.Join(tmp, "run")
			ctx := context.Background()
			if _, err := Import(ctx, tool, files, dir, Options{Set: set}); err != nil {
				t.Fatal(err)
			}
			b, err := os.ReadFile(filepath.Join(dir, schema.RecordsFile))
			if err != nil {
				t.Fatal(err)
			}
			first, err := schema.DecodeRecord(b[:bytes.IndexByte(b, '\n')])
			if err != nil {
				t.Fatal(err)
			}
			if first.Status == schema.StatusOK || len(first.ChunksNS) != 0 {
				t.Fatalf("the edited input's first record is %s with %d chunks, want a failed one without chunks", first.Status, len(first.ChunksNS))
			}
			if _, err := schema.CheckRunDir(ctx, dir, 10, nil); err != nil {
				t.Fatalf("validate: %v", err)
			}
			if err := checkDir(t, dir); err != nil {
				t.Fatalf("validate (re-derive): %v", err)
			}
			bundle := filepath.Join(tmp, "bundle")
			if _, err := artifact.Pack(ctx, dir, bundle, artifact.PackOptions{Created: artifacttest.Created}); err != nil {
				t.Fatal(err)
			}
			v, err := verify.NewVerifier(nil, verify.WithClaimChecker(replay.ClaimChecker{}), verify.WithImportChecker(Rederiver{}))
			if err != nil {
				t.Fatal(err)
			}
			if _, err := v.Verify(ctx, bundle, verify.Policy{AllowUnsignedUnsafe: true}); err != nil {
				t.Fatalf("verify: %v", err)
			}
		})
	}
}
