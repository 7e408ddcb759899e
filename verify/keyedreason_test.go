package verify

import (
	"encoding/hex"
	"errors"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
)

// TestKeyedSignatureReasons: a keyed signature that sigstore-go rejects is
// named from benchseal's own checks (aboutAnotherArtifact, noSignatureBy),
// not from the text of sigstore-go's error: another key is "no signature
// by the given key", the right key over another artifact digest is
// ReasonDigest with sigstore-go's error kept in the chain.
func TestKeyedSignatureReasons(t *testing.T) {
	p, pub := artifacttest.SignedBundle(t, filepath.Join(t.TempDir(), "b"))
	b, err := artifact.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	refs := b.ReferrersOf(artifact.PredicateTypeRun)
	if len(refs) != 1 {
		t.Fatalf("%d signature referrers", len(refs))
	}
	data, err := b.ReadSignature(refs[0])
	if err != nil {
		t.Fatal(err)
	}
	sb, err := parseSigstore(data)
	if err != nil {
		t.Fatal(err)
	}
	digest, _ := hex.DecodeString(strings.TrimPrefix(string(b.RunDescriptor().Digest), "sha256:"))
	v, err := NewVerifier([]*artifact.PublicKey{pub})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := v.verifyBy(sb, Signer{Key: pub}, "sha256", digest); err != nil {
		t.Fatalf("the publisher's signature: %v", err)
	}

	_, err = v.verifyBy(sb, Signer{Key: artifacttest.Reviewer(t).Public()}, "sha256", digest)
	if want := ReasonKey + ": no signature by the given key"; err == nil || err.Error() != want {
		t.Errorf("another key: got %v, want %q", err, want)
	}

	other := make([]byte, len(digest))
	_, err = v.verifyBy(sb, Signer{Key: pub}, "sha256", other)
	if err == nil || !strings.HasPrefix(err.Error(), ReasonDigest+": ") || errors.Unwrap(err) == nil {
		t.Errorf("another digest: got %v, want %q wrapping sigstore-go's error", err, ReasonDigest)
	}
	if !statementNames(sb.payload, "sha256", digest) || statementNames(sb.payload, "sha256", other) {
		t.Error("statementNames disagrees with the statement's subjects")
	}
	for key, want := range map[*artifact.PublicKey]bool{pub: false, artifacttest.Reviewer(t).Public(): true} {
		sv, err := key.Verifier()
		if err != nil {
			t.Fatal(err)
		}
		if got := noSignatureBy(sb, sv); got != want {
			t.Errorf("noSignatureBy(key %s) = %v, want %v", key.Fingerprint(), got, want)
		}
	}
}
