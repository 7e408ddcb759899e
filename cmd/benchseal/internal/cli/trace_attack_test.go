package cli

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
)

// dropTraceRequests removes workload items drop (0-based) of a trace
// replay and their records, as a key holder would: later items and record
// ids renumbered, and workload.items, workload.trace.requests,
// points[0].requests and workload.sha256 rewritten to match.
func dropTraceRequests(t *testing.T, run string, drop []int) {
	t.Helper()
	wl, _ := os.ReadFile(filepath.Join(run, "workload.jsonl"))
	items := strings.SplitAfter(strings.TrimSuffix(string(wl), "\n"), "\n")
	newIndex := map[int]int{}
	var kept bytes.Buffer
	for i, it := range items {
		if !slices.Contains(drop, i) {
			newIndex[i] = len(newIndex)
			kept.WriteString(strings.TrimSuffix(it, "\n") + "\n")
		}
	}
	rb, _ := os.ReadFile(filepath.Join(run, "records.jsonl"))
	var recs bytes.Buffer
	for _, line := range strings.Split(strings.TrimSpace(string(rb)), "\n") {
		var r map[string]any
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		k, ok := newIndex[int(r["item"].(float64))]
		if !ok {
			continue
		}
		r["item"], r["id"] = k, fmt.Sprintf("trace.r0.m%d", k)
		b, _ := json.Marshal(r)
		recs.Write(append(b, '\n'))
	}
	os.WriteFile(filepath.Join(run, "workload.jsonl"), kept.Bytes(), 0o644)
	os.WriteFile(filepath.Join(run, "records.jsonl"), recs.Bytes(), 0o644)
	sum := sha256.Sum256(kept.Bytes())
	artifacttest.EditJSON(t, filepath.Join(run, "manifest.json"), func(m map[string]any) {
		w := m["workload"].(map[string]any)
		w["items"], w["sha256"] = len(newIndex), hex.EncodeToString(sum[:])
		w["trace"].(map[string]any)["requests"] = len(newIndex)
		m["load"].(map[string]any)["points"].([]any)[0].(map[string]any)["requests"] = len(newIndex)
	})
}

// slowest returns the items of the n records of run with the longest
// end-to-end latency.
func slowest(t *testing.T, run string, n int) []int {
	t.Helper()
	rb, _ := os.ReadFile(filepath.Join(run, "records.jsonl"))
	type rec struct {
		Item          int
		SentNS, EndNS int64
	}
	var rs []rec
	for _, line := range strings.Split(strings.TrimSpace(string(rb)), "\n") {
		var r struct {
			Item   int   `json:"item"`
			SentNS int64 `json:"sent_ns"`
			EndNS  int64 `json:"end_ns"`
		}
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		rs = append(rs, rec{r.Item, r.SentNS, r.EndNS})
	}
	slices.SortFunc(rs, func(a, b rec) int { return int(min(max((b.EndNS-b.SentNS)-(a.EndNS-a.SentNS), -1), 1)) })
	var out []int
	for _, r := range rs[:n] {
		out = append(out, r.Item)
	}
	return out
}

// A trace replay whose slowest requests were deleted (records and
// workload items, the workload's hash recomputed) is invalid and REJECTED:
// validate and verify rebuild the items from the trace file the run keeps
// and name the first one missing (pack, which validates, refuses it). A
// bundle whose kept trace was edited is REJECTED by verify, and verify
// prints the trace's sha256 for comparison with the published file. Before the run kept its trace, both
// edits were VERIFIED (the two slowest gone, e2e max 32.3 → 29.8 ms).
func TestTraceReplayWithRequestsRemovedIsRejected(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"BENCHSEAL_PASSWORD": ""}
	run := filepath.Join(dir, "run")
	for _, args := range [][]string{
		{"capture", "--simulate", "--progress", "never", "--sim-time-scale", "0.01", "--trace", "../../../../testdata/traces/mooncake_200.jsonl", "--trace-speedup", "20", "--seed", "3", "--out", run},
	} {
		if code, out, errOut := runArgs(t, env, args...); code != ExitOK {
			t.Fatalf("%s: exit %d\n%s%s", args[0], code, out, errOut)
		}
	}
	t.Run("kept trace edited in the bundle", func(t *testing.T) {
		// The two slowest requests' lines deleted from the trace the
		// bundle keeps: it no longer hashes to workload.trace.sha256.
		p := filepath.Join(t.TempDir(), "b")
		if code, out, errOut := runArgs(t, env, "pack", run, "--out", p); code != ExitOK {
			t.Fatalf("pack: exit %d\n%s%s", code, out, errOut)
		}
		b, err := artifact.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		i := slices.IndexFunc(b.Layers(), func(l artifact.Layer) bool { return l.Title == "attachments/trace" })
		b.Close()
		data, _ := os.ReadFile(filepath.Join(run, "attachments", "trace"))
		lines := strings.SplitAfter(string(data), "\n")
		for _, k := range slowest(t, run, 2) {
			lines[k] = ""
		}
		artifacttest.ReplaceLayer(t, p, i, []byte(strings.Join(lines, "")), nil)
		code, out, errOut := runArgs(t, env, "verify", p, "--allow-unsigned")
		if want := `field "workload.trace.sha256": the manifest says 31f169d2661a6a8a66e873a99a7173070a4472018ef4feab8d2fa89089f2c570, the kept trace file hashes to`; code != ExitRejected || !strings.Contains(out, want) {
			t.Fatalf("verify: exit %d, want %d and %q:\n%s%s", code, ExitRejected, want, out, errOut)
		}
		if !strings.Contains(out, "\ntrace     mooncake mooncake_200.jsonl sha256 31f169d2661a6a8a66e873a99a7173070a4472018ef4feab8d2fa89089f2c570, kept in the run") {
			t.Errorf("verify does not print the trace's sha256:\n%s", out)
		}
	})
	for _, tc := range []struct {
		name string
		drop func() []int
	}{
		{"two slowest", func() []int { return slowest(t, run, 2) }},
		{"one", func() []int { return []int{120} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := filepath.Join(t.TempDir(), "o")
			os.CopyFS(o, os.DirFS(run))
			drop := tc.drop()
			dropTraceRequests(t, o, drop)
			want := fmt.Sprintf(`field "item %d": `, slices.Min(drop))
			code, out, errOut := runArgs(t, env, "validate", o)
			if code != ExitRejected || !strings.Contains(out+errOut, want) || !strings.Contains(out+errOut, "attachments/trace") && !strings.Contains(out+errOut, "trace request at line") {
				t.Fatalf("validate: exit %d, want %d and %q:\n%s%s", code, ExitRejected, want, out, errOut)
			}
			// pack validates too, so such a run cannot be packed.
			if code, out, errOut := runArgs(t, env, "pack", o, "--out", o+".tar"); code != ExitRejected || !strings.Contains(out+errOut, want) {
				t.Fatalf("pack: exit %d, want %d and %q:\n%s%s", code, ExitRejected, want, out, errOut)
			}
		})
	}
}
