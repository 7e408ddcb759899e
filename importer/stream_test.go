package importer

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/importer/aiperf"
	"github.com/benchseal/benchseal/importer/genaiperf"
	"github.com/benchseal/benchseal/importer/guidellm"
	"github.com/benchseal/benchseal/importer/inferenceperf"
	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/importer/internal/importtest"
	"github.com/benchseal/benchseal/importer/llmperf"
	"github.com/benchseal/benchseal/importer/sglang"
	"github.com/benchseal/benchseal/schema"
)

var update = flag.Bool("update", false, "rewrite golden files")

var aiperfFiles = []string{"run1_profile_export.jsonl", "run1_profile_export_aiperf.json"}

// importCase is one import: a tool's fixture, or a synthetic input whose
// requests are stored out of order of start over several points.
type importCase struct {
	name, tool string
	files      func(testing.TB) []ingest.File
}

func importCases() []importCase {
	var cases []importCase
	for _, tool := range Tools() {
		cases = append(cases, importCase{tool, tool, func(tb testing.TB) []ingest.File { return importtest.Load(tb, tool, fixtures[tool]...) }})
	}
	return append(cases,
		importCase{"genai-perf-synthetic", genaiperf.Tool, func(tb testing.TB) []ingest.File {
			return []ingest.File{{Name: "profile_export.json", Data: syntheticGenAIPerf(tb, 2000, 3)}}
		}},
		importCase{"guidellm-synthetic", guidellm.Tool, func(tb testing.TB) []ingest.File {
			return []ingest.File{{Name: "benchmarks.json", Data: syntheticGuideLLM(tb, 2000)}}
		}},
		importCase{"inference-perf-synthetic", inferenceperf.Tool, func(tb testing.TB) []ingest.File {
			return []ingest.File{{Name: "per_request_lifecycle_metrics.json", Data: syntheticInferencePerf(tb, 2000)}}
		}},
	)
}

