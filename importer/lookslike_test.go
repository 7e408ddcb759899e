package importer

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/importer/internal/importtest"
	"github.com/benchseal/benchseal/synth"
)

// toolFiles returns every real file of each tool: the files under
// testdata/fixtures/TOOL, and a small benchseal run's own files.
func toolFiles(t *testing.T) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	for _, tool := range Tools() {
		filepath.WalkDir(importtest.FixtureDir(tool), func(p string, d os.DirEntry, err error) error {
			if err == nil && !d.IsDir() && !strings.HasSuffix(p, ".md") {
				out[tool] = append(out[tool], p)
			}
			return nil
		})
	}
	dir := filepath.Join(t.TempDir(), "run")
	opts := synth.DefaultOptions()
	opts.Requests = 60
	if _, _, err := synth.WriteRun(context.Background(), dir, opts, false); err != nil {
		t.Fatal(err)
	}
	// workload.jsonl is left out: its items (item, prompt, max_tokens) are
	// what any tool's prompt file may hold, not a result.
	for _, n := range []string{"manifest.json", "records.jsonl"} {
		out[Benchseal] = append(out[Benchseal], filepath.Join(dir, n))
	}
	return out
}

// TestEveryToolHasAFormatRule fails when a new importer has no rule in
// formatRules, or no fixture file to check it against.
func TestEveryToolHasAFormatRule(t *testing.T) {
	files := toolFiles(t)
	for _, tool := range append(Tools(), Benchseal) {
		if !slices.ContainsFunc(formatRules, func(r formatRule) bool { return r.tool == tool && r.Match != nil && r.Title != "" }) {
			t.Errorf("no format rule for %s (its Registration.Format)", tool)
		}
		if len(files[tool]) == 0 {
			t.Errorf("no real file of %s to check the rules against", tool)
		}
	}
}

// TestOwnFilesAreNeverTakenForAnotherTool checks every real file of a
// tool: detection never sends it elsewhere (a false match would refuse a
// good import).
func TestOwnFilesAreNeverTakenForAnotherTool(t *testing.T) {
	for tool, paths := range toolFiles(t) {
		for _, p := range paths {
			b, err := os.ReadFile(p)
			if err != nil {
				t.Fatal(err)
			}
			if got, _ := LooksLike(tool, b); got != tool && got != "" {
				t.Errorf("%s file %s looks like %s", tool, filepath.Base(p), got)
			}
		}
	}
}

// TestWrongToolGetsOneErrorNamingTheTool gives every importer every real
// file of every other tool: one error, naming the file, what it looks
// like and the import to use, the same on every run.
func TestWrongToolGetsOneErrorNamingTheTool(t *testing.T) {
	files := toolFiles(t)
	for _, tool := range Tools() {
		im, _ := Lookup(tool)
		for other, paths := range files {
			if other == tool {
				continue
			}
			for _, p := range paths {
				in, err := ReadFiles([]string{p})
				if err != nil {
					t.Fatal(err)
				}
				_, err = im.Parse(in)
				want := "use `benchseal import " + other + "`"
				if other == Benchseal {
					want = "needs no import"
				}
				if err == nil || !errors.Is(err, ingest.ErrBadInput) || !strings.Contains(err.Error(), "this looks like") ||
					!strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), filepath.ToSlash(p)) {
					t.Errorf("import %s of %s file %s: %v, want one error with %q", tool, other, filepath.Base(p), err, want)
					continue
				}
				if strings.Count(err.Error(), "this looks like") != 1 {
					t.Errorf("import %s of %s: more than one error: %v", tool, filepath.Base(p), err)
				}
				if _, again := im.Parse(in); again == nil || again.Error() != err.Error() {
					t.Errorf("import %s of %s: a second run says %v", tool, filepath.Base(p), again)
				}
			}
		}
	}
}

// TestSniffReadsFieldsToDepthTwo pins the field names the rules see.
func TestSniffReadsFieldsToDepthTwo(t *testing.T) {
	s := ingest.NewSniffed([]byte(`[{"a": {"b": {"c": 1}, "d": "x"}, "schema": "benchseal/manifest/v1"}, {"late": 1}]`))
	for _, k := range []string{"a", "a.b", "a.d", "schema", "late"} {
		if _, ok := s.Fields[k]; !ok {
			t.Errorf("field %s not seen: %v", k, s.Fields)
		}
	}
	if _, ok := s.Fields["a.b.c"]; ok || s.Fields["schema"] != "benchseal/manifest/v1" || s.Fields["a.d"] != "x" {
		t.Errorf("fields %v", s.Fields)
	}
	// Only the first value of JSON Lines counts.
	if s := ingest.NewSniffed([]byte("{\"x\": 1}\n{\"y\": 2}\n")); s.Has("y") {
		t.Errorf("second line read: %v", s.Fields)
	}
}

// FuzzLooksLike checks that detection never panics and always names a
// known tool or nothing, whatever the bytes.
func FuzzLooksLike(f *testing.F) {
	for _, n := range []string{"vllm/lambdalabs_llama3_8b_h100_prompt10.json", "sglang/sglang_0101_12_256_64.jsonl", "guidellm/qwen3_4b_concurrent_benchmarks.json", "llmperf/groq_70b_individual_responses.json"} {
		b, err := os.ReadFile(filepath.Join(importtest.Root(), "testdata", "fixtures", n))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b[:min(len(b), 4096)])
	}
	f.Add([]byte(`[[{"a":{"b":[{}]}}]]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, title := LooksLike("vllm", data)
		if got != "" && (title == "" || !slices.ContainsFunc(formatRules, func(r formatRule) bool { return r.tool == got })) {
			t.Errorf("LooksLike = %q %q", got, title)
		}
	})
}

// TestFileLikeSeveralToolsNamesEachOfThem: a file matching two other
// tools' rules names both, so the hint does not depend on the order the
// registry lists the importers in.
func TestFileLikeSeveralToolsNamesEachOfThem(t *testing.T) {
	in := []ingest.File{{Name: "x.json", Data: []byte(`{"load_summary":{},"ttft_s":1}`)}}
	var matched []string
	for _, r := range matchingRules(in[0].Data) {
		matched = append(matched, r.tool)
	}
	if len(matched) < 2 {
		t.Fatalf("the input matches %v: the test needs two rules", matched)
	}
	err := checkTool("aiperf", in)
	if err == nil {
		t.Fatal("accepted")
	}
	for _, tool := range matched {
		if !strings.Contains(err.Error(), "use `benchseal import "+tool+"`") {
			t.Errorf("%v does not name %s", err, tool)
		}
	}
}
