package genaiperf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/importer/internal/importtest"
	"github.com/benchseal/benchseal/schema"
)

// fixture is hand-written from the documented format (see
// testdata/README.md and testdata/fixtures/handwritten.py).
var fixture = []string{"profile_export.json", "profile_export_genai_perf.json"}

func TestExternalCheck(t *testing.T) {
	files := importtest.Load(t, "genai-perf", fixture...)
	checks := importtest.ExternalCheck(t, Tool, files, Parse, knownMismatch)
	importtest.WantOutcomes(t, checks, importtest.Outcomes{Matched: 27, Mismatched: 0, NotRecomputable: 14, NotRecomputableMetrics: []string{"output_token_throughput", "tpot_ns.max", "tpot_ns.mean", "tpot_ns.min", "tpot_ns.p1", "tpot_ns.p10", "tpot_ns.p25", "tpot_ns.p5", "tpot_ns.p50", "tpot_ns.p75", "tpot_ns.p90", "tpot_ns.p95", "tpot_ns.p99", "tpot_ns.stddev"}})
	importtest.WantDocRow(t, "GenAI-Perf streaming", checks)
}

// knownMismatch lists claims whose recomputation differs because of the
// replay engine's peer formulas, by metric.
var knownMismatch = map[string]string{}

func TestBadInputFails(t *testing.T) {
	good := importtest.Load(t, "genai-perf", fixture...)
	name := fixture[0]
	cases := append(importtest.CommonBad(t, Tool, good),
		importtest.BadInput{Name: "NaN", Files: importtest.Replace(t, good, 0, `"timestamp": 1735689600000000334`, `"timestamp": NaN`), Want: []string{name, "NaN"}},
		importtest.BadInput{Name: "negative duration", Files: importtest.Replace(t, good, 0, `1735689600048219346`, `1735689500048219346`), Want: []string{name, "record 0", "negative"}},
		importtest.BadInput{Name: "missing timestamp", Files: importtest.Replace(t, good, 0, `"timestamp": 1735689600000000334`, `"x": 1`), Want: []string{name, "record 0", "timestamp"}},
		importtest.BadInput{Name: "mixed units", Files: importtest.Replace(t, good, 0, `"timestamp": 1735689600000000334`, `"timestamp": 1735689600.000000334`), Want: []string{name, "record 0", "timestamp"}},
	)
	importtest.CheckBad(t, Parse, cases)
}

func FuzzParse(f *testing.F) {
	importtest.FuzzParse(f, Tool, importtest.Load(f, "genai-perf", fixture...), 0, Parse)
}

// nonStreaming rewrites the fixture into the shape GenAI-Perf writes
// without --streaming (as in perf_analyzer's
// genai-perf/tests/test_data_parser/test_llm_profile_data_parser.py): one
// response per request whose body is a whole chat.completion with usage,
// a payload with "stream": false, and input_config.endpoint.streaming
// false in the summary. Request i answers 40 + i tokens.
func nonStreaming(t *testing.T, files []ingest.File) []ingest.File {
	t.Helper()
	var e map[string]any
	dec := json.NewDecoder(bytes.NewReader(files[0].Data))
	dec.UseNumber()
	if err := dec.Decode(&e); err != nil {
		t.Fatal(err)
	}
	for _, x := range e["experiments"].([]any) {
		for i, r := range x.(map[string]any)["requests"].([]any) {
			req := r.(map[string]any)
			ts := req["response_timestamps"].([]any)
			req["response_timestamps"] = ts[len(ts)-1:]
			body := fmt.Sprintf(`{"id":"%d","object":"chat.completion","model":"meta-llama/Llama-3.1-8B-Instruct","choices":[{"index":0,"message":{"role":"assistant","content":"…"},"finish_reason":"length"}],"usage":{"prompt_tokens":128,"total_tokens":%d,"completion_tokens":%d}}`, i, 128+40+i, 40+i)
			req["response_outputs"] = []any{map[string]any{"response": body}}
			req["request_inputs"] = map[string]any{"payload": `{"model":"meta-llama/Llama-3.1-8B-Instruct","stream":false}`}
		}
	}
	eb, _ := json.Marshal(e)
	var sum map[string]any
	if err := json.Unmarshal(files[1].Data, &sum); err != nil {
		t.Fatal(err)
	}
	sum["input_config"] = map[string]any{"model_names": []any{"meta-llama/Llama-3.1-8B-Instruct"}, "endpoint": map[string]any{"type": "chat", "streaming": false}, "tokenizer": map[string]any{"name": "meta-llama/Llama-3.1-8B-Instruct"}}
	sb, _ := json.Marshal(sum)
	return []ingest.File{{Name: files[0].Name, Data: eb}, {Name: files[1].Name, Data: sb}}
}

