package importer

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/importer/internal/importtest"
	"github.com/benchseal/benchseal/schema"
)

// importOverlaid imports tool's fixture with a --set overlay, which the
// re-derivation must leave alone.
func importOverlaid(t testing.TB, tool string) string {
	t.Helper()
	return importWith(t, tool, Options{Set: []string{"hardware.accelerator=H100", "hardware.accelerator_count=8"}})
}

// importWith imports the real fixture of tool (fixtures) into a temporary
// run directory with opts.
func importWith(t testing.TB, tool string, opts Options) string {
	t.Helper()
	var paths []string
	for _, n := range fixtures[tool] {
		paths = append(paths, filepath.Join(importtest.FixtureDir(tool), n))
	}
	files, err := ReadFiles(paths)
	if err != nil {
		t.Fatal(err)
	}
	dest := filepath.Join(t.TempDir(), "run")
	if _, err := Import(context.Background(), tool, files, dest, opts); err != nil {
		t.Fatal(err)
	}
	return dest
}

func checkDir(t testing.TB, dir string) error {
	t.Helper()
	rd, err := schema.OpenRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return CheckRederived(context.Background(), rd, rd.ReadAttachment)
}

// TestRederiveEveryFixture: an untouched import re-derives (imports are
// deterministic functions of their files, overlay aside).
func TestRederiveEveryFixture(t *testing.T) {
	for _, tool := range Tools() {
		t.Run(tool, func(t *testing.T) {
			if err := checkDir(t, importOverlaid(t, tool)); err != nil {
				t.Fatalf("untouched import does not re-derive: %v", err)
			}
		})
	}
}

// editRecords rewrites records.jsonl line by line, keeping every other
// byte (re-encoding would reorder orig's keys); edit returns the new line,
// or "" to delete it.
func editRecords(t *testing.T, dir string, edit func(i int, line string) string) {
	t.Helper()
	p := filepath.Join(dir, schema.RecordsFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for i, line := range strings.Split(strings.TrimSuffix(string(b), "\n"), "\n") {
		if line = edit(i, line); line != "" {
			out.WriteString(line + "\n")
		}
	}
	if err := os.WriteFile(p, []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestRederiveRejectsTampering: a hostile publisher's edits of an
// imported run: each edit leaves a run the
// schema accepts, and each must fail the re-derivation, naming what
// differs.
func TestRederiveRejectsTampering(t *testing.T) {
	cases := []struct {
		name, tool string
		edit       func(t *testing.T, dir string)
		want       string
	}{
		{"tool window halved", "llmperf", func(t *testing.T, dir string) {
			artifacttest.EditRunManifest(t, dir, func(m map[string]any) {
				w := m["provenance"].(map[string]any)["windows"].([]any)[0].(map[string]any)
				w["window_ns"] = 24453243292
			})
		}, "manifest.provenance.windows[0].window_ns"},
		{"provenance deleted", "llmperf", func(t *testing.T, dir string) {
			artifacttest.EditRunManifest(t, dir, func(m map[string]any) { delete(m, "provenance") })
		}, "manifest.provenance is absent"},
		{"orig ttft divided by 4", "aiperf", func(t *testing.T, dir string) {
			ttft := regexp.MustCompile(`"ttft":\{"value":([0-9.]+)`)
			editRecords(t, dir, func(i int, line string) string {
				return ttft.ReplaceAllStringFunc(line, func(m string) string {
					v, _ := strconv.ParseFloat(ttft.FindStringSubmatch(m)[1], 64)
					return `"ttft":{"value":` + strconv.FormatFloat(v/4, 'g', -1, 64)
				})
			})
		}, "differs from the one its source file gives"},
		{"slow requests deleted, count lowered", "llmperf", func(t *testing.T, dir string) {
			editRecords(t, dir, func(i int, line string) string {
				if i < 15 {
					return ""
				}
				return line
			})
			artifacttest.EditRunManifest(t, dir, func(m map[string]any) {
				m["load"].(map[string]any)["points"].([]any)[0].(map[string]any)["requests"] = 135
			})
		}, "manifest.load.points[0].requests"},
		{"slow requests deleted", "llmperf", func(t *testing.T, dir string) {
			editRecords(t, dir, func(i int, line string) string {
				if i < 15 {
					return ""
				}
				return line
			})
		}, "have no record"},
		{"MLPerf result inflated", "mlperf", func(t *testing.T, dir string) {
			artifacttest.EditRunManifest(t, dir, func(m map[string]any) {
				m["external"].([]any)[0].(map[string]any)["results"].(map[string]any)["result_completed_tokens_per_second"] = "88400.42"
			})
		}, "result_completed_tokens_per_second"},
		{"MLPerf status rewritten", "mlperf", func(t *testing.T, dir string) {
			artifacttest.EditRunManifest(t, dir, func(m map[string]any) {
				m["external"].([]any)[0].(map[string]any)["status"] = "VALID-ish"
			})
		}, "manifest.external[0].status"},
		{"source file removed", "llmperf", func(t *testing.T, dir string) {
			if err := os.Remove(filepath.Join(dir, schema.AttachmentsDir, "groq_70b_summary.json")); err != nil {
				t.Fatal(err)
			}
		}, "not attached"},
		{"source list emptied", "vllm", func(t *testing.T, dir string) {
			artifacttest.EditRunManifest(t, dir, func(m map[string]any) { m["source"].(map[string]any)["files"] = []any{} })
		}, "no source file is pinned"},
		{"unknown tool", "vllm", func(t *testing.T, dir string) {
			artifacttest.EditRunManifest(t, dir, func(m map[string]any) { m["source"].(map[string]any)["tool"] = "vllm2" })
		}, `unknown tool "vllm2"`},
		{"tool swapped", "vllm", func(t *testing.T, dir string) {
			artifacttest.EditRunManifest(t, dir, func(m map[string]any) { m["source"].(map[string]any)["tool"] = "sglang" })
		}, "this looks like vLLM benchmark_serving output"}, // SGLang's importer refuses vLLM's file
		{"source block removed", "vllm", func(t *testing.T, dir string) {
			artifacttest.EditRunManifest(t, dir, func(m map[string]any) { delete(m, "source") })
		}, "manifest.source.tool"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := importOverlaid(t, c.tool)
			c.edit(t, dir)
			err := checkDir(t, dir)
			if !errors.Is(err, ErrNotRederived) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("got %v, want an ErrNotRederived naming %q", err, c.want)
			}
		})
	}
}

// A run that is not imported passes untouched; relabelling one as
// imported without source files fails.
func TestRederiveRelabelledRun(t *testing.T) {
	dir := importOverlaid(t, "vllm")
	artifacttest.EditRunManifest(t, dir, func(m map[string]any) {
		delete(m, "source")
		delete(m, "provenance")
		m["evidence"] = schema.EvidenceIndependent
	})
	if err := checkDir(t, dir); err != nil {
		t.Fatalf("a run that is not imported: %v", err)
	}
	// ... but its records still carry the tool's orig values, which only
	// an imported run may hold (a relabelled import: LLMPerf's
	// placeholder sent_ns would otherwise read as measured).
	if err := schema.ValidateRunDocuments(dir, 5); err == nil || !strings.Contains(err.Error(), `field "orig"`) {
		t.Fatalf("relabelled run with orig: %v", err)
	}
	artifacttest.EditRunManifest(t, dir, func(m map[string]any) {
		m["evidence"] = schema.EvidenceImported
		m["source"] = map[string]any{"tool": "vllm", "version": "0.6.0", "files": []any{}}
	})
	if err := checkDir(t, dir); !errors.Is(err, ErrNotRederived) {
		t.Fatalf("relabelled run: got %v", err)
	}
}

// BenchmarkRederive measures the re-derivation of the largest fixture
// (AIPerf, 370 KB of records).
func BenchmarkRederive(b *testing.B) {
	dir := importOverlaid(b, "aiperf")
	rd, err := schema.OpenRunDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := CheckRederived(context.Background(), rd, rd.ReadAttachment); err != nil {
			b.Fatal(err)
		}
	}
}

