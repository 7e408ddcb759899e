package artifact_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
)

// detachedHint returns the public-key hint of the Sigstore bundle at p.
func detachedHint(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	hint, ok := artifact.BundleKeyHint(b)
	if !ok {
		t.Fatalf("%s: no public-key hint", p)
	}
	return hint
}

// TestSecondSignerKeepsThePublishersDetachedSignature: a co-signer's
// detached Sigstore bundle goes to PATH.<key id>.sigstore.json and the
// publisher's PATH.sigstore.json is left as it was; the same key signing
// again replaces its own file; a file that is not a signature by the key
// is never replaced.
func TestSecondSignerKeepsThePublishersDetachedSignature(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"dir", "b.tar"} {
		t.Run(name, func(t *testing.T) {
			p, pub := artifacttest.SignedBundle(t, filepath.Join(t.TempDir(), name))
			base := artifact.DetachedPath(p)
			before, err := os.ReadFile(base)
			if err != nil {
				t.Fatal(err)
			}
			rev := artifacttest.Reviewer(t)
			res, err := artifact.Sign(ctx, p, rev)
			if err != nil {
				t.Fatal(err)
			}
			id := strings.TrimPrefix(rev.Public().Fingerprint(), "sha256:")[:16]
			if want := p + "." + id + ".sigstore.json"; res.DetachedPath != want || res.KeptDetached != base {
				t.Fatalf("detached %q (kept %q), want %q (kept %q)", res.DetachedPath, res.KeptDetached, want, base)
			}
			if after, _ := os.ReadFile(base); string(after) != string(before) {
				t.Fatal("the co-signer replaced the publisher's detached signature")
			}
			if detachedHint(t, base) != pub.Hint() || detachedHint(t, res.DetachedPath) != rev.Public().Hint() {
				t.Fatal("detached files hold the wrong keys")
			}
			// The publisher signs again: its own file is replaced.
			res, err = artifact.Sign(ctx, p, artifacttest.Publisher(t))
			if err != nil {
				t.Fatal(err)
			}
			if res.DetachedPath != base || res.KeptDetached != "" {
				t.Fatalf("re-sign by the publisher wrote %q (kept %q)", res.DetachedPath, res.KeptDetached)
			}
			// A file that is no signature by the key is kept.
			os.WriteFile(base, []byte("not a sigstore bundle"), 0o644)
			res, err = artifact.Sign(ctx, p, artifacttest.Publisher(t))
			if err != nil {
				t.Fatal(err)
			}
			if res.DetachedPath == base {
				t.Fatal("replaced a file that is no signature by the key")
			}
		})
	}
}
