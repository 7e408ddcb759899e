package verify_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/attest"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/verify"
)

var fixedNow = func() time.Time { return time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC) }

// attested returns a signed bundle with a reviewer attestation, the
// publisher's and the reviewer's public keys.
func attested(t *testing.T, name string) (string, *artifact.PublicKey, *artifact.PublicKey) {
	t.Helper()
	p, pub := artifacttest.SignedBundle(t, filepath.Join(t.TempDir(), name))
	rev := artifacttest.Reviewer(t)
	v := newVerifier(t, []*artifact.PublicKey{pub}, verify.WithClaimChecker(fakeChecker{schema.ClaimMatched}))
	res, err := v.Attest(context.Background(), p, verify.Policy{}, rev, verify.AttestOptions{Version: "test", Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	// The test run has no server-metrics scrapes, so its claims rest on
	// the signer's word (schema.RunSummary.Unplaced): RECOMPUTED is
	// withheld, and says why.
	if got := strings.Join(res.Levels, ","); got != attest.LevelIntegrity {
		t.Fatalf("levels %s", got)
	}
	if w := strings.Join(res.Withheld, "\n"); !strings.Contains(w, attest.LevelRecomputed+" withheld: ") {
		t.Fatalf("withheld %q", w)
	}
	a, err := attest.Parse(res.Statement)
	if err != nil {
		t.Fatal(err)
	}
	if a.ManifestDigest != res.Verification.ManifestDigest || a.VerifierID != rev.Public().Fingerprint() ||
		!a.TimeVerified.Equal(fixedNow()) || a.Result != attest.ResultPassed || len(a.Inputs) != 1 ||
		!strings.Contains(a.Policy.URI, "benchseal=test") {
		t.Fatalf("attestation %+v", a)
	}
	return p, pub, rev.Public()
}

func TestAttestThenRequireAttestationPasses(t *testing.T) {
	for _, name := range []string{"dir", "b.tar"} {
		t.Run(name, func(t *testing.T) {
			p, pub, rev := attested(t, name)
			v := newVerifier(t, []*artifact.PublicKey{pub})
			res, err := v.Verify(context.Background(), p, verify.Policy{RequireAttestations: []verify.Signer{{Key: rev}}})
			if err != nil {
				t.Fatalf("%v", err)
			}
			if c := res.Check(verify.CheckAttestations); c.Status != verify.StatusPassed {
				t.Fatalf("%+v", c)
			}
			if len(res.Attestations) != 1 || !res.Attestations[0].Verified || res.Attestations[0].TimeVerified != "2026-03-04T05:06:07Z" ||
				strings.Join(res.Attestations[0].Levels, ",") != "BENCHSEAL_INTEGRITY" {
				t.Fatalf("%+v", res.Attestations)
			}
			// The attestation is not a publisher signature: only one signature
			// is checked against the publisher key, and the publisher check
			// still passes with the attestation present.
			if len(res.Signatures) != 1 {
				t.Fatalf("signatures %+v", res.Signatures)
			}
		})
	}
}

func TestRequireAttestationOfAnotherReviewerFails(t *testing.T) {
	p, pub, _ := attested(t, "b")
	v := newVerifier(t, []*artifact.PublicKey{pub})
	res, err := v.Verify(context.Background(), p, verify.Policy{RequireAttestations: []verify.Signer{{Key: pub}}})
	var ce *verify.CheckError
	if !errors.As(err, &ce) || ce.Check != verify.CheckAttestations || res.Verified {
		t.Fatalf("%v", err)
	}
	if len(res.Attestations) != 1 || res.Attestations[0].Verified || !strings.HasPrefix(res.Attestations[0].Reason, verify.ReasonKey) {
		t.Fatalf("%+v", res.Attestations)
	}
}

func TestRequireAttestationWithoutAnyFails(t *testing.T) {
	p, pub := artifacttest.SignedBundle(t, filepath.Join(t.TempDir(), "b"))
	v := newVerifier(t, []*artifact.PublicKey{pub})
	_, err := v.Verify(context.Background(), p, verify.Policy{RequireAttestations: []verify.Signer{{Key: artifacttest.Reviewer(t).Public()}}})
	if err == nil || !strings.Contains(err.Error(), "no valid PASSED attestation") {
		t.Fatalf("%v", err)
	}
}

func TestAttestRefusesBundleThatDoesNotVerify(t *testing.T) {
	ctx := context.Background()
	rev := artifacttest.Reviewer(t)
	checker := verify.WithClaimChecker(fakeChecker{schema.ClaimMatched})
	// Signed by someone other than the publisher the reviewer trusts.
	p, _ := artifacttest.SignedBundle(t, filepath.Join(t.TempDir(), "b"))
	v := newVerifier(t, []*artifact.PublicKey{rev.Public()}, checker)
	if _, err := v.Attest(ctx, p, verify.Policy{}, rev, verify.AttestOptions{}); !errors.Is(err, verify.ErrNotAttestable) {
		t.Fatalf("wrong publisher: %v", err)
	}
	// A claim that does not recompute.
	p2, pub := artifacttest.SignedBundle(t, filepath.Join(t.TempDir(), "c"))
	v = newVerifier(t, []*artifact.PublicKey{pub}, verify.WithClaimChecker(fakeChecker{schema.ClaimMismatched}))
	if _, err := v.Attest(ctx, p2, verify.Policy{}, rev, verify.AttestOptions{}); !errors.Is(err, verify.ErrNotAttestable) {
		t.Fatalf("mismatched claim: %v", err)
	}
	// No recomputation at all.
	v = newVerifier(t, []*artifact.PublicKey{pub})
	if _, err := v.Attest(ctx, p2, verify.Policy{}, rev, verify.AttestOptions{}); !errors.Is(err, verify.ErrNotAttestable) {
		t.Fatalf("no checker: %v", err)
	}
	// Nothing was attached by the refusals.
	b, err := artifact.Open(p2)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if n := len(b.ReferrersOf(artifact.PredicateTypeVSA)); n != 0 {
		t.Fatalf("%d attestations attached", n)
	}
}

func TestAttachExternalChecksWhatItSigns(t *testing.T) {
	ctx := context.Background()
	p, pub, _ := attested(t, "b")
	other := artifacttest.PackRun(t, filepath.Join(t.TempDir(), "other"), artifacttest.RunOptions{Points: 3})
	b, err := artifact.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	vsaRef := b.ReferrersOf(artifact.PredicateTypeVSA)[0]
	vsa, err := b.ReadSignature(vsaRef)
	if err != nil {
		t.Fatal(err)
	}
	runSig, err := b.ReadSignature(b.ReferrersOf(artifact.PredicateTypeRun)[0])
	b.Close()
	if err != nil {
		t.Fatal(err)
	}
	// A run signature is not an attestation, and vice versa.
	if _, _, err := verify.AttachExternal(ctx, p, runSig, artifact.PredicateTypeVSA); err == nil {
		t.Fatal("run signature attached as an attestation")
	}
	if _, _, err := verify.AttachExternal(ctx, p, vsa, artifact.PredicateTypeRun); err == nil {
		t.Fatal("attestation attached as a run signature")
	}
	// An attestation of this run does not attach to another run (another
	// manifest digest), though its signature is valid.
	if _, _, err := verify.AttachExternal(ctx, other, vsa, artifact.PredicateTypeVSA); err == nil || !strings.Contains(err.Error(), verify.ReasonWrongPayload) {
		t.Fatalf("foreign attestation: %v", err)
	}
	// The publisher's signature of this run attaches to a copy of it.
	cp := filepath.Join(t.TempDir(), "copy")
	artifacttest.PackRun(t, cp, artifacttest.RunOptions{})
	if _, _, err := verify.AttachExternal(ctx, cp, runSig, artifact.PredicateTypeRun); err != nil {
		t.Fatal(err)
	}
	res, err := newVerifier(t, []*artifact.PublicKey{pub}).Verify(ctx, cp, verify.Policy{})
	if err != nil || !res.Authenticated {
		t.Fatalf("%v", err)
	}
	// Garbage is refused before anything is written.
	if _, _, err := verify.AttachExternal(ctx, cp, []byte("{}"), artifact.PredicateTypeRun); err == nil {
		t.Fatal("empty bundle attached")
	}
}

func TestAttestationMovedToAnotherRunIsRejected(t *testing.T) {
	// A hostile publisher copies a reviewer's attestation of run A into
	// run B's bundle; verify must not count it for B.
	ctx := context.Background()
	pa, _, rev := attested(t, "a")
	ba, err := artifact.Open(pa)
	if err != nil {
		t.Fatal(err)
	}
	vsa, err := ba.ReadSignature(ba.ReferrersOf(artifact.PredicateTypeVSA)[0])
	ba.Close()
	if err != nil {
		t.Fatal(err)
	}
	pb := artifacttest.PackRun(t, filepath.Join(t.TempDir(), "b"), artifacttest.RunOptions{Points: 3})
	pub := artifacttest.Publisher(t)
	if _, err := artifact.Sign(ctx, pb, pub); err != nil {
		t.Fatal(err)
	}
	if _, err := artifact.Attach(ctx, pb, vsa, artifact.PredicateTypeVSA); err != nil {
		t.Fatal(err)
	}
	res, err := newVerifier(t, []*artifact.PublicKey{pub.Public()}).Verify(ctx, pb, verify.Policy{RequireAttestations: []verify.Signer{{Key: rev}}})
	if err == nil || res.Verified || len(res.Attestations) != 1 || !strings.HasPrefix(res.Attestations[0].Reason, verify.ReasonWrongPayload) {
		t.Fatalf("%v %+v", err, res.Attestations)
	}
}

func TestRequireAttestationOfAnEmptySignerFailsWithoutPanic(t *testing.T) {
	p, pub, _ := attested(t, "b")
	res, err := newVerifier(t, []*artifact.PublicKey{pub}).Verify(context.Background(), p, verify.Policy{RequireAttestations: []verify.Signer{{}}})
	if err == nil || res.Verified {
		t.Fatal("an empty signer was satisfied")
	}
}

// TestAttestWithUnverifiedClaimsWithholdsRecomputed: a claim the records
// cannot determine is not "recomputed and matched", so the reviewer's
// attestation states integrity only.
func TestAttestWithUnverifiedClaimsWithholdsRecomputed(t *testing.T) {
	p, pub := artifacttest.SignedBundle(t, filepath.Join(t.TempDir(), "b.tar"))
	v := newVerifier(t, []*artifact.PublicKey{pub}, verify.WithClaimChecker(fakeChecker{schema.ClaimNotRecomputable}))
	res, err := v.Attest(context.Background(), p, verify.Policy{}, artifacttest.Reviewer(t), verify.AttestOptions{Version: "test", Now: fixedNow})
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(res.Levels, ","); got != attest.LevelIntegrity {
		t.Fatalf("levels %s, want %s only", got, attest.LevelIntegrity)
	}
	if len(res.Verification.Unverified) == 0 {
		t.Fatal("no unverified claims listed")
	}
	// The reviewer is told why.
	if w := strings.Join(res.Withheld, "\n"); !strings.Contains(w, attest.LevelRecomputed+" withheld: ") || !strings.Contains(w, "cannot be recomputed") {
		t.Errorf("withheld %q", res.Withheld)
	}
}

// TestAttestationDoesNotTransferToAnotherPublisher: the reviewer's attestation is kept, the publisher's
// signature is dropped and the same run is re-signed by another key. The
// reviewer vouched for the run as signed by the first publisher (the VSA's
// inputAttestations name that signature), so under the new key the
// attestation is not applicable and the required reviewer is missing.
func TestAttestationDoesNotTransferToAnotherPublisher(t *testing.T) {
	ctx := context.Background()
	for _, name := range []string{"dir", "b.tar"} {
		t.Run(name, func(t *testing.T) {
			p, pub, rev := attested(t, name)
			b, err := artifact.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			vsa, err := b.ReadSignature(b.ReferrersOf(artifact.PredicateTypeVSA)[0])
			b.Close()
			if err != nil {
				t.Fatal(err)
			}
			// The same run without the publisher's signature, signed by
			// another key, with the reviewer's attestation attached.
			steal := artifacttest.PackRun(t, filepath.Join(t.TempDir(), name), artifacttest.RunOptions{})
			k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
			if err != nil {
				t.Fatal(err)
			}
			other, err := artifact.NewSigner(k)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := artifact.Sign(ctx, steal, other); err != nil {
				t.Fatal(err)
			}
			if _, err := artifact.Attach(ctx, steal, vsa, artifact.PredicateTypeVSA); err != nil {
				t.Fatal(err)
			}
			require := verify.Policy{RequireAttestations: []verify.Signer{{Key: rev}}}
			res, err := newVerifier(t, []*artifact.PublicKey{other.Public()}).Verify(ctx, steal, require)
			var ce *verify.CheckError
			if !errors.As(err, &ce) || ce.Check != verify.CheckAttestations || res.Verified {
				t.Fatalf("stolen attestation: %v", err)
			}
			if len(res.Attestations) != 1 || res.Attestations[0].Verified || !strings.HasPrefix(res.Attestations[0].Reason, verify.ReasonNotApplicable) {
				t.Fatalf("%+v", res.Attestations)
			}
			// Without a required reviewer it is listed as not applicable too.
			res, err = newVerifier(t, []*artifact.PublicKey{other.Public()}).Verify(ctx, steal, verify.Policy{})
			if err != nil || len(res.Attestations) != 1 || !strings.HasPrefix(res.Attestations[0].Reason, verify.ReasonNotApplicable) {
				t.Fatalf("%v %+v", err, res.Attestations)
			}
			// The original publisher's signature added back makes it count
			// again when that publisher is pinned.
			b, err = artifact.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			sig, err := b.ReadSignature(b.ReferrersOf(artifact.PredicateTypeRun)[0])
			b.Close()
			if err != nil {
				t.Fatal(err)
			}
			if _, err := artifact.Attach(ctx, steal, sig, artifact.PredicateTypeRun); err != nil {
				t.Fatal(err)
			}
			res, err = newVerifier(t, []*artifact.PublicKey{pub, other.Public()}).Verify(ctx, steal, require)
			if err != nil || !res.Attestations[0].Verified {
				t.Fatalf("%v %+v", err, res.Attestations)
			}
		})
	}
}

// TestVerifyReviewerKeyGivenAsPublisherSaysWhereItBelongs: a key that
// attested but did not sign the run, given with --key, is rejected with a
// hint to pass it as a required reviewer; the library's threshold text
// does not leak.
func TestVerifyReviewerKeyGivenAsPublisherSaysWhereItBelongs(t *testing.T) {
	p, pub, rev := attested(t, "b.tar")
	_, err := newVerifier(t, []*artifact.PublicKey{pub, rev}).Verify(context.Background(), p, verify.Policy{})
	if err == nil || !strings.Contains(err.Error(), "signed a reviewer attestation on this run") ||
		!strings.Contains(err.Error(), "--require-attestation") || strings.Contains(err.Error(), "threshold") {
		t.Fatalf("%v", err)
	}
	_, err = newVerifier(t, []*artifact.PublicKey{rev}).Verify(context.Background(), artifacttest.PackRun(t, filepath.Join(t.TempDir(), "u"), artifacttest.RunOptions{}), verify.Policy{})
	if err == nil || strings.Contains(err.Error(), "--require-attestation") {
		t.Fatalf("hint without an attestation: %v", err)
	}
}

// TestTwoAttestationsOfOneReviewerCountAndNameOnce: a reviewer that
// attested twice has two verified attestations (the check counts what
// verified, not the reviewers required) and is named once in the
// signer's statement.
func TestTwoAttestationsOfOneReviewerCountAndNameOnce(t *testing.T) {
	p, pub := artifacttest.SignedBundle(t, filepath.Join(t.TempDir(), "b.tar"))
	rev := artifacttest.Reviewer(t)
	v := newVerifier(t, []*artifact.PublicKey{pub}, verify.WithClaimChecker(fakeChecker{schema.ClaimMatched}))
	for i := range 2 {
		now := func() time.Time { return fixedNow().Add(time.Duration(i) * time.Hour) }
		if _, err := v.Attest(context.Background(), p, verify.Policy{}, rev, verify.AttestOptions{Version: "test", Now: now}); err != nil {
			t.Fatal(err)
		}
	}
	res, err := newVerifier(t, []*artifact.PublicKey{pub}).Verify(context.Background(), p, verify.Policy{RequireAttestations: []verify.Signer{{Key: rev.Public()}}})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.Check(verify.CheckAttestations); c.Status != verify.StatusPassed || !strings.Contains(c.Reason, "(2 of 2 attestations meet the requirement)") {
		t.Fatalf("%+v", c)
	}
	who := "key " + rev.Public().Fingerprint()
	if n := strings.Count(res.SignerStatement, who); n != 1 {
		t.Fatalf("reviewer %s named %d times: %s", who, n, res.SignerStatement)
	}
}
