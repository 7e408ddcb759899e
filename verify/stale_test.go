package verify_test

import (
	"context"
	"encoding/json"
	"io"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/verify"
)

// TestStaleSignatureStillRunsEveryCheck: a signed bundle edited after
// signing and re-digested (its manifest document changed, every digest
// recomputed) still opens; verify says the signature covers another run
// manifest, and with AllChecks goes on to run every other check and list
// every problem (here the edited manifest's record count), where it used
// to stop at opening the bundle.
func TestStaleSignatureStillRunsEveryCheck(t *testing.T) {
	dir, pub := artifacttest.SignedBundle(t, filepath.Join(t.TempDir(), "b"))
	b, err := artifact.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	idx := -1
	var doc map[string]any
	for i, l := range b.Layers() {
		if l.Kind == artifact.KindManifest {
			idx = i
			rc, err := b.OpenLayer(l)
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := io.ReadAll(rc)
			rc.Close()
			if err := json.Unmarshal(raw, &doc); err != nil {
				t.Fatal(err)
			}
		}
	}
	b.Close()
	doc["title"] = "edited after signing"
	load := doc["load"].(map[string]any)
	load["repeats"] = load["repeats"].(float64) + 1
	edited, _ := json.Marshal(doc)
	artifacttest.ReplaceLayer(t, dir, idx, edited, nil)

	v, err := verify.NewVerifier([]*artifact.PublicKey{pub}, verify.WithClaimChecker(replay.ClaimChecker{}))
	if err != nil {
		t.Fatal(err)
	}
	for _, all := range []bool{false, true} {
		res, err := v.Verify(context.Background(), dir, verify.Policy{AllChecks: all})
		if res == nil {
			t.Fatalf("all=%v: no result: %v", all, err)
		}
		if err == nil || res.Verified {
			t.Fatalf("all=%v: verified", all)
		}
		var sig, failed []string
		for _, c := range res.Checks {
			if c.Name == verify.CheckSignature {
				sig = append(sig, c.Status, c.Reason)
			}
			if c.Status == verify.StatusFailed {
				failed = append(failed, c.Name)
			}
		}
		if got := strings.Join(sig, " "); !strings.Contains(got, "the bundle was changed after it was signed") || !strings.Contains(got, "no longer covers it") {
			t.Errorf("all=%v: signature check %q does not say the bundle changed after signing", all, got)
		}
		if all && len(failed) < 2 {
			t.Errorf("AllChecks: failed checks %v, want the signature and the edited manifest's", failed)
		}
		if !all && len(failed) != 1 {
			t.Errorf("failed checks %v, want the signature only", failed)
		}
	}
}
