package verify_test

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/sigstore/sigstore-go/pkg/testing/ca"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/plan"
	"github.com/benchseal/benchseal/verify"
)

// testPlan is the plan artifacttest's default run executes.
// plannedRun is the run the plan tests pre-register: one repeat, so that
// artifacttest's claims (one per point, without a repeat) claim the
// planned counts of every repeat.
var plannedRun = artifacttest.RunOptions{Generator: true, Repeats: 1}

func testPlan() *plan.Plan {
	m := artifacttest.Manifest(plannedRun)
	return &plan.Plan{
		Schema: plan.SchemaV1, Workload: plan.Workload{Kind: "synthetic"},
		Load:        plan.Load{Mode: m.Load.Mode, Points: m.Load.Points, Warmup: m.Load.Warmup, Repeats: m.Load.Repeats, Seed: *m.Client.Seed},
		SLO:         m.SLO,
		Definitions: "benchseal", Boundary: m.Client.Boundary, Metrics: []string{"counts"},
	}
}

// plannedBundle packs artifacttest's default run with its manifest naming
// the plan p, signs it with the publisher key and returns its path.
func plannedBundle(t *testing.T, p *plan.Plan) string {
	t.Helper()
	run := artifacttest.WriteRun(t, filepath.Join(t.TempDir(), "run"), plannedRun)
	d, _ := p.Digest()
	artifacttest.EditRunManifest(t, run, func(m map[string]any) { m["plan"] = map[string]any{"sha256": strings.TrimPrefix(d, "sha256:")} })
	out := filepath.Join(t.TempDir(), "b.tar")
	if _, err := artifact.Pack(context.Background(), run, out, artifact.PackOptions{Created: artifacttest.Created}); err != nil {
		t.Fatal(err)
	}
	if _, err := artifact.Sign(context.Background(), out, artifacttest.Publisher(t)); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestPlanKeyedSignaturePassesWithoutProvingTime(t *testing.T) {
	p := testPlan()
	path := plannedBundle(t, p)
	st, _ := p.Statement()
	sig, err := artifact.SignStatement(context.Background(), st, artifacttest.Publisher(t))
	if err != nil {
		t.Fatal(err)
	}
	v := newVerifier(t, []*artifact.PublicKey{artifacttest.Publisher(t).Public()})
	res, err := v.Verify(context.Background(), path, verify.Policy{Plan: p, PlanSignature: sig})
	if err != nil {
		t.Fatalf("%v %+v", err, res.Plan)
	}
	if c := res.Check(verify.CheckPlan); c.Status != verify.StatusPassed || !strings.Contains(c.Reason, "not proven") {
		t.Fatalf("%+v", c)
	}
	// Signed by the reviewer, not the publisher: rejected.
	sig2, _ := artifact.SignStatement(context.Background(), st, artifacttest.Reviewer(t))
	if _, err := v.Verify(context.Background(), path, verify.Policy{Plan: p, PlanSignature: sig2}); err == nil {
		t.Fatal("plan signed by an untrusted key accepted")
	}
	// Without the plan, the claim that the run followed one is UNVERIFIED.
	res, err = v.Verify(context.Background(), path, verify.Policy{})
	if err != nil || !strings.Contains(strings.Join(res.Warnings, "\n"), "UNVERIFIED") {
		t.Fatalf("%v %v", err, res.Warnings)
	}
}

func TestPlanSignedAfterRunStartIsADeviation(t *testing.T) {
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	p := testPlan()
	path := plannedBundle(t, p)
	st, _ := p.Statement()
	// The keyless plan signature is logged now; the run started on
	// 2026-01-01, before it.
	sig := keylessSign(t, vs, publisherSAN, publisherIssuer, st, time.Now().Add(5*time.Minute), nil)
	v := newVerifier(t, []*artifact.PublicKey{artifacttest.Publisher(t).Public()}, verify.WithTrustedRoot(vs), verify.WithoutSCTUnsafe(),
		verify.WithIdentities(verify.Identity{SAN: publisherSAN, Issuer: publisherIssuer}))
	res, _ := v.Verify(context.Background(), path, verify.Policy{Plan: p, PlanSignature: sig})
	if res.Plan == nil || res.Plan.SignedAt == "" || !strings.Contains(res.Plan.SignedBy, publisherSAN) {
		t.Fatalf("%+v", res.Plan)
	}
	found := false
	for _, d := range res.Plan.Deviations {
		found = found || d.Kind == plan.DevSignedLate
	}
	if !found || res.Verified {
		t.Fatalf("%+v", res.Plan)
	}
}

// A plan given to verify comes from the publisher: one declaring 3·10^8
// repeats (out of memory, or 10^4 deviation strings) is
// rejected by the plan check with the field named, before anything is built
// from it.
func TestPlanBeyondLoadLimitsFailsPlanCheck(t *testing.T) {
	p := testPlan()
	path := plannedBundle(t, p)
	p.Load.Repeats = 300_000_000
	v := newVerifier(t, []*artifact.PublicKey{artifacttest.Publisher(t).Public()})
	res, err := v.Verify(context.Background(), path, verify.Policy{Plan: p, AllowUnsignedUnsafe: true})
	if err == nil {
		t.Fatal("a plan beyond the load limits passed")
	}
	if c := res.Check(verify.CheckPlan); c.Status != verify.StatusFailed || !strings.Contains(c.Reason, "load.repeats") {
		t.Fatalf("%+v", c)
	}
}

// A run without load.generator gets weaker completeness
// checks; verify says which did not run, with the word UNVERIFIED.
func TestRunWithoutGeneratorIsUnverifiedCompleteness(t *testing.T) {
	run := artifacttest.WriteRun(t, filepath.Join(t.TempDir(), "run"), artifacttest.RunOptions{})
	out := filepath.Join(t.TempDir(), "b.tar")
	if _, err := artifact.Pack(context.Background(), run, out, artifact.PackOptions{Created: artifacttest.Created}); err != nil {
		t.Fatal(err)
	}
	v := newVerifier(t, nil)
	res, err := v.Verify(context.Background(), out, verify.Policy{AllowUnsignedUnsafe: true})
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(res.Warnings, "\n"); !strings.Contains(w, "UNVERIFIED completeness: no load.generator") {
		t.Fatalf("warnings: %s", w)
	}
}
