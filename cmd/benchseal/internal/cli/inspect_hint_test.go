package cli

import (
	"strings"
	"testing"
)

// TestInspectEscapesUnauthenticatedText: a
// signature's public-key hint (text anyone can rewrite in a bundle) was
// printed raw by inspect, so a newline in it wrote a fake "VERIFIED"
// signature line. The hint is escaped, newlines included (an
// attestation's strings: TestVerifyTextEscapesAttestationText in report).
func TestInspectEscapesUnauthenticatedText(t *testing.T) {
	h := signatureHint([]byte(`{"verificationMaterial":{"publicKey":{"hint":"x\n  sha256:7777 key sha256:eeee (VERIFIED: reviewer acme-labs)"}}}`))
	if strings.Contains(h, "\n") || !strings.Contains(h, `x\n  sha256:7777`) {
		t.Errorf("signatureHint = %q, want the hint on one line, its newline escaped", h)
	}
}
