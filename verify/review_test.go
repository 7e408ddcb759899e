package verify_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/verify"
)

// rewriteManifestLayer replaces the manifest.json layer of the directory
// bundle p with edit's result, re-hashing the run manifest and index.json,
// so the bundle stays well-formed (a publisher could sign it).
func rewriteManifestLayer(t *testing.T, p string, edit func(map[string]any)) {
	t.Helper()
	b, err := artifact.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	rd := b.RunDescriptor()
	old := b.Layers()[0].Descriptor.Digest
	b.Close()
	blob := func(d string) string { return filepath.Join(p, "blobs", "sha256", strings.TrimPrefix(d, "sha256:")) }
	readJSON := func(path string) map[string]any {
		raw, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(raw, &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	write := func(v any) (string, int) {
		raw, err := json.Marshal(v)
		if err != nil {
			t.Fatal(err)
		}
		d := string(artifact.DigestBytes(raw))
		if err := os.WriteFile(blob(d), raw, 0o644); err != nil {
			t.Fatal(err)
		}
		return d, len(raw)
	}
	man := readJSON(blob(string(old)))
	edit(man)
	os.Remove(blob(string(old)))
	ld, ln := write(man)

	run := readJSON(blob(string(rd.Digest)))
	l0 := run["layers"].([]any)[0].(map[string]any)
	l0["digest"], l0["size"] = ld, ln
	os.Remove(blob(string(rd.Digest)))
	rdg, rn := write(run)

	idx := readJSON(filepath.Join(p, "index.json"))
	e := idx["manifests"].([]any)[0].(map[string]any)
	e["digest"], e["size"] = rdg, rn
	raw, _ := json.Marshal(idx)
	if err := os.WriteFile(filepath.Join(p, "index.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A signed bundle whose workload layer is not the workload the manifest
// declares (workload.sha256, workload.items) is rejected, as validate
// rejects such a run directory.
func TestVerifyWorkloadHashMismatchFails(t *testing.T) {
	cases := map[string]func(m map[string]any){
		"sha256": func(m map[string]any) {
			m["workload"].(map[string]any)["sha256"] = strings.Repeat("ab", 32)
		},
		"items": func(m map[string]any) {
			m["workload"].(map[string]any)["items"] = 7
		},
	}
	for name, edit := range cases {
		t.Run(name, func(t *testing.T) {
			p := artifacttest.PackRun(t, filepath.Join(t.TempDir(), "b"), artifacttest.RunOptions{})
			rewriteManifestLayer(t, p, edit)
			s := artifacttest.Publisher(t)
			if _, err := artifact.Sign(context.Background(), p, s); err != nil {
				t.Fatal(err)
			}
			res, err := newVerifier(t, []*artifact.PublicKey{s.Public()}).Verify(context.Background(), p, verify.Policy{})
			if err == nil || res.Verified {
				t.Fatalf("a workload that does not match the manifest was accepted: %+v", res.Checks)
			}
			c := res.Check(verify.CheckSchema)
			if c.Status != verify.StatusFailed || !strings.Contains(c.Reason, "workload."+name) {
				t.Fatalf("schema check: %s %s", c.Status, c.Reason)
			}
		})
	}
}

// A signed bundle whose records are fewer than its manifest declares (work
// removed after the run) is rejected by the schema check, as validate
// rejects such a run directory; marked incomplete, it verifies with a
// warning and the incomplete field set.
func TestVerifyMissingWorkFails(t *testing.T) {
	declare := func(m map[string]any) {
		for _, p := range m["load"].(map[string]any)["points"].([]any) {
			p.(map[string]any)["requests"] = 6 // 5 recorded per repeat
		}
	}
	s := artifacttest.Publisher(t)
	bundle := func(edit func(map[string]any)) string {
		p := artifacttest.PackRun(t, filepath.Join(t.TempDir(), "b"), artifacttest.RunOptions{})
		rewriteManifestLayer(t, p, edit)
		if _, err := artifact.Sign(context.Background(), p, s); err != nil {
			t.Fatal(err)
		}
		return p
	}
	res, err := newVerifier(t, []*artifact.PublicKey{s.Public()}).Verify(context.Background(), bundle(declare), verify.Policy{})
	if err == nil || res.Verified {
		t.Fatalf("a bundle missing work was accepted: %+v", res.Checks)
	}
	if c := res.Check(verify.CheckSchema); c.Status != verify.StatusFailed || !strings.Contains(strings.Join(c.Problems, "\n")+c.Reason, "request(s) are missing") {
		t.Fatalf("schema check: %s %s %q", c.Status, c.Reason, c.Problems)
	}

	res, err = newVerifier(t, []*artifact.PublicKey{s.Public()}).Verify(context.Background(), bundle(func(m map[string]any) {
		declare(m)
		m["incomplete"], m["incomplete_reason"] = true, "interrupted"
	}), verify.Policy{})
	if err != nil || !res.Incomplete || res.Records.Missing != 4 || !strings.Contains(strings.Join(res.Warnings, "\n"), "INCOMPLETE") {
		t.Fatalf("incomplete bundle: err=%v incomplete=%v records=%+v warnings=%q", err, res.Incomplete, res.Records, res.Warnings)
	}
}
