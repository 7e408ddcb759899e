package attest

import (
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	vsa "github.com/in-toto/attestation/go/predicates/vsa/v1"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/timestamppb"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/schema"
)

// Levels benchseal writes into verifiedLevels. SLSA reserves the prefix
// SLSA_ for its own tracks; these are benchseal's.
const (
	// LevelIntegrity: every blob's digest, the layout, the schema of every
	// record and the publisher's signature over the run manifest verified.
	LevelIntegrity = "BENCHSEAL_INTEGRITY"
	// LevelRecomputed: every claim recomputed from the raw records and
	// matched.
	LevelRecomputed = "BENCHSEAL_RECOMPUTED"
	// LevelPlanMatched: the run matched a signed pre-registered plan.
	LevelPlanMatched = "BENCHSEAL_PLAN_MATCHED"
	// LevelReproduced: the reviewer re-ran the bundle's test (benchseal
	// reproduce) and every claim was REPRODUCED within the margin; the
	// predicate's benchsealReproduction names the reproduction run, the
	// margin and every claim's verdict.
	LevelReproduced = "BENCHSEAL_REPRODUCED"
)

// Levels lists every level benchseal writes, in the order it writes them.
var Levels = []string{LevelIntegrity, LevelRecomputed, LevelPlanMatched, LevelReproduced}

// Verification results of a VSA.
const (
	ResultPassed = "PASSED"
	ResultFailed = "FAILED"
)

// PolicyURI is the policy benchseal verifies against; the version and the
// definitions are added as query parameters.
const PolicyURI = "https://benchseal.dev/policy/verify/v1"

// ErrAttestation is the root of every parse error.
var ErrAttestation = errors.New("invalid attestation")

// Descriptor is a resource descriptor: a URI and a digest set.
type Descriptor struct {
	URI    string            `json:"uri,omitempty"`
	Digest map[string]string `json:"digest,omitempty"`
}

// Summary is what a reviewer attests about one bundle.
type Summary struct {
	// RunID names the subject; ManifestDigest ("sha256:<hex>") is its digest.
	RunID          string
	ManifestDigest string
	// VerifierID is the reviewer: a key fingerprint or an identity.
	VerifierID string
	// TimeVerified is when the verification ran.
	TimeVerified time.Time
	// ResourceURI names the bundle verified (an OCI reference or
	// "urn:benchseal:run:<id>@sha256:<hex>"); it must end with the
	// manifest digest.
	ResourceURI string
	// Policy is what was verified against: PolicyURI with benchseal's
	// version and definitions, and the plan's digest when a plan matched.
	Policy Descriptor
	// Inputs are the publisher signatures verified (Sigstore bundles by
	// digest).
	Inputs []Descriptor
	// Levels are the benchseal levels reached.
	Levels []string
	// Reproduction is the reproduction attested with LevelReproduced (nil
	// for a verification alone).
	Reproduction *Reproduction
}

// statement is the in-toto Statement v1 with a VSA predicate.
type statement struct {
	Type          string             `json:"_type"`
	Subject       []artifact.Subject `json:"subject"`
	PredicateType string             `json:"predicateType"`
	Predicate     json.RawMessage    `json:"predicate"`
}

var hex64 = regexp.MustCompile(`^[0-9a-f]{64}$`)

// ResourceURI returns the resource URI benchseal writes for a run when no
// OCI reference is known.
func ResourceURI(runID, manifestDigest string) string {
	return "urn:benchseal:run:" + runID + "@" + manifestDigest
}

// Statement returns the statement bytes a reviewer signs (the DSSE
// payload). It refuses a summary missing a required VSA field.
func Statement(s Summary) ([]byte, error) {
	hexd := strings.TrimPrefix(s.ManifestDigest, "sha256:")
	switch {
	case !hex64.MatchString(hexd) || !strings.HasPrefix(s.ManifestDigest, "sha256:"):
		return nil, fmt.Errorf("attest: manifest digest %q is not sha256:<64 hex>", s.ManifestDigest)
	case s.VerifierID == "":
		return nil, errors.New("attest: no verifier id")
	case s.TimeVerified.IsZero():
		return nil, errors.New("attest: no verification time")
	case !strings.HasSuffix(s.ResourceURI, s.ManifestDigest):
		return nil, fmt.Errorf("attest: resource URI %q does not name the manifest digest", s.ResourceURI)
	case s.Policy.URI == "":
		return nil, errors.New("attest: no policy URI")
	case len(s.Levels) == 0:
		return nil, errors.New("attest: no verified level")
	}
	for _, l := range s.Levels {
		if strings.HasPrefix(l, "SLSA_") {
			return nil, fmt.Errorf("attest: level %q uses the reserved SLSA_ prefix", l)
		}
	}
	if err := checkReproduction(s.Reproduction, slices.Contains(s.Levels, LevelReproduced)); err != nil {
		return nil, fmt.Errorf("attest: %w", err)
	}
	p := &vsa.VerificationSummary{
		Verifier:           &vsa.VerificationSummary_Verifier{Id: s.VerifierID},
		TimeVerified:       timestamppb.New(s.TimeVerified.UTC().Truncate(time.Second)),
		ResourceUri:        s.ResourceURI,
		Policy:             &vsa.VerificationSummary_Policy{Uri: s.Policy.URI, Digest: s.Policy.Digest},
		VerificationResult: ResultPassed,
		VerifiedLevels:     s.Levels,
	}
	for _, in := range s.Inputs {
		p.InputAttestations = append(p.InputAttestations, &vsa.VerificationSummary_InputAttestation{Uri: in.URI, Digest: in.Digest})
	}
	pb, err := protojson.Marshal(p)
	if err != nil {
		return nil, fmt.Errorf("attest: encode predicate: %w", err)
	}
	// protojson's spacing is not stable; compact it so equal summaries give
	// equal bytes.
	var compact json.RawMessage
	if err := json.Unmarshal(pb, &compact); err != nil {
		return nil, err
	}
	if s.Reproduction != nil {
		if compact, err = withReproduction(compact, s.Reproduction); err != nil {
			return nil, err
		}
	}
	return json.Marshal(statement{
		Type:          artifact.StatementTypeV1,
		Subject:       []artifact.Subject{{Name: s.RunID, Digest: map[string]string{"sha256": hexd}}},
		PredicateType: artifact.PredicateTypeVSA,
		Predicate:     compact,
	})
}

