package verify_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/verify"
)

func newVerifier(t *testing.T, keys []*artifact.PublicKey, opts ...verify.Option) *verify.Verifier {
	t.Helper()
	v, err := verify.NewVerifier(keys, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestVerifySignedBundlePasses(t *testing.T) {
	for _, name := range []string{"dir", "b.tar"} {
		t.Run(name, func(t *testing.T) {
			p, pub := artifacttest.SignedBundle(t, filepath.Join(t.TempDir(), name))
			res, err := newVerifier(t, []*artifact.PublicKey{pub}).Verify(context.Background(), p, verify.Policy{})
			if err != nil {
				t.Fatalf("%v\n%+v", err, res)
			}
			if !res.Verified || !res.Authenticated {
				t.Fatalf("%+v", res)
			}
			for _, c := range res.Checks {
				want := verify.StatusPassed
				if c.Name == verify.CheckClaims || c.Name == verify.CheckPlan || c.Name == verify.CheckAttestations {
					want = verify.StatusSkipped
				}
				if c.Status != want {
					t.Errorf("check %s: %s (%s)", c.Name, c.Status, c.Reason)
				}
			}
		})
	}
}

func TestVerifyWrongKeyFails(t *testing.T) {
	p, _ := artifacttest.SignedBundle(t, filepath.Join(t.TempDir(), "b"))
	res, err := newVerifier(t, []*artifact.PublicKey{artifacttest.Reviewer(t).Public()}).Verify(context.Background(), p, verify.Policy{})
	var ce *verify.CheckError
	if !errors.As(err, &ce) || ce.Check != verify.CheckSignature || !errors.Is(err, verify.ErrRejected) {
		t.Fatalf("err = %v", err)
	}
	if res.Verified || res.Check(verify.CheckSignature).Status != verify.StatusFailed {
		t.Fatalf("%+v", res)
	}
}

func TestVerifyEveryPinnedKeyMustSign(t *testing.T) {
	p, pub := artifacttest.SignedBundle(t, filepath.Join(t.TempDir(), "b"))
	rev := artifacttest.Reviewer(t)
	v := newVerifier(t, []*artifact.PublicKey{pub, rev.Public()})
	if _, err := v.Verify(context.Background(), p, verify.Policy{}); err == nil {
		t.Fatal("verified without the reviewer's signature")
	}
	if _, err := artifact.Sign(context.Background(), p, rev); err != nil {
		t.Fatal(err)
	}
	res, err := v.Verify(context.Background(), p, verify.Policy{})
	if err != nil {
		t.Fatalf("%v", err)
	}
	if len(res.Signatures) != 2 {
		t.Fatalf("%+v", res.Signatures)
	}
}

func TestVerifyUnsignedFailsUnlessAllowed(t *testing.T) {
	p := artifacttest.PackRun(t, filepath.Join(t.TempDir(), "b.tar"), artifacttest.RunOptions{})
	pub := artifacttest.Publisher(t).Public()
	if _, err := newVerifier(t, []*artifact.PublicKey{pub}).Verify(context.Background(), p, verify.Policy{}); !errors.Is(err, verify.ErrRejected) {
		t.Fatalf("unsigned bundle: %v", err)
	}
	res, err := newVerifier(t, nil).Verify(context.Background(), p, verify.Policy{AllowUnsignedUnsafe: true})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Verified || res.Authenticated || len(res.Warnings) == 0 {
		t.Fatalf("%+v", res)
	}
	if _, err := newVerifier(t, nil).Verify(context.Background(), p, verify.Policy{}); err == nil || errors.Is(err, verify.ErrRejected) {
		t.Fatalf("no keys: %v", err)
	}
}

func TestVerifyDetachedSignature(t *testing.T) {
	p := artifacttest.PackRun(t, filepath.Join(t.TempDir(), "b"), artifacttest.RunOptions{})
	b, err := artifact.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	stmt, _ := artifact.MarshalStatement(b.Statement())
	b.Close()
	s := artifacttest.Reviewer(t)
	sb, err := artifact.SignStatement(context.Background(), stmt, s)
	if err != nil {
		t.Fatal(err)
	}
	res, err := newVerifier(t, []*artifact.PublicKey{s.Public()}).Verify(context.Background(), p, verify.Policy{Detached: [][]byte{sb}})
	if err != nil {
		t.Fatalf("%v %+v", err, res)
	}
	// A statement about another run is rejected.
	other := []byte(`{"_type":"https://in-toto.io/Statement/v1","subject":[{"name":"x","digest":{"sha256":"` + string(make64('a')) + `"}}],"predicateType":"https://benchseal.dev/attestation/run/v1","predicate":{}}`)
	sb2, _ := artifact.SignStatement(context.Background(), other, s)
	if _, err := newVerifier(t, []*artifact.PublicKey{s.Public()}).Verify(context.Background(), p, verify.Policy{Detached: [][]byte{sb2}}); err == nil {
		t.Fatal("signature over another digest accepted")
	}
}

func make64(c byte) []byte {
	b := make([]byte, 64)
	for i := range b {
		b[i] = c
	}
	return b
}

type fakeChecker struct{ outcome string }

func (f fakeChecker) CheckClaims(ctx context.Context, run schema.Run) ([]schema.ClaimCheck, error) {
	var out []schema.ClaimCheck
	for _, p := range run.Claims().Points {
		for _, m := range p.Metrics {
			out = append(out, schema.ClaimCheck{Point: p.Point, Metric: m.Metric, Claimed: m.Value, Outcome: f.outcome})
		}
	}
	return out, nil
}

func TestVerifyClaimChecker(t *testing.T) {
	p, pub := artifacttest.SignedBundle(t, filepath.Join(t.TempDir(), "b"))
	keys := []*artifact.PublicKey{pub}
	res, err := newVerifier(t, keys, verify.WithClaimChecker(fakeChecker{schema.ClaimMatched})).Verify(context.Background(), p, verify.Policy{})
	if err != nil || res.Check(verify.CheckClaims).Status != verify.StatusPassed || len(res.Claims) != 2 {
		t.Fatalf("%v %+v", err, res)
	}
	res, err = newVerifier(t, keys, verify.WithClaimChecker(fakeChecker{schema.ClaimMismatched})).Verify(context.Background(), p, verify.Policy{})
	var ce *verify.CheckError
	if !errors.As(err, &ce) || ce.Check != verify.CheckClaims || res.Verified || len(res.Claims) != 2 {
		t.Fatalf("%v", err)
	}
	if _, err := verify.NewVerifier(keys, verify.WithClaimChecker(nil)); err == nil {
		t.Fatal("nil checker accepted")
	}
}

func TestVerifyMissingPathIsAnError(t *testing.T) {
	_, err := newVerifier(t, []*artifact.PublicKey{artifacttest.Publisher(t).Public()}).Verify(context.Background(), filepath.Join(t.TempDir(), "nope"), verify.Policy{})
	if err == nil || errors.Is(err, verify.ErrRejected) {
		t.Fatalf("%v", err)
	}
	_ = os.ErrNotExist
}

func TestVerifyRejectsWrongStatements(t *testing.T) {
	p := artifacttest.PackRun(t, filepath.Join(t.TempDir(), "b"), artifacttest.RunOptions{})
	b, err := artifact.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	good := b.Statement()
	b.Close()
	s := artifacttest.Publisher(t)
	v := newVerifier(t, []*artifact.PublicKey{s.Public()})
	mutate := map[string]func(st *artifact.Statement){
		"wrong predicate type": func(st *artifact.Statement) { st.PredicateType = "https://example.com/other/v1" },
		"wrong _type":          func(st *artifact.Statement) { st.Type = "https://in-toto.io/Statement/v0.1" },
		"layer digest changed": func(st *artifact.Statement) { st.Subject[2].Digest["sha256"] = string(make64('b')) },
		"subject missing":      func(st *artifact.Statement) { st.Subject = st.Subject[:len(st.Subject)-1] },
		"predicate changed":    func(st *artifact.Statement) { st.Predicate.Records++ },
		"extra digest":         func(st *artifact.Statement) { st.Subject[1].Digest["md5"] = "00" },
	}
	for name, f := range mutate {
		t.Run(name, func(t *testing.T) {
			cp := *good
			raw, _ := artifact.MarshalStatement(&cp)
			st, _ := artifact.ParseStatement(raw)
			f(st)
			data, _ := artifact.MarshalStatement(st)
			sb, err := artifact.SignStatement(context.Background(), data, s)
			if err != nil {
				t.Fatal(err)
			}
			res, err := v.Verify(context.Background(), p, verify.Policy{Detached: [][]byte{sb}})
			if err == nil || res.Verified {
				t.Fatal("accepted")
			}
		})
	}
	// Duplicate keys in the payload are refused even when signed.
	raw, _ := artifact.MarshalStatement(good)
	dup := append([]byte(`{"predicateType":"x",`), raw[1:]...)
	sb, _ := artifact.SignStatement(context.Background(), dup, s)
	if res, err := v.Verify(context.Background(), p, verify.Policy{Detached: [][]byte{sb}}); err == nil || res.Verified {
		t.Fatal("duplicate keys accepted")
	}
}

type offChecker struct{}

func (offChecker) CheckClaims(ctx context.Context, run schema.Run) ([]schema.ClaimCheck, error) {
	rep, got := 1, 13.98
	return []schema.ClaimCheck{{Point: "c1", Repeat: &rep, Metric: "request_throughput", Claimed: 99, Recomputed: &got, Outcome: schema.ClaimMismatched}}, nil
}

func TestVerifyClaimMismatchNamesRepeatAndBothValues(t *testing.T) {
	p, pub := artifacttest.SignedBundle(t, filepath.Join(t.TempDir(), "b"))
	res, _ := newVerifier(t, []*artifact.PublicKey{pub}, verify.WithClaimChecker(offChecker{})).Verify(context.Background(), p, verify.Policy{})
	got := res.Check(verify.CheckClaims).Reason
	if want := "c1 repeat 1 request_throughput: claimed 99, recomputed 13.98"; !strings.Contains(got, want) {
		t.Fatalf("claims check says %q, want it to contain %q", got, want)
	}
}

// A manifest that states workload.sha256 while the
// bundle ships no workload verifies, with the hash labelled UNVERIFIED (not
// shipped); a bundle that ships its workload says nothing of the kind.
func TestVerifyWorkloadHashWithoutWorkloadIsUnverified(t *testing.T) {
	dir := artifacttest.WriteRun(t, filepath.Join(t.TempDir(), "run"), artifacttest.RunOptions{NoExtras: true})
	artifacttest.EditRunManifest(t, dir, func(m map[string]any) {
		m["workload"] = map[string]any{"sha256": strings.Repeat("ab", 32)}
		var unknown []any
		for _, u := range m["unknown"].([]any) {
			if u != "workload.sha256" {
				unknown = append(unknown, u)
			}
		}
		m["unknown"] = unknown
	})
	p := filepath.Join(t.TempDir(), "b.tar")
	if _, err := artifact.Pack(context.Background(), dir, p, artifact.PackOptions{Created: artifacttest.Created}); err != nil {
		t.Fatal(err)
	}
	res, err := newVerifier(t, nil).Verify(context.Background(), p, verify.Policy{AllowUnsignedUnsafe: true})
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(res.Warnings, "\n"); !strings.Contains(w, "UNVERIFIED workload (not shipped): workload.sha256 "+strings.Repeat("ab", 32)) {
		t.Fatalf("no UNVERIFIED workload warning:\n%s", w)
	}
	shipped := artifacttest.PackRun(t, filepath.Join(t.TempDir(), "s.tar"), artifacttest.RunOptions{})
	res, err = newVerifier(t, nil).Verify(context.Background(), shipped, verify.Policy{AllowUnsignedUnsafe: true})
	if err != nil {
		t.Fatal(err)
	}
	if w := strings.Join(res.Warnings, "\n"); strings.Contains(w, "UNVERIFIED workload") {
		t.Fatalf("a shipped workload is labelled unverified:\n%s", w)
	}
}
