package verify_test

import (
	"context"
	"encoding/base64"
	"path/filepath"
	"strings"
	"testing"
	"time"

	protobundle "github.com/sigstore/protobuf-specs/gen/pb-go/bundle/v1"
	protocommon "github.com/sigstore/protobuf-specs/gen/pb-go/common/v1"
	protodsse "github.com/sigstore/protobuf-specs/gen/pb-go/dsse"
	protorekor "github.com/sigstore/protobuf-specs/gen/pb-go/rekor/v1"
	sgbundle "github.com/sigstore/sigstore-go/pkg/bundle"
	"github.com/sigstore/sigstore-go/pkg/testing/ca"
	"github.com/sigstore/sigstore-go/pkg/tlog"
	"google.golang.org/protobuf/encoding/protojson"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/verify"
)

const (
	publisherSAN    = "publisher@example.com"
	publisherIssuer = "https://accounts.example.com"
)

// keylessSign signs payload as an in-toto DSSE envelope with a short-lived
// certificate from the virtual Fulcio for identity/issuer, logged in the
// virtual Rekor at integrated (with a signed entry timestamp) and
// timestamped by the virtual TSA, and returns the Sigstore bundle v0.3
// JSON — the shape 'cosign attest-blob' writes in CI. tamper may change
// the transparency-log entry before the bundle is encoded.
func keylessSign(t *testing.T, vs *ca.VirtualSigstore, identity, issuer string, payload []byte, integrated time.Time, tamper func(*protorekor.TransparencyLogEntry)) []byte {
	t.Helper()
	e, err := vs.AttestAtTime(identity, issuer, payload, integrated, true)
	if err != nil {
		t.Fatal(err)
	}
	vc, _ := e.VerificationContent()
	cert := vc.(*sgbundle.Certificate).Certificate()
	sc, _ := e.SignatureContent()
	env := sc.(*sgbundle.Envelope).Envelope
	sig, err := base64.StdEncoding.DecodeString(env.Signatures[0].Sig)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := base64.StdEncoding.DecodeString(env.Payload)
	entries, _ := e.TlogEntries()
	tle := entries[0].TransparencyLogEntry()
	logID, _ := vs.RekorLogID()
	set, err := vs.RekorSignPayload(tlog.RekorPayload{
		Body: base64.StdEncoding.EncodeToString(tle.CanonicalizedBody), IntegratedTime: tle.IntegratedTime,
		LogIndex: tle.LogIndex, LogID: logID,
	})
	if err != nil {
		t.Fatal(err)
	}
	tle.InclusionPromise = &protorekor.InclusionPromise{SignedEntryTimestamp: set}
	tle.KindVersion = &protorekor.KindVersion{Kind: "dsse", Version: "0.0.1"}
	if tamper != nil {
		tamper(tle)
	}
	ts, _ := e.Timestamps()
	pb := &protobundle.Bundle{
		MediaType: "application/vnd.dev.sigstore.bundle.v0.3+json",
		VerificationMaterial: &protobundle.VerificationMaterial{
			Content:                   &protobundle.VerificationMaterial_Certificate{Certificate: &protocommon.X509Certificate{RawBytes: cert.Raw}},
			TlogEntries:               []*protorekor.TransparencyLogEntry{tle},
			TimestampVerificationData: &protobundle.TimestampVerificationData{Rfc3161Timestamps: []*protocommon.RFC3161SignedTimestamp{{SignedTimestamp: ts[0]}}},
		},
		Content: &protobundle.Bundle_DsseEnvelope{DsseEnvelope: &protodsse.Envelope{
			Payload: body, PayloadType: env.PayloadType,
			Signatures: []*protodsse.Signature{{Sig: sig}},
		}},
	}
	out, err := protojson.Marshal(pb)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// unsignedStatement packs a run and returns its path and the statement a
// publisher signs.
func unsignedStatement(t *testing.T) (string, []byte) {
	t.Helper()
	p := artifacttest.PackRun(t, filepath.Join(t.TempDir(), "b"), artifacttest.RunOptions{})
	b, err := artifact.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	st, err := artifact.MarshalStatement(b.Statement())
	if err != nil {
		t.Fatal(err)
	}
	return p, st
}

func TestKeylessPublisherIdentity(t *testing.T) {
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	p, st := unsignedStatement(t)
	now := time.Now()
	good := keylessSign(t, vs, publisherSAN, publisherIssuer, st, now.Add(5*time.Minute), nil)
	want := verify.Identity{SAN: publisherSAN, Issuer: publisherIssuer}
	for _, tc := range []struct {
		name   string
		sig    []byte
		id     verify.Identity
		strict bool // require an SCT (the default)
		reason string
	}{
		{name: "good identity", sig: good, id: want},
		{name: "good identity by regexp", sig: good, id: verify.Identity{SANRegexp: `^publisher@example\.com$`, IssuerRegexp: `^https://accounts\.example\.com$`}},
		{name: "wrong SAN", sig: good, id: verify.Identity{SAN: "mallory@example.com", Issuer: publisherIssuer}, reason: verify.ReasonSAN},
		{name: "wrong issuer", sig: good, id: verify.Identity{SAN: publisherSAN, Issuer: "https://evil.example.com"}, reason: verify.ReasonIssuer},
		{name: "expired certificate outside the timestamp", sig: keylessSign(t, vs, publisherSAN, publisherIssuer, st, now.Add(time.Hour), nil), id: want, reason: verify.ReasonCertTime},
		{name: "tampered tlog entry", sig: keylessSign(t, vs, publisherSAN, publisherIssuer, st, now.Add(5*time.Minute), func(e *protorekor.TransparencyLogEntry) {
			e.IntegratedTime++
		}), id: want, reason: verify.ReasonTlog},
		{name: "missing SCT", sig: good, id: want, strict: true, reason: verify.ReasonSCT},
		{name: "keyless signature over another statement", sig: keylessSign(t, vs, publisherSAN, publisherIssuer, []byte(strings.Replace(string(st), `"runId":"`, `"runId":"x`, 1)), now.Add(5*time.Minute), nil), id: want, reason: "statement:"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := []verify.Option{verify.WithTrustedRoot(vs), verify.WithIdentities(tc.id)}
			if !tc.strict {
				opts = append(opts, verify.WithoutSCTUnsafe())
			}
			v := newVerifier(t, nil, opts...)
			res, err := v.Verify(context.Background(), p, verify.Policy{Detached: [][]byte{tc.sig}})
			if tc.reason == "" {
				if err != nil || !res.Authenticated {
					t.Fatalf("%v %+v", err, res.Signatures)
				}
				s := res.Signatures[0]
				if s.Identity != publisherSAN || s.Issuer != publisherIssuer || len(s.Times) == 0 {
					t.Fatalf("%+v", s)
				}
				return
			}
			if err == nil || res.Verified {
				t.Fatal("accepted")
			}
			if len(res.Signatures) != 1 || !strings.HasPrefix(res.Signatures[0].Reason, tc.reason) {
				t.Fatalf("want reason %q, got %+v", tc.reason, res.Signatures)
			}
		})
	}
}

