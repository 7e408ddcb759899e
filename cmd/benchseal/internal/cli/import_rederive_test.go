package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestImportedRunTamperedWindow, end to end: an imported LLMPerf run whose stored tool window was
// halved (doubling request_throughput) is rejected by validate, verify
// and compare, each naming the window, because the attached summary file
// re-derives the true one.
func TestImportedRunTamperedWindow(t *testing.T) {
	dir := t.TempDir()
	fx := filepath.Join("..", "..", "..", "..", "testdata", "fixtures", "llmperf")
	run := filepath.Join(dir, "run")
	env := map[string]string{"BENCHSEAL_PASSWORD": ""}
	if code, out, errOut := runArgs(t, env, "import", "llmperf", filepath.Join(fx, "groq_70b_individual_responses.json"), filepath.Join(fx, "groq_70b_summary.json"), "--out", run); code != ExitOK {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}
	if code, out, errOut := runArgs(t, env, "keygen", "--out", filepath.Join(dir, "k"), "--no-password"); code != ExitOK {
		t.Fatalf("keygen: exit %d\n%s%s", code, out, errOut)
	}
	mp := filepath.Join(run, "manifest.json")
	b, err := os.ReadFile(mp)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["provenance"].(map[string]any)["windows"].([]any)[0].(map[string]any)["window_ns"] = 24453243292
	b, _ = json.Marshal(m)
	if err := os.WriteFile(mp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, _ := runArgs(t, env, "validate", run)
	if code != ExitRejected || !strings.Contains(out, "manifest.provenance.windows[0].window_ns is 24453243292, the importer derives 50922560880") {
		t.Fatalf("validate: exit %d\n%s", code, out)
	}
	tar := filepath.Join(dir, "run.tar")
	if code, out, errOut := runArgs(t, env, "pack", run, "--out", tar, "--key", filepath.Join(dir, "k.key")); code != ExitOK {
		t.Fatalf("pack: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ = runArgs(t, env, "verify", tar, "--key", filepath.Join(dir, "k.pub"))
	if code != ExitRejected || !strings.Contains(out, "FAIL    import-rederive") || !strings.Contains(out, "window_ns") {
		t.Fatalf("verify: exit %d\n%s", code, out)
	}
	code, out, errOut := runArgs(t, env, "compare", tar, tar, "--key", filepath.Join(dir, "k.pub"))
	if code != ExitRejected || !strings.Contains(out+errOut, "window_ns") {
		t.Fatalf("compare: exit %d\n%s%s", code, out, errOut)
	}
}
