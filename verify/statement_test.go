package verify_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/verify"
)

// A run its signer labels an 8 × H200 self-run verifies as one (within
// the trust model), but the result says beside the evidence class that
// hardware, engine, server state and the measurements are the signer's
// word (before: nothing did).
func TestVerifiedSelfRunSaysWhatIsTheSignersWord(t *testing.T) {
	run := artifacttest.WriteRun(t, filepath.Join(t.TempDir(), "run"), artifacttest.RunOptions{})
	artifacttest.EditRunManifest(t, run, func(m map[string]any) {
		m["evidence"] = "self-run"
		m["hardware"] = map[string]any{"accelerator": "NVIDIA H200", "accelerator_count": 8}
	})
	out := filepath.Join(t.TempDir(), "b")
	if _, err := artifact.Pack(context.Background(), run, out, artifact.PackOptions{Created: artifacttest.Created}); err != nil {
		t.Fatal(err)
	}
	s := artifacttest.Publisher(t)
	if _, err := artifact.Sign(context.Background(), out, s); err != nil {
		t.Fatal(err)
	}
	res, err := newVerifier(t, []*artifact.PublicKey{s.Public()}).Verify(context.Background(), out, verify.Policy{})
	if err != nil {
		t.Fatalf("%v", err)
	}
	if !res.Verified || res.Evidence != "self-run" ||
		!strings.Contains(res.SignerStatement, "hardware, engine, server state and the measurements themselves are the signer's word") ||
		!strings.Contains(res.SignerStatement, "not that the run happened as described") {
		t.Errorf("verified %v, evidence %s, statement %q", res.Verified, res.Evidence, res.SignerStatement)
	}
}
