package importer

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/importer/aiperf"
	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/importer/internal/importtest"
	"github.com/benchseal/benchseal/importer/llmperf"
	"github.com/benchseal/benchseal/importer/sglang"
	"github.com/benchseal/benchseal/schema"
)

var aiperfFiles = []string{"run1_profile_export.jsonl", "run1_profile_export_aiperf.json"}

// A streamed import writes the records the in-memory parser builds, in
// the same order, byte for byte.
func TestStreamedImportWritesTheParsedRecords(t *testing.T) {
	files := importtest.Load(t, aiperf.Tool, aiperfFiles...)
	res, err := aiperf.Parse(files)
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
	got, err := Import(context.Background(), aiperf.Tool, files, dest, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if got.Written != int64(len(res.Records)) || len(got.Records) != 0 {
		t.Errorf("Written = %d, Records = %d; want %d written, none kept", got.Written, len(got.Records), len(res.Records))
	}
	b, err := os.ReadFile(filepath.Join(dest, schema.RecordsFile))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(b, want) {
		t.Errorf("streamed records differ from the parsed ones")
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