// Attestation is a parsed reviewer attestation. Nothing in it is trusted
// until the signature over it is verified.
type Attestation struct {
	// Subject is the run id named and ManifestDigest the "sha256:<hex>" the
	// statement is about.
	Subject        string
	ManifestDigest string
	VerifierID     string
	TimeVerified   time.Time
	ResourceURI    string
	Policy         Descriptor
	Inputs         []Descriptor
	Result         string
	Levels         []string
	// Reproduction is the predicate's benchsealReproduction; nil in an
	// attestation without one (every attestation made before the level).
	Reproduction *Reproduction
}

// Parse decodes a DSSE payload as a reviewer attestation: strict JSON (no
// duplicate keys), in-toto Statement v1, predicate type VSA v1, exactly one
// subject with a sha256 digest, and every field VSA v1 requires. Unknown
// predicate fields are ignored, as VSA's parsing rules say.
func Parse(payload []byte) (*Attestation, error) {
	if err := schema.CheckJSON(payload); err != nil {
		// %v: CheckJSON's DecodeError is also schema.ErrInvalid (an
		// invalid run); a payload that does not parse is ErrAttestation
		// alone.
		return nil, errcond.Errorf(ErrAttestation, "invalid attestation: %v", err)
	}
	var st statement
	if err := json.Unmarshal(payload, &st); err != nil {
		return nil, errcond.Errorf(ErrAttestation, "invalid attestation: %w", err)
	}
	switch {
	case st.Type != artifact.StatementTypeV1:
		return nil, errcond.Errorf(ErrAttestation, "invalid attestation: _type %q, want %q", st.Type, artifact.StatementTypeV1)
	case st.PredicateType != artifact.PredicateTypeVSA:
		return nil, errcond.Errorf(ErrAttestation, "invalid attestation: predicate type %q, want %q", st.PredicateType, artifact.PredicateTypeVSA)
	case len(st.Subject) != 1:
		return nil, errcond.Errorf(ErrAttestation, "invalid attestation: %d subjects, want 1 (the run manifest)", len(st.Subject))
	case !hex64.MatchString(st.Subject[0].Digest["sha256"]):
		return nil, errcond.Errorf(ErrAttestation, "invalid attestation: subject has no sha256 digest")
	}
	var p vsa.VerificationSummary
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(st.Predicate, &p); err != nil {
		return nil, errcond.Errorf(ErrAttestation, "invalid attestation: predicate: %w", err)
	}
	a := &Attestation{
		Subject:        st.Subject[0].Name,
		ManifestDigest: "sha256:" + st.Subject[0].Digest["sha256"],
		VerifierID:     p.GetVerifier().GetId(),
		ResourceURI:    p.GetResourceUri(),
		Policy:         Descriptor{URI: p.GetPolicy().GetUri(), Digest: p.GetPolicy().GetDigest()},
		Result:         p.GetVerificationResult(),
		Levels:         p.GetVerifiedLevels(),
	}
	for _, in := range p.GetInputAttestations() {
		a.Inputs = append(a.Inputs, Descriptor{URI: in.GetUri(), Digest: in.GetDigest()})
	}
	switch {
	case a.VerifierID == "":
		return nil, errcond.Errorf(ErrAttestation, "invalid attestation: verifier.id missing")
	case p.GetTimeVerified() == nil:
		return nil, errcond.Errorf(ErrAttestation, "invalid attestation: timeVerified missing")
	case a.ResourceURI == "":
		return nil, errcond.Errorf(ErrAttestation, "invalid attestation: resourceUri missing")
	case a.Policy.URI == "":
		return nil, errcond.Errorf(ErrAttestation, "invalid attestation: policy.uri missing")
	case a.Result != ResultPassed && a.Result != ResultFailed:
		return nil, errcond.Errorf(ErrAttestation, "invalid attestation: verificationResult %q, want PASSED or FAILED", a.Result)
	case len(a.Levels) == 0:
		return nil, errcond.Errorf(ErrAttestation, "invalid attestation: verifiedLevels missing")
	}
	if err := p.GetTimeVerified().CheckValid(); err != nil {
		return nil, errcond.Errorf(ErrAttestation, "invalid attestation: timeVerified: %w", err)
	}
	a.TimeVerified = p.GetTimeVerified().AsTime().UTC()
	r, err := parseReproduction(st.Predicate)
	if err == nil {
		err = checkReproduction(r, a.Has(LevelReproduced))
	}
	if err != nil {
		return nil, errcond.Errorf(ErrAttestation, "invalid attestation: %w", err)
	}
	a.Reproduction = r
	return a, nil
}

// Has reports whether the attestation lists level.
func (a *Attestation) Has(level string) bool {
	for _, l := range a.Levels {
		if l == level {
			return true
		}
	}
	return false
}
