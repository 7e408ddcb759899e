package verify_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/attest"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/verify"
)

func reproSummary(verdicts ...string) attest.Reproduction {
	r := attest.Reproduction{
		RunManifest: attest.Descriptor{URI: "repro", Digest: map[string]string{"sha256": strings.Repeat("d", 64)}},
		Margin:      0.1, Alpha: 0.05,
	}
	for i, v := range verdicts {
		one := 1.0
		c := attest.ReproducedClaim{Point: "c1", Metric: []string{"ttft_ns.p50", "e2e_ns.p50", "counts.ok"}[i%3], Verdict: v}
		if i%3 != 2 {
			c.Ratio, c.Lo, c.Hi = &one, &one, &one
		}
		r.Claims = append(r.Claims, c)
	}
	return r
}

// reproBundle returns a signed bundle of one point c1 claiming what
// reproSummary judges, its publisher key and its run manifest digest.
func reproBundle(t *testing.T) (string, *artifact.PublicKey, string) {
	t.Helper()
	p, pub := artifacttest.SignedBundleOf(t, filepath.Join(t.TempDir(), "b.tar"), artifacttest.RunOptions{Points: 1,
		Claims: []schema.Claim{{Metric: "ttft_ns.p50", Value: 1e6}, {Metric: "summary.e2e_ns.p50.median", Value: 9e6}, {Metric: "counts.ok", Value: 5}}})
	res, err := newVerifier(t, []*artifact.PublicKey{pub}, verify.WithClaimChecker(fakeChecker{schema.ClaimMatched})).Verify(context.Background(), p, verify.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	return p, pub, res.ManifestDigest
}

func vsaReferrers(t *testing.T, p string) int {
	t.Helper()
	b, err := artifact.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	return len(b.ReferrersOf(artifact.PredicateTypeVSA))
}

// TestAttestReproductionGrantsTheLevelOnlyWhenEveryClaimReproduced: with
// every claim REPRODUCED the attestation lists BENCHSEAL_REPRODUCED and
// names the reproduction, and verify requiring the level passes; a partial
// reproduction, or one of another run, is refused with nothing signed.
func TestAttestReproductionGrantsTheLevelOnlyWhenEveryClaimReproduced(t *testing.T) {
	ctx := context.Background()
	rrr := []string{attest.VerdictReproduced, attest.VerdictReproduced, attest.VerdictReproduced}
	rev := artifacttest.Reviewer(t)
	for _, tc := range []struct {
		name     string
		verdicts []string
		other    bool
		err      error
		text     string
	}{
		{"all reproduced", []string{attest.VerdictReproduced, attest.VerdictReproduced, attest.VerdictReproduced}, false, nil, ""},
		{"one inconclusive", []string{attest.VerdictReproduced, attest.VerdictInconclusive, attest.VerdictReproduced}, false, verify.ErrNotReproduced,
			"1 of 3 claim(s) are not REPRODUCED (2 REPRODUCED, 0 NOT REPRODUCED, 1 INCONCLUSIVE)\n" +
				"  INCONCLUSIVE is not NOT REPRODUCED: the repeats did not decide 1 claim(s) either way; a reproduction with 12 repeats (this one ran 8) may decide them (benchseal reproduce --repeats 12)\n" +
				"  c1 e2e_ns.p50: INCONCLUSIVE (12 reproduction repeats needed)"},
		{"one of each", []string{attest.VerdictReproduced, attest.VerdictInconclusive, attest.VerdictNotReproduced}, false, verify.ErrNotReproduced,
			"2 of 3 claim(s) are not REPRODUCED (1 REPRODUCED, 1 NOT REPRODUCED, 1 INCONCLUSIVE)\n" +
				"  INCONCLUSIVE is not NOT REPRODUCED: the repeats did not decide 1 claim(s) either way; a reproduction with 12 repeats (this one ran 8) may decide them (benchseal reproduce --repeats 12)\n" +
				"  c1 e2e_ns.p50: INCONCLUSIVE (12 reproduction repeats needed)\n  c1 counts.ok: NOT REPRODUCED"},
		{"inconclusive beyond the limit", []string{attest.VerdictReproduced, attest.VerdictInconclusive, attest.VerdictReproduced}, false, verify.ErrNotReproduced,
			"; even 50 reproduction repeats would not decide 1: the publisher must provide more repeats\n  c1 e2e_ns.p50: INCONCLUSIVE (more than 50 reproduction repeats needed)"},
		{"one not reproduced", []string{attest.VerdictNotReproduced}, false, verify.ErrNotReproduced, "c1 ttft_ns.p50: NOT REPRODUCED"},
		{"no claims", nil, false, verify.ErrNotReproduced, "judged no claim"},
		{"another run", []string{attest.VerdictReproduced}, true, verify.ErrNotAttestable, "not of this bundle's"},
		{"interval outside the margin", rrr, false, verify.ErrNotReproduced, "interval [2.69, 3.13] is not inside the margin's [0.9091, 1.1]"},
		{"2 of 3 claims", rrr[:2], false, verify.ErrNotReproduced, "judges 2 of the bundle's 3 claimed metrics: no verdict for c1 counts.ok"},
		{"counts only", rrr, false, verify.ErrNotReproduced, "only counts and flags were tested: any server that answers reproduces them"},
		{"another model", rrr, false, verify.ErrNotReproduced, "not granted: model differs (a: m; b: other): a reproduction on another model"},
		{"an extra claim", rrr, false, verify.ErrNotReproduced, "c1 itl_ns.p50 is not a claim of the bundle"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p, pub, md := reproBundle(t)
			of := md
			if tc.other {
				of = "sha256:" + strings.Repeat("e", 64)
			}
			v := newVerifier(t, []*artifact.PublicKey{pub}, verify.WithClaimChecker(fakeChecker{schema.ClaimMatched}))
			sum := reproSummary(tc.verdicts...)
			switch tc.name {
			case "interval outside the margin":
				lo, r, hi := 2.69, 2.84, 3.13
				sum.Claims[0].Lo, sum.Claims[0].Ratio, sum.Claims[0].Hi = &lo, &r, &hi
			case "counts only":
				for i := range 2 {
					sum.Claims[i].Metric, sum.Claims[i].Ratio, sum.Claims[i].Lo, sum.Claims[i].Hi = []string{"counts.sent", "counts.errors"}[i], nil, nil, nil
				}
			case "an extra claim":
				sum.Claims = append(sum.Claims, sum.Claims[0])
				sum.Claims[3].Metric = "itl_ns.p50"
			}
			need := needed(sum)
			if tc.name == "inconclusive beyond the limit" {
				need[1] = 51
			}
			var withheld []string
			if tc.name == "another model" {
				withheld = []string{"model differs (a: m; b: other): a reproduction on another model is not one of the original's claims"}
			}
			res, err := v.Attest(ctx, p, verify.Policy{}, rev, verify.AttestOptions{Now: fixedNow,
				Reproduction: &verify.Reproduction{Of: of, Summary: sum, Withheld: withheld, RepeatsNeeded: need, Repeats: 8}})
			if tc.err != nil {
				if !errors.Is(err, tc.err) || !strings.Contains(err.Error(), tc.text) {
					t.Fatalf("error %v, want %v with %q", err, tc.err, tc.text)
				}
				if n := vsaReferrers(t, p); n != 0 {
					t.Fatalf("%d attestations attached after a refusal", n)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Contains(res.Levels, attest.LevelReproduced) {
				t.Fatalf("levels %v", res.Levels)
			}
			a, err := attest.Parse(res.Statement)
			if err != nil || a.Reproduction == nil || a.Reproduction.RunManifest.Digest["sha256"] != strings.Repeat("d", 64) || len(a.Reproduction.Claims) != 3 {
				t.Fatalf("%v %+v", err, a)
			}
			vr, err := newVerifier(t, []*artifact.PublicKey{pub}, verify.WithClaimChecker(fakeChecker{schema.ClaimMatched})).Verify(ctx, p, verify.Policy{
				RequireAttestations: []verify.Signer{{Key: rev.Public()}}, RequireLevels: []string{attest.LevelReproduced}})
			if err != nil || !vr.Verified {
				t.Fatalf("%v", err)
			}
			if ar := vr.Attestations; len(ar) != 1 || !ar[0].Verified || ar[0].Reproduction == nil || ar[0].Reproduction.Margin != 0.1 {
				t.Fatalf("%+v", ar)
			}
		})
	}
}

// TestRequireLevelRefusesAnAttestationWithoutIt: the reviewer's valid
// attestation that only verified (no reproduction) does not satisfy
// --require-level BENCHSEAL_REPRODUCED, and the reason says what it lists.
func TestRequireLevelRefusesAnAttestationWithoutIt(t *testing.T) {
	p, pub, rev := attested(t, "b.tar")
	v := newVerifier(t, []*artifact.PublicKey{pub})
	res, err := v.Verify(context.Background(), p, verify.Policy{RequireAttestations: []verify.Signer{{Key: rev}}, RequireLevels: []string{attest.LevelReproduced}})
	var ce *verify.CheckError
	if !errors.As(err, &ce) || ce.Check != verify.CheckAttestations || res.Verified ||
		!strings.Contains(err.Error(), "no valid PASSED attestation at level BENCHSEAL_REPRODUCED") {
		t.Fatalf("%v", err)
	}
	if ar := res.Attestations; len(ar) != 1 || ar[0].Verified || !strings.Contains(ar[0].Reason, "lists BENCHSEAL_INTEGRITY, not the required BENCHSEAL_REPRODUCED") {
		t.Fatalf("%+v", ar)
	}
	// Without the level required, the same attestation counts.
	if _, err := v.Verify(context.Background(), p, verify.Policy{RequireAttestations: []verify.Signer{{Key: rev}}}); err != nil {
		t.Fatal(err)
	}
}

// TestForgedReproductionLevelIsRejected: a publisher rewrites a reviewer's
// plain attestation to claim BENCHSEAL_REPRODUCED with an invented
// reproduction, keeping the reviewer's signature; verify requiring the
// level refuses it (the signature no longer covers the payload).
func TestForgedReproductionLevelIsRejected(t *testing.T) {
	ctx := context.Background()
	p, pub, rev := attested(t, "b.tar")
	b, err := artifact.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	data, err := b.ReadSignature(b.ReferrersOf(artifact.PredicateTypeVSA)[0])
	b.Close()
	if err != nil {
		t.Fatal(err)
	}
	var sb map[string]any
	if err := json.Unmarshal(data, &sb); err != nil {
		t.Fatal(err)
	}
	env := sb["dsseEnvelope"].(map[string]any)
	payload, err := base64.StdEncoding.DecodeString(env["payload"].(string))
	if err != nil {
		t.Fatal(err)
	}
	a, err := attest.Parse(payload)
	if err != nil {
		t.Fatal(err)
	}
	r := reproSummary(attest.VerdictReproduced)
	forged, err := attest.Statement(attest.Summary{RunID: a.Subject, ManifestDigest: a.ManifestDigest, VerifierID: a.VerifierID,
		TimeVerified: a.TimeVerified, ResourceURI: a.ResourceURI, Policy: a.Policy, Inputs: a.Inputs,
		Levels: append(a.Levels, attest.LevelReproduced), Reproduction: &r})
	if err != nil {
		t.Fatal(err)
	}
	env["payload"] = base64.StdEncoding.EncodeToString(forged)
	tampered, err := json.Marshal(sb)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := artifact.Attach(ctx, p, tampered, artifact.PredicateTypeVSA); err != nil {
		t.Fatal(err)
	}
	res, err := newVerifier(t, []*artifact.PublicKey{pub}).Verify(ctx, p, verify.Policy{
		RequireAttestations: []verify.Signer{{Key: rev}}, RequireLevels: []string{attest.LevelReproduced}})
	if err == nil || res.Verified || len(res.Attestations) != 2 {
		t.Fatalf("%v %+v", err, res.Attestations)
	}
	for _, ar := range res.Attestations {
		if ar.Verified {
			t.Fatalf("%+v counted", ar)
		}
	}
}

// TestRequireLevelNeedsAReviewerAndAKnownLevel: a level required of nobody,
// or a level benchseal does not write, fails the check instead of passing
// unchecked.
func TestRequireLevelNeedsAReviewerAndAKnownLevel(t *testing.T) {
	p, pub, rev := attested(t, "b.tar")
	v := newVerifier(t, []*artifact.PublicKey{pub})
	for _, tc := range []struct {
		name string
		pol  verify.Policy
		text string
	}{
		{"no reviewer", verify.Policy{RequireLevels: []string{attest.LevelReproduced}}, "a required level needs a required reviewer"},
		{"unknown level", verify.Policy{RequireAttestations: []verify.Signer{{Key: rev}}, RequireLevels: []string{"BENCHSEAL_MAGIC"}}, `unknown level "BENCHSEAL_MAGIC"`},
	} {
		if _, err := v.Verify(context.Background(), p, tc.pol); err == nil || !strings.Contains(err.Error(), tc.text) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.text)
		}
	}
}

