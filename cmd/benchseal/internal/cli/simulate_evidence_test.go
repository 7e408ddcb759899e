package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// TestSimulateIsSyntheticWithNoProbe: capture --simulate --no-probe --set
// evidence=self-run writes a synthetic run (with a warning), and a run
// whose command line says --simulate but whose evidence was edited to
// self-run fails validate, naming the field.
func TestSimulateIsSyntheticWithNoProbe(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	code, out, errOut := runArgs(t, nil, "capture", "--simulate", "--no-probe", "--out", run, "--concurrency", "1", "--requests", "3",
		"--sim-time-scale", "0.01", "--progress", "never", "--set", "evidence=self-run")
	if code != ExitOK {
		t.Fatalf("capture: exit %d\n%s\n%s", code, out, errOut)
	}
	if !strings.Contains(out, "evidence synthetic") || !strings.Contains(errOut, `warning: --simulate: the run's evidence is "synthetic"`) {
		t.Errorf("stdout:\n%s\nstderr:\n%s", out, errOut)
	}
	p := filepath.Join(run, schema.ManifestFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	if m["evidence"] != schema.EvidenceSynthetic {
		t.Fatalf("evidence %v", m["evidence"])
	}
	m["evidence"] = schema.EvidenceSelfRun
	b, _ = json.MarshalIndent(m, "", "  ")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = runArgs(t, nil, "validate", run)
	if code != ExitRejected || !strings.Contains(out+errOut, "evidence") || !strings.Contains(out+errOut, "--simulate") {
		t.Fatalf("validate of a simulated run stated self-run: exit %d\n%s\n%s", code, out, errOut)
	}
}
