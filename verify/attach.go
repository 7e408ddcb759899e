package verify

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/attest"
	"github.com/benchseal/benchseal/plan"
	"github.com/benchseal/benchseal/schema"
)

// AttachExternal adds a Sigstore bundle made elsewhere (keyed or keyless,
// e.g. by 'cosign attest-blob --bundle') to the bundle at path as a
// referrer of its run manifest, after checking what it signs:
// predicateType artifact.PredicateTypeRun must sign exactly the statement
// the bundle gives; artifact.PredicateTypeVSA must be a PASSED reviewer
// attestation whose subject is the run manifest; artifact.PredicateTypePlan
// must sign the pre-registered plan the run's manifest names. An empty
// predicateType accepts a run signature or a signed plan. It returns the
// referrer's digest and the predicate type attached. The signature itself is
// checked by Verify against the keys or identities the reader trusts, not
// here (this function trusts nobody).
func AttachExternal(ctx context.Context, path string, sb []byte, predicateType string) (string, string, error) {
	pb, err := parseSigstore(sb)
	if err != nil {
		return "", "", fmt.Errorf("attach: %w", err)
	}
	var head struct {
		PredicateType string `json:"predicateType"`
	}
	if err := json.Unmarshal(pb.payload, &head); err != nil {
		return "", "", fmt.Errorf("attach: statement: %w", err)
	}
	if predicateType == "" && (head.PredicateType == artifact.PredicateTypeRun || head.PredicateType == artifact.PredicateTypePlan) {
		predicateType = head.PredicateType
	}
	if head.PredicateType != predicateType {
		want := strconv.Quote(predicateType)
		if predicateType == "" {
			want = strconv.Quote(artifact.PredicateTypeRun) + " (a run signature) or " + strconv.Quote(artifact.PredicateTypePlan) + " (a signed plan)"
		}
		return "", "", fmt.Errorf("attach: the Sigstore bundle signs predicate type %q, want %s", head.PredicateType, want)
	}
	b, err := artifact.Open(path)
	if err != nil {
		return "", "", err
	}
	md := string(b.RunDescriptor().Digest)
	switch predicateType {
	case artifact.PredicateTypeRun:
		want, err := artifact.MarshalStatement(b.Statement())
		if err == nil {
			err = checkStatement(pb.payload, want)
		}
		if err != nil {
			b.Close()
			return "", "", fmt.Errorf("attach: %s: %w", ReasonWrongPayload, err)
		}
	case artifact.PredicateTypeVSA:
		a, err := attest.Parse(pb.payload)
		if err == nil {
			err = checkAttestationSubject(a, md)
		}
		if err != nil {
			b.Close()
			return "", "", fmt.Errorf("attach: %w", err)
		}
	case artifact.PredicateTypePlan:
		_, d, err := plan.ParseStatement(pb.payload)
		if err == nil && (b.Manifest().Plan == nil || "sha256:"+b.Manifest().Plan.SHA256 != d) {
			err = fmt.Errorf("%s: the signature is over plan %s, the run's manifest names %s", ReasonWrongPayload, d, planName(b.Manifest().Plan))
		}
		if err != nil {
			b.Close()
			return "", "", fmt.Errorf("attach: %w", err)
		}
	default:
		b.Close()
		return "", "", fmt.Errorf("attach: predicate type %q cannot be attached", predicateType)
	}
	b.Close()
	d, err := artifact.Attach(ctx, path, sb, predicateType)
	if err != nil {
		return "", "", err
	}
	return string(d.Digest), predicateType, nil
}

func planName(p *schema.PlanRef) string {
	if p == nil {
		return "no plan"
	}
	return "sha256:" + p.SHA256
}