// TestRequireLevelRefusesAPredicateJudgingOtherClaims: a reviewer's
// signed predicate at BENCHSEAL_REPRODUCED that judges only some of the
// bundle's claims (made without Attest, which refuses it) does not satisfy
// --require-level: verify compares its claims with claims.json.
func TestRequireLevelRefusesAPredicateJudgingOtherClaims(t *testing.T) {
	ctx := context.Background()
	rev := artifacttest.Reviewer(t)
	p, pub, md := reproBundle(t)
	v := newVerifier(t, []*artifact.PublicKey{pub}, verify.WithClaimChecker(fakeChecker{schema.ClaimMatched}))
	res, err := v.Verify(ctx, p, verify.Policy{})
	if err != nil {
		t.Fatal(err)
	}
	var inputs []attest.Descriptor
	for _, s := range res.Signatures {
		inputs = append(inputs, attest.Descriptor{Digest: map[string]string{"sha256": strings.TrimPrefix(s.Digest, "sha256:")}})
	}
	sum := reproSummary(attest.VerdictReproduced, attest.VerdictReproduced)
	stmt, err := attest.Statement(attest.Summary{RunID: res.RunID, ManifestDigest: md, VerifierID: "forger", TimeVerified: fixedNow(),
		ResourceURI: attest.ResourceURI(res.RunID, md), Policy: attest.Descriptor{URI: attest.PolicyURI}, Inputs: inputs,
		Levels: []string{attest.LevelIntegrity, attest.LevelRecomputed, attest.LevelReproduced}, Reproduction: &sum})
	if err != nil {
		t.Fatal(err)
	}
	sb, err := artifact.SignStatement(ctx, stmt, rev)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := artifact.Attach(ctx, p, sb, artifact.PredicateTypeVSA); err != nil {
		t.Fatal(err)
	}
	vr, err := v.Verify(ctx, p, verify.Policy{RequireAttestations: []verify.Signer{{Key: rev.Public()}}, RequireLevels: []string{attest.LevelReproduced}})
	if err == nil || vr.Verified {
		t.Fatal("a predicate judging 2 of the bundle's 3 claims satisfied the level")
	}
	if ar := vr.Attestations; len(ar) != 1 || !strings.Contains(ar[0].Reason, "judges 2 of the bundle's 3 claimed metrics: no verdict for c1 counts.ok") {
		t.Fatalf("%+v", ar)
	}
}