func TestKeylessNeedsTrustedRootAndKeyedNeedsKey(t *testing.T) {
	if _, err := verify.NewVerifier(nil, verify.WithIdentities(verify.Identity{SAN: "a", Issuer: "b"})); err == nil {
		t.Fatal("identity without a trusted root accepted")
	}
	if _, err := verify.NewVerifier(nil, verify.WithIdentities(verify.Identity{SAN: "a", SANRegexp: "a", Issuer: "b"})); err == nil {
		t.Fatal("SAN and SAN regexp both accepted")
	}
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	// A keyless signature never counts for a pinned key, and a keyed one
	// never for an identity.
	p, st := unsignedStatement(t)
	sig := keylessSign(t, vs, publisherSAN, publisherIssuer, st, time.Now().Add(5*time.Minute), nil)
	v := newVerifier(t, []*artifact.PublicKey{artifacttest.Publisher(t).Public()}, verify.WithTrustedRoot(vs))
	res, _ := v.Verify(context.Background(), p, verify.Policy{Detached: [][]byte{sig}})
	if res.Verified || !strings.HasPrefix(res.Signatures[0].Reason, verify.ReasonNotKeyed) {
		t.Fatalf("%+v", res.Signatures)
	}
	keyed, err := artifact.SignStatement(context.Background(), st, artifacttest.Publisher(t))
	if err != nil {
		t.Fatal(err)
	}
	v = newVerifier(t, nil, verify.WithTrustedRoot(vs), verify.WithIdentities(verify.Identity{SAN: publisherSAN, Issuer: publisherIssuer}))
	res, _ = v.Verify(context.Background(), p, verify.Policy{Detached: [][]byte{keyed}})
	if res.Verified || !strings.HasPrefix(res.Signatures[0].Reason, verify.ReasonNotKeyless) {
		t.Fatalf("%+v", res.Signatures)
	}
}

func TestKeylessReviewerAttestation(t *testing.T) {
	// A reviewer attests keyless in CI; the bundle's publisher signed with a
	// key; verify requires the reviewer identity.
	vs, err := ca.NewVirtualSigstore()
	if err != nil {
		t.Fatal(err)
	}
	p, pub, _ := attested(t, "b")
	b, err := artifact.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	vsa, err := b.ReadSignature(b.ReferrersOf(artifact.PredicateTypeVSA)[0])
	b.Close()
	if err != nil {
		t.Fatal(err)
	}
	var sb sgbundle.Bundle
	if err := sb.UnmarshalJSON(vsa); err != nil {
		t.Fatal(err)
	}
	stmt := sb.GetDsseEnvelope().GetPayload()
	keyless := keylessSign(t, vs, "reviewer@lab.example", "https://ci.example", stmt, time.Now().Add(5*time.Minute), nil)
	if _, _, err := verify.AttachExternal(context.Background(), p, keyless, artifact.PredicateTypeVSA); err != nil {
		t.Fatal(err)
	}
	v := newVerifier(t, []*artifact.PublicKey{pub}, verify.WithTrustedRoot(vs), verify.WithoutSCTUnsafe())
	reviewer := verify.Signer{Identity: &verify.Identity{SAN: "reviewer@lab.example", Issuer: "https://ci.example"}}
	res, err := v.Verify(context.Background(), p, verify.Policy{RequireAttestations: []verify.Signer{reviewer}})
	if err != nil {
		t.Fatalf("%v %+v", err, res.Attestations)
	}
	found := false
	for _, a := range res.Attestations {
		if a.Verified && strings.Contains(a.Reviewer, "reviewer@lab.example (issuer https://ci.example)") {
			found = true
		}
	}
	if !found {
		t.Fatalf("%+v", res.Attestations)
	}
}
