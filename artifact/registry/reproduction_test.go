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
		orig, pub := artifacttest.SignedBundle(t, filepath.Join(tmp, "orig"))
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
