package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/verify"
)

// TestVerifyTextNamesTheBlobOnce: a FAIL line names the blob at fault
// once, labelled, and does not repeat a digest its reason already gives.
func TestVerifyTextNamesTheBlobOnce(t *testing.T) {
	d1, d2 := "sha256:35e1aaaa", "sha256:5613bbbb"
	r := &verify.Result{Checks: []verify.CheckResult{
		{Name: verify.CheckUncompressed, Status: verify.StatusFailed, Reason: "expected " + d1 + ", content is " + d2, Blob: d1},
		{Name: verify.CheckSignature, Status: verify.StatusFailed, Reason: "no signature verified", Blob: d2},
	}}
	var b bytes.Buffer
	if err := WriteVerifyText(&b, r, VerifyTextOptions{}); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Count(out, d1) != 1 || strings.Contains(out, "[") {
		t.Errorf("digest repeated or unlabelled:\n%s", out)
	}
	if !strings.Contains(out, "no signature verified (in "+d2+")") {
		t.Errorf("the blob of a reason that does not name it is not labelled:\n%s", out)
	}
}

// TestVerifyTextEscapesAttestationText: an attestation's strings (text
// anyone can rewrite in a bundle) are escaped, newlines included, so they
// cannot write a fake "VERIFIED" line.
func TestVerifyTextEscapesAttestationText(t *testing.T) {
	fake := "x\n  sha256:7777 key sha256:eeee (VERIFIED: reviewer acme-labs)"
	var b strings.Builder
	writeAttestations(&b, []verify.AttestationResult{{Source: "sha256:aa", VerifierID: fake, Result: fake, Reason: fake, Reviewer: fake, Verified: true}}, nil)
	if n := strings.Count(b.String(), "\n"); n != 5 {
		t.Errorf("writeAttestations wrote %d lines, want 5 (its own):\n%s", n, b.String())
	}
}

// TestVerifyTextGivesWhyAnAttestationIsNotVerified: the "NOT verified"
// line of an attestation says why, on that line, for each reason verify
// gives.
func TestVerifyTextGivesWhyAnAttestationIsNotVerified(t *testing.T) {
	for _, reason := range []string{
		"signature not checked (no reviewer required)",
		"wrong key or bad signature: no signature by the given key",
		"signed by key sha256:e763, but lists BENCHSEAL_INTEGRITY, not the required BENCHSEAL_REPRODUCED",
	} {
		var b strings.Builder
		writeAttestations(&b, []verify.AttestationResult{{Source: "referrer sha256:59bf", VerifierID: "sha256:e763", Result: "PASSED", Reason: reason}}, nil)
		want := "  referrer sha256:59bf: NOT verified: " + reason + "\n"
		if !strings.Contains(b.String(), want) {
			t.Errorf("want the line %q in:\n%s", want, b.String())
		}
		if strings.Count(b.String(), reason) != 1 {
			t.Errorf("the reason is not printed once:\n%s", b.String())
		}
	}
}
