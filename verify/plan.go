package verify

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/plan"
)

// PlanResult is the outcome of the plan check.
type PlanResult struct {
	// Digest is the plan's canonical digest ("sha256:<hex>").
	Digest string `json:"digest"`
	Title  string `json:"title,omitempty"`
	// Source is "policy" (given by the caller) or "referrer <digest>".
	Source string `json:"source"`
	// SignedBy names the publisher that signed the plan; empty when the
	// plan is unsigned or its signature did not verify (Reason says why).
	SignedBy string `json:"signedBy,omitempty"`
	// SignedAt is the earliest verified timestamp of the plan signature
	// (RFC 3339), empty when the signature carries none (offline keyed
	// signatures): then the pre-registration time is not proven.
	SignedAt string `json:"signedAt,omitempty"`
	// Deviations lists every way the run departs from the plan.
	Deviations []plan.Deviation `json:"deviations,omitempty"`
	Reason     string           `json:"reason,omitempty"`
	// Plan is the plan checked (benchseal reproduce executes it again);
	// not part of the serialised result, which names it by Digest.
	Plan *plan.Plan `json:"-"`
}

// signedPlan is a plan with its signature status.
type signedPlan struct {
	p      *plan.Plan
	digest string
	source string
	by     *signedBy
	reason string
}

// checkPlan compares the run with its pre-registered plan: the one the
// policy gives (with its signature, if any), else one carried in the bundle
// as a plan referrer. Without a plan the check is skipped and says the run
// was not pre-registered (or names the plan it claims and that it was not
// provided); with Policy.Plan set, a missing or unsigned plan, a failed
// signature or any deviation rejects the bundle.
func (v *Verifier) checkPlan(ctx context.Context, b *artifact.Bundle, p Policy, res *Result) *CheckError {
	m := b.Manifest()
	sp, err := v.findPlan(b, p)
	if err != nil {
		return res.fail(CheckPlan, "", err)
	}
	if sp == nil {
		if m.Plan != nil {
			res.skip(CheckPlan, fmt.Sprintf("the run names pre-registered plan sha256:%s, but no plan was given (--plan) or found in the bundle", m.Plan.SHA256))
			res.Warnings = append(res.Warnings, fmt.Sprintf("UNVERIFIED: the run claims to follow pre-registered plan sha256:%s; give the plan (--plan) to check it", m.Plan.SHA256))
		} else {
			res.skip(CheckPlan, "no pre-registered plan: the run was not pre-registered")
		}
		return nil
	}
	pr := &PlanResult{Digest: sp.digest, Title: sp.p.Title, Source: sp.source, Reason: sp.reason, Plan: sp.p}
	res.Plan = pr
	if sp.by != nil {
		pr.SignedBy = sp.by.who()
		if t := sp.by.earliest(); !t.IsZero() {
			pr.SignedAt = t.Format(time.RFC3339)
		}
	}
	// The plan comes from the publisher: it is checked (load limits
	// included) before anything is built from it.
	if err := sp.p.Validate(); err != nil {
		return res.fail(CheckPlan, sp.digest, err)
	}
	var cells []plan.Cell
	for _, l := range b.RecordLayers() {
		cells = append(cells, plan.Cell{Point: l.Point, Repeat: l.Repeat, Records: l.Records})
	}
	devs := sp.p.Check(sp.digest, m, b.Claims(), cells)
	if sp.by != nil && pr.SignedAt != "" && m.StartTime != "" {
		signed := sp.by.earliest()
		if start, err := time.Parse(time.RFC3339, m.StartTime); err == nil && !signed.Before(start) {
			devs = append(devs, plan.Deviation{Kind: plan.DevSignedLate, Detail: fmt.Sprintf("plan signed at %s, run started %s", pr.SignedAt, m.StartTime)})
		}
	}
	pr.Deviations = devs
	var problems []string
	if sp.by == nil && !p.AllowUnsignedUnsafe {
		problems = append(problems, "plan not signed by a trusted publisher: "+sp.reason)
	}
	for _, d := range devs {
		problems = append(problems, d.String())
	}
	if len(problems) > 0 {
		ce := res.fail(CheckPlan, sp.digest, fmt.Errorf("%d deviation(s) from the pre-registered plan: %s", len(problems), strings.Join(problems, "; ")))
		res.check(CheckPlan).Problems = problems
		return ce
	}
	when := "no signed timestamp: the pre-registration time is not proven"
	if pr.SignedAt != "" {
		when = "signed at " + pr.SignedAt + ", before the run started"
	}
	res.pass(CheckPlan, fmt.Sprintf("run executed pre-registered plan %s exactly (signed by %s; %s)", sp.digest, pr.SignedBy, when))
	return nil
}