func TestNonStreamingExportIsE2EOnlyWithServerTokens(t *testing.T) {
	files := nonStreaming(t, importtest.Load(t, "genai-perf", fixture...))
	res, err := Parse(files)
	if err != nil {
		t.Fatal(err)
	}
	m := res.Manifest
	if m.Decoding.Streaming || m.Client.Boundary != schema.BoundaryNonStreaming {
		t.Errorf("streaming %v boundary %q, want non-streaming", m.Decoding.Streaming, m.Client.Boundary)
	}
	if m.Client.TokenCounts != "server-usage" || m.Provenance.Field(schema.FieldOutputTokens).Status != schema.FieldMeasured {
		t.Errorf("token counts %q (%+v), want server-usage, measured", m.Client.TokenCounts, m.Provenance.Field(schema.FieldOutputTokens))
	}
	if m.Provenance.Field(schema.FieldFirstChunk).Usable() {
		t.Error("first chunk of a non-streaming response declared usable")
	}
	var sum int64
	for _, r := range res.Records {
		if r.OutputTokens < 40 || r.InputTokens != 128 || len(r.ChunksNS) != 1 {
			t.Errorf("record %s: %d/%d tokens, %d chunks", r.ID, r.OutputTokens, r.InputTokens, len(r.ChunksNS))
		}
		sum += r.OutputTokens
	}
	if sum != 10*40+45 {
		t.Errorf("output tokens %d, want the servers' 445", sum)
	}
	checks := importtest.ExternalCheck(t, Tool, files, Parse, knownMismatch)
	// TTFT and ITL of a non-streaming run are not recomputable; latency and
	// request throughput are.
	importtest.WantOutcomes(t, checks, importtest.Outcomes{Matched: 14, NotRecomputable: 27, NotRecomputableMetrics: []string{"output_token_throughput",
		"tpot_ns.max", "tpot_ns.mean", "tpot_ns.min", "tpot_ns.p1", "tpot_ns.p10", "tpot_ns.p25", "tpot_ns.p5", "tpot_ns.p50", "tpot_ns.p75", "tpot_ns.p90", "tpot_ns.p95", "tpot_ns.p99", "tpot_ns.stddev",
		"ttft_ns.max", "ttft_ns.mean", "ttft_ns.min", "ttft_ns.p1", "ttft_ns.p10", "ttft_ns.p25", "ttft_ns.p5", "ttft_ns.p50", "ttft_ns.p75", "ttft_ns.p90", "ttft_ns.p95", "ttft_ns.p99", "ttft_ns.stddev"}})
	importtest.WantDocRow(t, "GenAI-Perf non-streaming", checks)
}

func TestStreamingFlagContradictedByResponsesFails(t *testing.T) {
	files := nonStreaming(t, importtest.Load(t, "genai-perf", fixture...))
	good := importtest.Load(t, "genai-perf", fixture...)
	files[0] = good[0] // five responses per request, summary says not streaming
	_, err := Parse(files)
	if err == nil || !errors.Is(err, ingest.ErrBadInput) || !strings.Contains(err.Error(), "not streaming") {
		t.Fatalf("error %v, want a bad-input error about the streaming flag", err)
	}
}

// csvSummary has the shape of profile_export_genai_perf.csv (GenAI-Perf's
// documented example: two tables, thousands separators in quotes).
const csvSummary = "Metric,avg,min,max,p99,p95,p90,p75,p50,p25\r\n" +
	"Time To First Token (ms),23.94,22.92,30.75,30.10,27.51,24.26,23.38,23.20,23.02\r\n" +
	"Request Latency (ms),\"5,919.16\",\"5,912.73\",\"5,934.45\",\"5,933.31\",\"5,928.74\",\"5,923.03\",\"5,920.17\",\"5,918.56\",\"5,915.29\"\r\n" +
	"\r\nMetric,Value\r\nOutput Token Throughput (per sec),86.48\r\nRequest Throughput (per sec),0.17\r\n"

func TestCSVSummary(t *testing.T) {
	csv := ingest.File{Name: "profile_export_genai_perf.csv", Data: []byte(csvSummary)}
	_, err := Parse([]ingest.File{csv})
	if err == nil || !errors.Is(err, ingest.ErrNoFiles) || !strings.Contains(err.Error(), "needs profile_export.json") {
		t.Fatalf("CSV alone: %v, want an error naming the file needed", err)
	}
	files := append(importtest.Load(t, "genai-perf", fixture...), csv)
	if _, err := Parse(files); err != nil {
		t.Fatalf("CSV beside the export: %v", err)
	}
}

func FuzzStream(f *testing.F) {
	importtest.FuzzStream(f, importtest.Load(f, "genai-perf", fixture...), 0, Stream)
}
