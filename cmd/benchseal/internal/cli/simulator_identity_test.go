package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/schema"
)

// A capture against the simulator relabelled a self-run on 8 × H200
// (evidence, hardware, engine and a command line without --simulate
// edited) is rejected by validate as long as any of the simulator's own
// identification is left in the run, and each rejection names the
// field: the /version answer ("simulator": true), /v1/models (owned_by
// benchseal-simulator), capture's note of the header, and the
// benchseal-sim labels of the stored /metrics scrapes. Before, the
// edited run validated, and verified as 8 × H200.
func TestSimulatorRelabelledSelfRunIsRejected(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	code, out, errOut := runArgs(t, nil, "capture", "--simulate", "--sim-time-scale", "0.01", "--out", run, "--concurrency", "1", "--requests", "4", "--progress", "never")
	if code != ExitOK {
		t.Fatalf("capture: exit %d\n%s\n%s", code, out, errOut)
	}
	edit := func(f func(m map[string]any)) { artifacttest.EditRunManifest(t, run, f) }
	edit(func(m map[string]any) {
		m["evidence"] = schema.EvidenceSelfRun
		m["hardware"] = map[string]any{"accelerator": "NVIDIA H200", "accelerator_count": 8, "driver": "NVIDIA 570.133.20", "runtime": "CUDA 12.8"}
		var unknown []any
		for _, u := range m["unknown"].([]any) {
			if !strings.HasPrefix(u.(string), "hardware.") {
				unknown = append(unknown, u)
			}
		}
		m["unknown"] = unknown
		c := m["client"].(map[string]any)
		var args []any
		for _, a := range c["command_line"].([]any) {
			if !strings.HasPrefix(a.(string), "--simulate") && !strings.HasPrefix(a.(string), "--sim-") {
				args = append(args, a)
			}
		}
		c["command_line"] = args
		e := m["engine"].(map[string]any)
		e["name"], e["version"] = "vllm", "0.9.2"
	})
	// Each piece in turn: it alone rejects the run, then it is removed.
	for _, step := range []struct {
		want   string
		remove func(m map[string]any)
	}{
		{`engine.server["/version"] has "simulator": true`, func(m map[string]any) {
			delete(m["engine"].(map[string]any)["server"].(map[string]any), "/version")
		}},
		{`engine.server["/v1/models"] has a model owned_by "benchseal-simulator"`, func(m map[string]any) {
			delete(m["engine"].(map[string]any)["server"].(map[string]any), "/v1/models")
		}},
		{`notes.simulator`, func(m map[string]any) { delete(m["notes"].(map[string]any), "simulator") }},
		{`has series labelled "benchseal-sim"`, func(m map[string]any) {
			delete(m, "server_metrics")
			delete(m, "server_state")
		}},
	} {
		code, out, errOut = runArgs(t, nil, "validate", run)
		if code != ExitRejected || !strings.Contains(out+errOut, step.want) {
			t.Fatalf("validate, want a rejection naming %s: exit %d\n%s\n%s", step.want, code, out, errOut)
		}
		edit(step.remove)
	}
	// With every piece removed, the edit is an otherwise valid run: each
	// rejection above was the simulator's identification alone.
	if code, out, errOut = runArgs(t, nil, "validate", run); code != ExitOK {
		t.Fatalf("validate without the simulator's identification: exit %d\n%s\n%s", code, out, errOut)
	}
}