// findPlan returns the policy's plan, else the bundle's plan referrer, with
// its signature checked against the trusted publishers.
func (v *Verifier) findPlan(b *artifact.Bundle, p Policy) (*signedPlan, error) {
	if p.Plan != nil {
		d, err := p.Plan.Digest()
		if err != nil {
			return nil, err
		}
		sp := &signedPlan{p: p.Plan, digest: d, source: "policy", reason: "no plan signature given"}
		if p.PlanSignature != nil {
			v.verifyPlanSignature(sp, p.PlanSignature, p.AllowUnsignedUnsafe)
		} else {
			// A plan referrer in the bundle may carry the signature.
			for _, r := range b.ReferrersOf(artifact.PredicateTypePlan) {
				data, err := b.ReadSignature(r)
				if err != nil {
					return nil, err
				}
				v.verifyPlanSignature(sp, data, p.AllowUnsignedUnsafe)
				if sp.by != nil {
					break
				}
			}
		}
		return sp, nil
	}
	refs := b.ReferrersOf(artifact.PredicateTypePlan)
	if len(refs) == 0 {
		return nil, nil
	}
	var first *signedPlan
	for _, r := range refs {
		data, err := b.ReadSignature(r)
		if err != nil {
			return nil, err
		}
		sb, err := parseSigstore(data)
		if err != nil {
			if first == nil {
				first = &signedPlan{p: &plan.Plan{}, source: "referrer " + string(r.Descriptor.Digest), reason: err.Error()}
			}
			continue
		}
		pl, d, err := plan.ParseStatement(sb.payload)
		if err != nil {
			return nil, fmt.Errorf("plan referrer %s: %w", r.Descriptor.Digest, err)
		}
		sp := &signedPlan{p: pl, digest: d, source: "referrer " + string(r.Descriptor.Digest)}
		v.verifyPlanSignature(sp, data, p.AllowUnsignedUnsafe)
		if sp.by != nil {
			return sp, nil
		}
		if first == nil {
			first = sp
		}
	}
	if first != nil && first.p.Schema == "" {
		return nil, errors.New("plan referrer: " + first.reason)
	}
	return first, nil
}

// verifyPlanSignature checks that data is a Sigstore bundle signing sp's
// plan statement by a trusted publisher, setting sp.by or sp.reason.
func (v *Verifier) verifyPlanSignature(sp *signedPlan, data []byte, unsigned bool) {
	if unsigned {
		sp.reason = "signatures not checked (--allow-unsigned)"
		return
	}
	sb, err := parseSigstore(data)
	if err != nil {
		sp.reason = err.Error()
		return
	}
	_, d, err := plan.ParseStatement(sb.payload)
	if err != nil {
		sp.reason = err.Error()
		return
	}
	if d != sp.digest {
		sp.reason = fmt.Sprintf("%s: the signature is over plan %s, not %s", ReasonWrongPayload, d, sp.digest)
		return
	}
	digest, _ := hex.DecodeString(strings.TrimPrefix(d, "sha256:"))
	who, _, err := v.verifyAny(sb, v.publishers(), digest)
	if err != nil {
		sp.reason = err.Error()
		return
	}
	sp.by, sp.reason = who, ""
}