// needed is a reproduction's RepeatsNeeded: 12 for each INCONCLUSIVE
// claim.
func needed(r attest.Reproduction) []int {
	out := make([]int, len(r.Claims))
	for i, c := range r.Claims {
		if c.Verdict == attest.VerdictInconclusive {
			out[i] = 12
		}
	}
	return out
}

// faster undoes PackReproduction's slowing: the original's records.
func faster(_ *schema.Manifest, recs []*schema.Record) {
	for _, r := range recs {
		r.EndNS = r.SentNS + (r.EndNS-r.SentNS)*10/11
		for i := range r.ChunksNS {
			r.ChunksNS[i] = r.ChunksNS[i] * 10 / 11
		}
	}
}

// TestVerifyChecksTheCarriedReproductionsRecords: a reviewer attests
// BENCHSEAL_REPRODUCED and attaches the reproduction; verify requiring
// the level reads the carried reproduction's records and refuses the
// attestation when they are the original's re-labelled (the copy test),
// fall short of the output length its test forces, or its manifest names
// another original; another run of the test passes, marked checked.
func TestVerifyChecksTheCarriedReproductionsRecords(t *testing.T) {
	ctx := context.Background()
	rev := artifacttest.Reviewer(t)
	rrr := []string{attest.VerdictReproduced, attest.VerdictReproduced, attest.VerdictReproduced}
	for _, c := range []struct {
		name  string
		edit  func(m *schema.Manifest, recs []*schema.Record)
		words string
	}{
		{"another run", nil, ""},
		{"the original's records", faster, "is not a reproduction: 12 of 12 ok records repeat the original's timings"},
		{"short of the forced length", func(m *schema.Manifest, _ []*schema.Record) {
			m.Decoding.MinTokens, m.Decoding.MaxTokens = 8, 8
		}, `is not a reproduction: the test forces the output length (decoding.ignore_eos/min_tokens), but record "r000001" has 4 output tokens, its forced length is 8; 12 of 12 ok records`},
		{"another original", func(m *schema.Manifest, _ []*schema.Record) {
			m.Reproduces.RunManifest = "sha256:" + strings.Repeat("e", 64)
		}, "names another original: reproduces.run_manifest sha256:eeee"},
	} {
		t.Run(c.name, func(t *testing.T) {
			p, pub, md := reproBundle(t)
			repro := artifacttest.PackReproduction(t, filepath.Join(t.TempDir(), "repro.tar"), artifacttest.RunOptions{Points: 1,
				Claims: []schema.Claim{{Metric: "ttft_ns.p50", Value: 1e6}, {Metric: "summary.e2e_ns.p50.median", Value: 9e6}, {Metric: "counts.ok", Value: 5}}}, md, c.edit)
			if _, err := artifact.AttachReproduction(ctx, p, repro); err != nil {
				t.Fatal(err)
			}
			b, err := artifact.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			sum := reproSummary(rrr...)
			sum.RunManifest.Digest["sha256"] = b.Reproductions()[0].ManifestJSONDigest().Encoded()
			b.Close()
			v := newVerifier(t, []*artifact.PublicKey{pub}, verify.WithClaimChecker(fakeChecker{schema.ClaimMatched}))
			if _, err := v.Attest(ctx, p, verify.Policy{}, rev, verify.AttestOptions{Now: fixedNow, Reproduction: &verify.Reproduction{Of: md, Summary: sum}}); err != nil {
				t.Fatal(err)
			}
			res, err := v.Verify(ctx, p, verify.Policy{RequireAttestations: []verify.Signer{{Key: rev.Public()}}, RequireLevels: []string{attest.LevelReproduced}})
			if c.words == "" {
				if err != nil || len(res.Attestations) != 1 || !res.Attestations[0].ReproductionChecked {
					t.Fatalf("%v %+v", err, res.Attestations)
				}
				return
			}
			var ce *verify.CheckError
			if !errors.As(err, &ce) || ce.Check != verify.CheckAttestations || res.Verified || len(res.Attestations) != 1 ||
				!strings.Contains(res.Attestations[0].Reason, c.words) {
				t.Fatalf("error %v, attestations %+v, want %q", err, res.Attestations, c.words)
			}
		})
	}
}
