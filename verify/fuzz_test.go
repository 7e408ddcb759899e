package verify_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/verify"
)

// FuzzVerifyTar verifies arbitrary tar bytes against the publisher key,
// seeded from a real signed bundle. Nothing may panic, and nothing but the
// seed may verify.
func FuzzVerifyTar(f *testing.F) {
	dir := f.TempDir()
	p, pub := artifacttest.SignedBundle(f, filepath.Join(dir, "b.tar"))
	seed, err := os.ReadFile(p)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(seed)
	v, err := verify.NewVerifier([]*artifact.PublicKey{pub})
	if err != nil {
		f.Fatal(err)
	}
	// One file per worker process, rewritten for each input.
	fp := filepath.Join(dir, "f.tar")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(fp, data, 0o644); err != nil {
			t.Fatal(err)
		}
		res, err := v.Verify(context.Background(), fp, verify.Policy{})
		if err == nil && (res == nil || !res.Verified) {
			t.Fatal("nil error without a verified result")
		}
	})
}

// FuzzVerifySignature checks arbitrary bytes as a detached Sigstore bundle
// over a real unsigned bundle: none may verify except a real signature.
func FuzzVerifySignature(f *testing.F) {
	dir := f.TempDir()
	p := artifacttest.PackRun(f, filepath.Join(dir, "b"), artifacttest.RunOptions{})
	b, err := artifact.Open(p)
	if err != nil {
		f.Fatal(err)
	}
	stmt, _ := artifact.MarshalStatement(b.Statement())
	b.Close()
	s := artifacttest.Publisher(f)
	sb, err := artifact.SignStatement(context.Background(), stmt, s)
	if err != nil {
		f.Fatal(err)
	}
	f.Add(sb)
	f.Add([]byte(`{"mediaType":"application/vnd.dev.sigstore.bundle.v0.3+json"}`))
	v, err := verify.NewVerifier([]*artifact.PublicKey{s.Public()})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		res, err := v.Verify(context.Background(), p, verify.Policy{Detached: [][]byte{data}})
		if err == nil && !res.Authenticated {
			t.Fatal("verified without authentication")
		}
	})
}