// A streamed import writes the records the in-memory parser builds, in
// the same order, byte for byte, and keeps none of them.
func TestStreamedImportWritesTheParsedRecords(t *testing.T) {
	for _, tc := range importCases() {
		t.Run(tc.name, func(t *testing.T) {
			files := tc.files(t)
			im, _ := Lookup(tc.tool)
			res, err := im.Parse(files)
			if err != nil {
				t.Fatal(err)
			}
			var want []byte
			for i := range res.Records {
				if want, err = schema.AppendRecord(want, &res.Records[i]); err != nil {
					t.Fatal(err)
				}
				want = append(want, '\n')
			}
			dest := filepath.Join(t.TempDir(), "run")
			got, err := Import(context.Background(), tc.tool, files, dest, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if got.Written != int64(len(res.Records)) || len(got.Records) != 0 {
				t.Errorf("Written = %d, Records = %d; want %d written, none kept", got.Written, len(got.Records), len(res.Records))
			}
			b, err := os.ReadFile(filepath.Join(dest, schema.RecordsFile))
			if err != nil && len(res.Records) > 0 {
				t.Fatal(err)
			}
			if !bytes.Equal(b, want) {
				t.Errorf("streamed records differ from the parsed ones")
			}
		})
	}
}

// Every import writes what it wrote when the importers read whole
// documents (testdata/imports.golden: SHA-256 of each file of the run
// directory; b21fcca's importers wrote the same for the fixtures and the
// GenAI-Perf and inference-perf synthetic inputs, and rejected the
// GuideLLM one, whose three benchmarks of one strategy it named x, x#2,
// x#2): streaming changed no byte. A tool with records states the
// digests of its fixture's import in its own contract test
// (peertest.Case.Imports); the golden holds the rest.
func TestImportsMatchGoldenDigests(t *testing.T) {
	var got bytes.Buffer
	for _, tc := range importCases() {
		if pt, ok := schema.LookupPeerTool(tc.name); ok && pt.Records {
			continue
		}
		dest := filepath.Join(t.TempDir(), "run")
		if _, err := Import(context.Background(), tc.tool, tc.files(t), dest, Options{}); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		for _, f := range []string{schema.RecordsFile, "manifest.json", "claims.json"} {
			b, err := os.ReadFile(filepath.Join(dest, f))
			if errors.Is(err, os.ErrNotExist) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			fmt.Fprintf(&got, "%s %s %x\n", tc.name, f, sha256.Sum256(b))
		}
	}
	golden := filepath.Join("testdata", "imports.golden")
	if *update {
		if err := os.MkdirAll("testdata", 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(golden, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want) {
		t.Errorf("imports differ from %s:\ngot:\n%s\nwant:\n%s", golden, got.Bytes(), want)
	}
}

// A bad line in the middle of a streamed file is reported by file, line
// and field, and nothing is left at the destination.
func TestStreamedImportErrorNamesFileAndLine(t *testing.T) {
	files := importtest.Load(t, aiperf.Tool, aiperfFiles...)
	lines := bytes.SplitAfter(files[0].Data, []byte("\n"))
	lines[56] = bytes.Replace(lines[56], []byte(`"request_latency":`), []byte(`"x_request_latency":`), 1)
	files[0].Data = bytes.Join(lines, nil)
	dest := filepath.Join(t.TempDir(), "run")
	_, err := Import(context.Background(), aiperf.Tool, files, dest, Options{})
	if err == nil {
		t.Fatal("import succeeded")
	}
	if !errors.Is(err, ingest.ErrBadInput) || !strings.Contains(err.Error(), "run1_profile_export.jsonl:57: record 56: metrics.request_latency: missing") {
		t.Errorf("error %q does not name file, line and field", err)
	}
	if _, serr := os.Stat(dest); !os.IsNotExist(serr) {
		t.Errorf("%s exists after a failed import", dest)
	}
	if ents, _ := os.ReadDir(filepath.Dir(dest)); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}

// A bad load point (line 2) of a streamed SGLang output names file, line
// and field, after the records of line 1 were written to the staged run;
// nothing is left at the destination.
func TestStreamedSGLangErrorNamesFileAndLine(t *testing.T) {
	files := importtest.Load(t, sglang.Tool, "sglang_0101_12_256_64.jsonl")
	lines := bytes.SplitAfter(files[0].Data, []byte("\n"))
	lines[1] = bytes.Replace(lines[1], []byte(`"duration": `), []byte(`"duration": -`), 1)
	files[0].Data = bytes.Join(lines, nil)
	dest := filepath.Join(t.TempDir(), "run")
	_, err := Import(context.Background(), sglang.Tool, files, dest, Options{})
	if err == nil {
		t.Fatal("import succeeded")
	}
	if !errors.Is(err, ingest.ErrBadInput) || !strings.Contains(err.Error(), "sglang_0101_12_256_64.jsonl:2: duration:") {
		t.Errorf("error %q does not name file, line and field", err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(dest)); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}

// A bad entry of a streamed LLMPerf list names file, entry and field,
// after the entries before it were written to the staged run; nothing is
// left at the destination.
func TestStreamedLLMPerfErrorNamesFileAndRecord(t *testing.T) {
	files := importtest.Load(t, llmperf.Tool, "groq_70b_individual_responses.json", "groq_70b_summary.json")
	d := files[0].Data
	at := 0
	for range 3 { // the fourth entry's count
		at += bytes.Index(d[at:], []byte(`"number_output_tokens": 150`)) + 1
	}
	i := at - 1 + len(`"number_output_tokens": `)
	files[0].Data = append(append(append([]byte(nil), d[:i]...), '-'), d[i:]...)
	dest := filepath.Join(t.TempDir(), "run")
	_, err := Import(context.Background(), llmperf.Tool, files, dest, Options{})
	if err == nil {
		t.Fatal("import succeeded")
	}
	if !errors.Is(err, ingest.ErrBadInput) || !strings.Contains(err.Error(), "groq_70b_individual_responses.json: record ") || !strings.Contains(err.Error(), ": number_output_tokens: not a token count: -150") {
		t.Errorf("error %q does not name file, record and field", err)
	}
	if ents, _ := os.ReadDir(filepath.Dir(dest)); len(ents) != 0 {
		t.Errorf("left behind: %v", ents)
	}
}

// A bad request deep inside a streamed GenAI-Perf export or inference-perf
// list is reported by file, record and field (and the line, for a value
// of the wrong type), and nothing is left at the destination.
func TestStreamedJSONErrorNamesFileRecordAndField(t *testing.T) {
	gp := syntheticGenAIPerf(t, 300, 2)
	ip := syntheticInferencePerf(t, 300)
	gl := syntheticGuideLLM(t, 300)
	// nth returns data with the n-th (0-based) occurrence of old replaced.
	nth := func(data []byte, n int, old, new string) []byte {
		at := 0
		for range n {
			at += bytes.Index(data[at:], []byte(old)) + 1
		}
		i := at + bytes.Index(data[at:], []byte(old))
		return append(append(append([]byte(nil), data[:i]...), new...), data[i+len(old):]...)
	}
	tests := []struct {
		name, tool string
		file       ingest.File
		want       string
	}{
		{"genai-perf wrong type", genaiperf.Tool, ingest.File{Name: "profile_export.json", Data: nth(gp, 200, `"timestamp": `, `"timestamp": true, "x": `)},
			`profile_export.json:%d: record 200: experiments[1].requests[50].timestamp: wrong type: JSON bool`},
		{"genai-perf negative duration", genaiperf.Tool, ingest.File{Name: "profile_export.json", Data: nth(gp, 201, `"response_timestamps": [`, `"response_timestamps": [1,`)},
			"profile_export.json: record 201: experiments[1].requests[51].response_timestamps[0]: before the request"},
		{"genai-perf duplicate requests", genaiperf.Tool, ingest.File{Name: "profile_export.json", Data: nth(gp, 1, `"requests": [`, `"requests": [], "Requests": [`)},
			`profile_export.json:%d: experiments[1].requests: duplicate key "Requests"`},
		{"guidellm wrong type", guidellm.Tool, ingest.File{Name: "benchmarks.json", Data: nth(gl, 150, `"prompt_tokens": `, `"prompt_tokens": true, "x": `)},
			`benchmarks.json:%d: benchmarks[1].requests.successful[50].prompt_tokens: wrong type: JSON bool`},
		{"guidellm negative duration", guidellm.Tool, ingest.File{Name: "benchmarks.json", Data: nth(gl, 150, `"request_end": `, `"request_end": 1, "x": `)},
			`benchmarks.json: benchmarks[1].requests.successful[`},
		{"guidellm duplicate group", guidellm.Tool, ingest.File{Name: "benchmarks.json", Data: nth(gl, 1, `"total": null}`, `"errored": [], "total": null}`)},
			`benchmarks.json:%d: benchmarks[1].requests.errored: duplicate key "errored"`},
		{"inference-perf chunk outside the request", inferenceperf.Tool, ingest.File{Name: "per_request_lifecycle_metrics.json", Data: nth(ip, 250, `"chunk_times": [`, `"chunk_times": [1,`)},
			"per_request_lifecycle_metrics.json: record 299: info.response_metrics.chunk_times[0]: outside start_time..end_time"}, // the 250th chunk_times: failed requests have none
		{"inference-perf wrong type", inferenceperf.Tool, ingest.File{Name: "per_request_lifecycle_metrics.json", Data: nth(ip, 250, `"text": `, `"text": [], "x": `)},
			`per_request_lifecycle_metrics.json:%d: record 250: info.request_metrics.text: wrong type: JSON array`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dest := filepath.Join(t.TempDir(), "run")
			_, err := Import(context.Background(), tt.tool, []ingest.File{tt.file}, dest, Options{})
			if err == nil {
				t.Fatal("import succeeded")
			}
			want := tt.want
			if strings.Contains(want, "%d") {
				// The line of the bad value: the first line of the file
				// that differs from the good one, in the pretty-printed input.
				good := map[string][]byte{genaiperf.Tool: gp, inferenceperf.Tool: ip, guidellm.Tool: gl}[tt.tool]
				i := 0
				for i < len(good) && good[i] == tt.file.Data[i] {
					i++
				}
				want = fmt.Sprintf(want, 1+bytes.Count(good[:i], []byte{'\n'}))
			}
			if !errors.Is(err, ingest.ErrBadInput) || !strings.Contains(err.Error(), want) {
				t.Errorf("error %q does not contain %q", err, want)
			}
			if ents, _ := os.ReadDir(filepath.Dir(dest)); len(ents) != 0 {
				t.Errorf("left behind: %v", ents)
			}
		})
	}
}
