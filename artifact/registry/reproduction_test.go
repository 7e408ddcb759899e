package registry_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/artifact/registry"
	"github.com/benchseal/benchseal/artifact/registry/registrytest"
	"github.com/benchseal/benchseal/attest"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/verify"
)

type matchedChecker struct{}

func (matchedChecker) CheckClaims(ctx context.Context, run schema.Run) ([]schema.ClaimCheck, error) {
	var out []schema.ClaimCheck
	for _, p := range run.Claims().Points {
		for _, m := range p.Metrics {
			out = append(out, schema.ClaimCheck{Point: p.Point, Metric: m.Metric, Claimed: m.Value, Outcome: schema.ClaimMatched})
		}
	}
	return out, nil
}

// TestReproductionAttestationTravelsWithPushPull: a reviewer's
// BENCHSEAL_REPRODUCED attestation is a referrer of the run manifest like
// any attestation, so push and pull carry it and the pulled copy satisfies
// verify's required level; a copy pushed without it does not.
func TestReproductionAttestationTravelsWithPushPull(t *testing.T) {
	for _, api := range []bool{false, true} {
		ctx := context.Background()
		_, host := registrytest.NewFake(t, api)
		opts := registry.Options{PlainHTTP: true, ReferrersTagSchema: !api}
		tmp := t.TempDir()
		orig, pub := artifacttest.SignedBundleOf(t, filepath.Join(tmp, "orig"), artifacttest.RunOptions{Points: 1, Claims: []schema.Claim{{Metric: "ttft_ns.p50", Value: 1e6}}})
		v, err := verify.NewVerifier([]*artifact.PublicKey{pub}, verify.WithClaimChecker(matchedChecker{}))
		if err != nil {
			t.Fatal(err)
		}
		// Referrers hang on the manifest digest, not on a tag: the copy
		// without the attestation goes to another registry.
		_, host2 := registrytest.NewFake(t, api)
		plain := host2 + "/" + repoName + ":plain"
		if _, err := registry.Push(ctx, orig, plain, opts); err != nil {
			t.Fatal(err)
		}
		res, err := v.Verify(ctx, orig, verify.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		one := 1.0
		rev := artifacttest.Reviewer(t)
		if _, err := v.Attest(ctx, orig, verify.Policy{}, rev, verify.AttestOptions{Reproduction: &verify.Reproduction{Of: res.ManifestDigest, Summary: attest.Reproduction{
			RunManifest: attest.Descriptor{Digest: map[string]string{"sha256": strings.Repeat("d", 64)}}, Margin: 0.1, Alpha: 0.05,
			Claims: []attest.ReproducedClaim{{Point: "c1", Metric: "ttft_ns.p50", Verdict: attest.VerdictReproduced, Ratio: &one, Lo: &one, Hi: &one}},
		}}}); err != nil {
			t.Fatal(err)
		}
		ref := host + "/" + repoName + ":v1"
		if _, err := registry.Push(ctx, orig, ref, opts); err != nil {
			t.Fatal(err)
		}
		pol := verify.Policy{RequireAttestations: []verify.Signer{{Key: rev.Public()}}, RequireLevels: []string{attest.LevelReproduced}}
		pulled := filepath.Join(tmp, "pulled")
		if _, err := registry.Pull(ctx, ref, pulled, opts); err != nil {
			t.Fatal(err)
		}
		if r, err := v.Verify(ctx, pulled, pol); err != nil || len(r.Attestations) != 1 || r.Attestations[0].Reproduction == nil {
			t.Fatalf("api=%v: pulled copy: %v", api, err)
		}
		bare := filepath.Join(tmp, "bare")
		if _, err := registry.Pull(ctx, plain, bare, opts); err != nil {
			t.Fatal(err)
		}
		if _, err := v.Verify(ctx, bare, pol); err == nil {
			t.Fatalf("api=%v: a copy without the attestation satisfied the level", api)
		}
	}
}

// TestReproductionReferrerTravelsWithPushPull: a reproduction attached to
// the original as a referrer is pushed and pulled with it, beside the
// reviewer's attestation naming it; the pulled copy holds both and
// verifies at the level, its reproduction extracts to a bundle of its own,
// and pulling the reproduction's run manifest digest gives that bundle too.
func TestReproductionReferrerTravelsWithPushPull(t *testing.T) {
	for _, api := range []bool{false, true} {
		ctx := context.Background()
		_, host := registrytest.NewFake(t, api)
		opts := registry.Options{PlainHTTP: true, ReferrersTagSchema: !api}
		tmp := t.TempDir()
		orig, pub := artifacttest.SignedBundleOf(t, filepath.Join(tmp, "orig.tar"), artifacttest.RunOptions{Points: 1, Claims: []schema.Claim{{Metric: "ttft_ns.p50", Value: 1e6}}})
		b, err := artifact.Open(orig)
		if err != nil {
			t.Fatal(err)
		}
		md := string(b.RunDescriptor().Digest)
		b.Close()
		// Another run, naming the original: verify requiring the level
		// checks the carried reproduction's records.
		repro := artifacttest.PackReproduction(t, filepath.Join(tmp, "repro.tar"), artifacttest.RunOptions{Points: 1}, md, nil)
		if _, err := artifact.AttachReproduction(ctx, orig, repro); err != nil {
			t.Fatal(err)
		}
		if b, err = artifact.Open(orig); err != nil {
			t.Fatal(err)
		}
		rps := b.Reproductions()
		b.Close()
		if len(rps) != 1 {
			t.Fatalf("api=%v: %d reproductions attached", api, len(rps))
		}
		v, err := verify.NewVerifier([]*artifact.PublicKey{pub}, verify.WithClaimChecker(matchedChecker{}))
		if err != nil {
			t.Fatal(err)
		}
		res, err := v.Verify(ctx, orig, verify.Policy{})
		if err != nil {
			t.Fatal(err)
		}
		one := 1.0
		rev := artifacttest.Reviewer(t)
		if _, err := v.Attest(ctx, orig, verify.Policy{}, rev, verify.AttestOptions{Reproduction: &verify.Reproduction{Of: res.ManifestDigest, Summary: attest.Reproduction{
			RunManifest: attest.Descriptor{Digest: map[string]string{"sha256": rps[0].ManifestJSONDigest().Encoded()}}, Margin: 0.1, Alpha: 0.05,
			Claims: []attest.ReproducedClaim{{Point: "c1", Metric: "ttft_ns.p50", Verdict: attest.VerdictReproduced, Ratio: &one, Lo: &one, Hi: &one}},
		}}}); err != nil {
			t.Fatal(err)
		}
		ref := host + "/" + repoName + ":v1"
		pr, err := registry.Push(ctx, orig, ref, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(pr.Reproductions) != 1 || pr.Reproductions[0] != rps[0].RunDescriptor.Digest {
			t.Fatalf("api=%v: pushed reproductions %v", api, pr.Reproductions)
		}
		pulled := filepath.Join(tmp, "pulled.tar")
		got, err := registry.Pull(ctx, ref, pulled, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(got.Reproductions) != 1 || got.Reproductions[0] != rps[0].RunDescriptor.Digest || len(got.Skipped) > 0 {
			t.Fatalf("api=%v: pulled reproductions %v, skipped %v", api, got.Reproductions, got.Skipped)
		}
		pol := verify.Policy{RequireAttestations: []verify.Signer{{Key: rev.Public()}}, RequireLevels: []string{attest.LevelReproduced}}
		vr, err := v.Verify(ctx, pulled, pol)
		if err != nil || len(vr.Attestations) != 1 || len(vr.Reproductions) != 1 || !vr.Reproductions[0].Attested {
			t.Fatalf("api=%v: pulled copy: %v %+v", api, err, vr)
		}
		pb, err := artifact.Open(pulled)
		if err != nil {
			t.Fatal(err)
		}
		defer pb.Close()
		ex := filepath.Join(tmp, "extracted")
		if err := pb.ExtractReproduction(ctx, rps[0].RunDescriptor.Digest, ex); err != nil {
			t.Fatal(err)
		}
		alone := filepath.Join(tmp, "alone")
		if _, err := registry.Pull(ctx, host+"/"+repoName+"@"+string(rps[0].RunDescriptor.Digest), alone, opts); err != nil {
			t.Fatal(err)
		}
		for _, p := range []string{ex, alone} {
			eb, err := artifact.Open(p)
			if err != nil {
				t.Fatalf("api=%v: %s: %v", api, p, err)
			}
			if eb.RunDescriptor().Digest != rps[0].RunDescriptor.Digest || eb.CheckContent(ctx) != nil {
				t.Fatalf("api=%v: %s is not the reproduction", api, p)
			}
			eb.Close()
		}
	}
}

// TestAttestedReproductionMustBeCarried: when the bundle carries
// reproduction referrers, an attestation at BENCHSEAL_REPRODUCED naming
// another reproduction does not satisfy the level; the reproduction is
// still listed, not attested.
func TestAttestedReproductionMustBeCarried(t *testing.T) {
	ctx := context.Background()
	tmp := t.TempDir()
	orig, pub := artifacttest.SignedBundleOf(t, filepath.Join(tmp, "orig.tar"), artifacttest.RunOptions{Points: 1, Claims: []schema.Claim{{Metric: "ttft_ns.p50", Value: 1e6}}})
	repro := artifacttest.PackRun(t, filepath.Join(tmp, "repro.tar"), artifacttest.RunOptions{Points: 1})
	if _, err := artifact.AttachReproduction(ctx, orig, repro); err != nil {
		t.Fatal(err)
	}
	v, err := verify.NewVerifier([]*artifact.PublicKey{pub}, verify.WithClaimChecker(matchedChecker{}))
	if err != nil {
		t.Fatal(err)
	}
	res, err := v.Verify(ctx, orig, verify.Policy{})
	if err != nil || len(res.Reproductions) != 1 || res.Reproductions[0].Attested {
		t.Fatalf("plain verify: %v %+v", err, res)
	}
	one := 1.0
	rev := artifacttest.Reviewer(t)
	if _, err := v.Attest(ctx, orig, verify.Policy{}, rev, verify.AttestOptions{Reproduction: &verify.Reproduction{Of: res.ManifestDigest, Summary: attest.Reproduction{
		RunManifest: attest.Descriptor{Digest: map[string]string{"sha256": strings.Repeat("d", 64)}}, Margin: 0.1, Alpha: 0.05,
		Claims: []attest.ReproducedClaim{{Point: "c1", Metric: "ttft_ns.p50", Verdict: attest.VerdictReproduced, Ratio: &one, Lo: &one, Hi: &one}},
	}}}); err != nil {
		t.Fatal(err)
	}
	pol := verify.Policy{RequireAttestations: []verify.Signer{{Key: rev.Public()}}, RequireLevels: []string{attest.LevelReproduced}}
	res, err = v.Verify(ctx, orig, pol)
	if err == nil || !strings.Contains(err.Error(), "is not among the bundle's reproduction referrers") {
		t.Fatalf("an attestation of a reproduction the bundle does not carry satisfied the level: %v", err)
	}
	if len(res.Reproductions) != 1 || res.Reproductions[0].Attested {
		t.Fatalf("reproductions %+v", res.Reproductions)
	}
	// Without the level, the original verifies as before.
	if _, err := v.Verify(ctx, orig, verify.Policy{RequireAttestations: pol.RequireAttestations}); err != nil {
		t.Fatal(err)
	}
}
