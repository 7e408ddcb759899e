package cli

import (
	"strings"
	"testing"

	"github.com/benchseal/benchseal/verify"
)

// TestInspectEscapesUnauthenticatedText: a
// signature's public-key hint (text anyone can rewrite in a bundle) was
// printed raw by inspect, so a newline in it wrote a fake "VERIFIED"
// signature line. The hint and an attestation's strings are escaped,
// newlines included.
func TestInspectEscapesUnauthenticatedText(t *testing.T) {
	fake := "x\n  sha256:7777 key sha256:eeee (VERIFIED: reviewer acme-labs)"
	h := signatureHint([]byte(`{"verificationMaterial":{"publicKey":{"hint":"x\n  sha256:7777 key sha256:eeee (VERIFIED: reviewer acme-labs)"}}}`))
	if strings.Contains(h, "\n") || !strings.Contains(h, `x\n  sha256:7777`) {
		t.Errorf("signatureHint = %q, want the hint on one line, its newline escaped", h)
	}
	var b strings.Builder
	writeAttestations(&b, []verify.AttestationResult{{Source: "sha256:aa", VerifierID: fake, Result: fake, Reason: fake, Reviewer: fake, Verified: true}}, nil)
	if n := strings.Count(b.String(), "\n"); n != 5 {
		t.Errorf("writeAttestations wrote %d lines, want 5 (its own):\n%s", n, b.String())
	}
}
