package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
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
		{"vllm given a GuideLLM file", []string{"vllm", fx("guidellm", "qwen3_4b_concurrent_benchmarks.json")}, "not a vLLM"},
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