// TestRederiveRejectsForgedTelemetryScrapes: an AIPerf import with its
// GPU telemetry re-derives; a converted scrape edited by the publisher,
// with its sha256 in the manifest updated to match (so the stored-file
// check passes), is not what the telemetry file gives.
func TestRederiveRejectsForgedTelemetryScrapes(t *testing.T) {
	var paths []string
	for _, n := range append(fixtures["aiperf"], "run1_gpu_telemetry_export.jsonl") {
		paths = append(paths, filepath.Join(importtest.FixtureDir("aiperf"), n))
	}
	files, err := ReadFiles(paths)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	if _, err := Import(context.Background(), "aiperf", files, dir, Options{}); err != nil {
		t.Fatal(err)
	}
	if err := checkDir(t, dir); err != nil {
		t.Fatalf("untouched import with telemetry does not re-derive: %v", err)
	}
	scrape := filepath.Join(dir, schema.AttachmentsDir, "gpu-metrics", "000010.prom")
	b, err := os.ReadFile(scrape)
	if err != nil {
		t.Fatal(err)
	}
	// Halve the first device's energy counter reading.
	forged := regexp.MustCompile(`(DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION\{gpu="0"[^}]*\}) ([0-9]+)`).ReplaceAllStringFunc(string(b), func(m string) string {
		i := strings.LastIndexByte(m, ' ')
		v, _ := strconv.ParseInt(m[i+1:], 10, 64)
		return m[:i+1] + strconv.FormatInt(v/2, 10)
	})
	if forged == string(b) {
		t.Fatal("edit not applied")
	}
	if err := os.WriteFile(scrape, []byte(forged), 0o644); err != nil {
		t.Fatal(err)
	}
	artifacttest.EditRunManifest(t, dir, func(m map[string]any) {
		for _, s := range m["gpu_metrics"].(map[string]any)["scrapes"].([]any) {
			if s := s.(map[string]any); s["file"] == "gpu-metrics/000010.prom" {
				s["sha256"] = sha256Hex([]byte(forged))
			}
		}
	})
	err = checkDir(t, dir)
	if !errors.Is(err, ErrNotRederived) || !strings.Contains(err.Error(), "manifest.gpu_metrics.scrapes[9].sha256") {
		t.Fatalf("got %v, want an ErrNotRederived naming manifest.gpu_metrics.scrapes[9].sha256", err)
	}
}

func sha256Hex(b []byte) string {
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:])
}
