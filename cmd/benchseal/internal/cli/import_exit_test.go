package cli

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/importer"
)

// Every importer answers exit 3 when the files are not what they were
// given as, whichever way they fail: another tool's file, a summary
// without the per-request file, a record the importer cannot read.
func TestImportBadInputExits3(t *testing.T) {
	fx := func(tool, name string) string {
		return filepath.Join("..", "..", "..", "..", "testdata", "fixtures", tool, name)
	}
	dir := t.TempDir()
	write := func(name, data string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(data), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	sg, err := os.ReadFile(fx("sglang", "sglang_0101_12_256_64.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	aip, err := os.ReadFile(fx("aiperf", "aiperf010_c2_profile_export.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		args  []string
		quote string
	}{
		{"aiperf summary only", []string{"aiperf", fx("aiperf", "aiperf010_c2_profile_export_aiperf.json")}, "need profile_export.jsonl"},
		{"aiperf unknown TTFT tag", []string{"aiperf", write("profile_export.jsonl", strings.ReplaceAll(string(aip), `"time_to_first_token"`, `"ttft_ms"`))}, "time_to_first_token or ttft"},
		{"genai-perf CSV only", []string{"genai-perf", write("profile_export_genai_perf.csv", "Metric,avg,min,max\r\nRequest Latency (ms),1.00,1.00,1.00\r\n")}, "needs profile_export.json"},
		{"sglang mixed unlimited rate", []string{"sglang", write("mixed.jsonl", strings.Replace(string(sg), `"request_rate": 4.0`, `"request_rate": Infinity`, 1))}, "unlimited"},
		{"vllm given a GuideLLM file", []string{"vllm", fx("guidellm", "qwen3_4b_concurrent_benchmarks.json")}, "this looks like a GuideLLM report, which `benchseal import vllm` does not read: use `benchseal import guidellm`"},
		{"llmperf summary only", []string{"llmperf", fx("llmperf", "groq_70b_summary.json")}, "individual_responses"},
		{"inference-perf stage summary only", []string{"inference-perf", fx("inference-perf", "stage_0_lifecycle_metrics.json")}, "per_request_lifecycle_metrics.json"},
		{"guidellm given an AIPerf file", []string{"guidellm", fx("aiperf", "aiperf010_c2_profile_export_aiperf.json")}, ""},
		{"mlperf given text", []string{"mlperf", write("notes.txt", "hello\n")}, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			args := append([]string{"import"}, c.args...)
			args = append(args, "--out", filepath.Join(dir, "out-"+strings.ReplaceAll(c.name, " ", "-")))
			if code := Main(args, strings.NewReader(""), &out, &errOut); code != ExitRejected {
				t.Errorf("exit %d, want %d: %s", code, ExitRejected, errOut.String())
			}
			if !strings.Contains(errOut.String(), c.quote) {
				t.Errorf("stderr %q does not say %q", errOut.String(), c.quote)
			}
		})
	}
}

// No importer takes another tool's file: every fixture under
// testdata/fixtures (the tool is its folder) given alone to every other
// importer exits 3, so a new importer or a new fixture cannot open a pair
// that slips through. A fixture given to its own importer may still be
// refused (a summary without its per-request file), but never as another
// tool's. vLLM's benchmark_serving and SGLang's bench_serving write
// near-identical results (SGLang's began as a copy of vLLM's), so each of
// the two names the other: the message says what the file looks like and
// which import to use.
func TestImportersRejectOtherToolsFiles(t *testing.T) {
	root := filepath.Join("..", "..", "..", "..", "testdata", "fixtures")
	dir := t.TempDir()
	type fixture struct{ tool, path string }
	var fixtures []fixture
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || filepath.Dir(p) == root {
			return err // files directly under fixtures/ (the generator) belong to no tool
		}
		rel, _ := filepath.Rel(root, p)
		fixtures = append(fixtures, fixture{strings.Split(filepath.ToSlash(rel), "/")[0], p})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	// One line of an SGLang file is a single JSON object, as a vLLM result is.
	sg, err := os.ReadFile(filepath.Join(root, "sglang", "sglang_0101_12_256_64.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	line, _, _ := bytes.Cut(sg, []byte("\n"))
	one := filepath.Join(dir, "sglang_one_line.json")
	if err := os.WriteFile(one, line, 0o644); err != nil {
		t.Fatal(err)
	}
	fixtures = append(fixtures, fixture{"sglang", one})
	tools := importer.Tools()
	seen := map[string]bool{}
	for _, f := range fixtures {
		seen[f.tool] = true
	}
	for _, tool := range tools {
		if !seen[tool] {
			t.Errorf("no fixture under testdata/fixtures/%s: the importer is not checked against the other tools' files", tool)
		}
	}
	wantLooks := map[[2]string]string{
		{"vllm", "sglang"}: "this looks like SGLang bench_serving output",
		{"sglang", "vllm"}: "this looks like vLLM benchmark_serving output",
	}
	n := 0
	for _, f := range fixtures {
		for _, tool := range tools {
			n++
			var out, errOut bytes.Buffer
			args := []string{"import", tool, f.path, "--out", filepath.Join(dir, fmt.Sprintf("out%d", n))}
			if tool == "vllm" || tool == "sglang" {
				// What a user told "the files do not name the model" would
				// add: it must not make another tool's file importable.
				args = append(args, "--set", "model.name=m")
			}
			code := Main(args, strings.NewReader(""), &out, &errOut)
			if tool == f.tool {
				if strings.Contains(errOut.String(), "this looks like") {
					t.Errorf("import %s %s: its own tool's file refused as another's: %s", tool, f.path, errOut.String())
				}
				continue
			}
			if code != ExitRejected {
				t.Errorf("import %s %s (a %s file): exit %d, want %d: %s%s", tool, f.path, f.tool, code, ExitRejected, out.String(), errOut.String())
			}
			if want, ok := wantLooks[[2]string{tool, f.tool}]; ok {
				if !strings.Contains(errOut.String(), want) || !strings.Contains(errOut.String(), "use `benchseal import "+f.tool+"`") {
					t.Errorf("import %s %s: stderr %q does not say %q and which import to use", tool, f.path, errOut.String(), want)
				}
				if lines := strings.Count(strings.TrimSpace(errOut.String()), "\n"); lines > 0 {
					t.Errorf("import %s %s: want one error line, got %d: %s", tool, f.path, lines+1, errOut.String())
				}
			}
		}
	}
}

// A file with the wrong shape for vLLM's importer says what it is: empty,
// or JSON Lines (vLLM results collected one per line), not "trailing data".
func TestImportVLLMNamesEmptyAndJSONLines(t *testing.T) {
	dir := t.TempDir()
	empty := filepath.Join(dir, "empty.json")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	jsonl := filepath.Join("..", "..", "..", "..", "testdata", "fixtures", "vllm", "llmd_llama32_3b_l40s_results.jsonl")
	lines := filepath.Join(dir, "lines.jsonl")
	if err := os.WriteFile(lines, []byte("{\"a\": 1}\n{\"a\": 2}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct{ file, quote string }{
		{empty, "the file is empty"},
		{jsonl, "the file holds vLLM results one per line (JSON Lines), not one vLLM result: import takes one result per file"},
		{lines, "the file holds one JSON object per line (JSON Lines), not one vLLM result"},
		// JSON Lines of a known tool is named as that tool's.
		{filepath.Join("..", "..", "..", "..", "testdata", "fixtures", "aiperf", "run1_profile_export.jsonl"), "this looks like AIPerf output, which `benchseal import vllm` does not read: use `benchseal import aiperf`"},
	} {
		var out, errOut bytes.Buffer
		if code := Main([]string{"import", "vllm", c.file, "--out", filepath.Join(dir, "out")}, strings.NewReader(""), &out, &errOut); code != ExitRejected {
			t.Errorf("import vllm %s: exit %d, want %d", c.file, code, ExitRejected)
		}
		if !strings.Contains(errOut.String(), c.quote) {
			t.Errorf("import vllm %s: stderr %q does not say %q", c.file, errOut.String(), c.quote)
		}
	}
}
