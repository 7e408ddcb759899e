package verify

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/attest"
	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/reproduce/rerun"
	"github.com/benchseal/benchseal/stats"
)

// AttestationResult describes one reviewer attestation found in the
// bundle: who signed it (when verified), when they verified the bundle and
// which levels they vouch for.
type AttestationResult struct {
	// Source is "referrer <digest>".
	Source string `json:"source"`
	// Verified is true when a required reviewer's signature over a VSA for
	// this exact run manifest verified.
	Verified bool `json:"verified"`
	// Reviewer names the signer that verified it ("key sha256:…" or the
	// certificate identity and issuer).
	Reviewer string `json:"reviewer,omitempty"`
	// Hint is the unauthenticated key hint of an unverified attestation.
	Hint string `json:"hint,omitempty"`
	// VerifierID, TimeVerified, ResourceURI, Result, Levels and Policy are
	// the attestation's own statements (unauthenticated when Verified is
	// false).
	VerifierID   string   `json:"verifierId,omitempty"`
	TimeVerified string   `json:"timeVerified,omitempty"`
	ResourceURI  string   `json:"resourceUri,omitempty"`
	Result       string   `json:"verificationResult,omitempty"`
	Levels       []string `json:"verifiedLevels,omitempty"`
	Policy       string   `json:"policy,omitempty"`
	// Reproduction is the reproduction the attestation names (level
	// BENCHSEAL_REPRODUCED): the reproduction run's manifest, the margin
	// and every claim's verdict.
	Reproduction *attest.Reproduction `json:"reproduction,omitempty"`
	// ReproductionChecked is true when the reproduction is carried as a
	// reproduction referrer and its records were checked against the
	// original's (checkCarriedReproduction: it names this run, is another
	// run, and is of the forced output length when the test forces it).
	// Its verdicts are still the reviewer's word: benchseal attest
	// --reproduction recomputes them.
	ReproductionChecked bool   `json:"reproductionChecked,omitempty"`
	Reason              string `json:"reason,omitempty"`
}

// checkAttestations lists every reviewer attestation (VSA referrer) and,
// when the policy requires reviewers, checks that each one signed a PASSED
// VSA whose subject is this run manifest.
func (v *Verifier) checkAttestations(ctx context.Context, b *artifact.Bundle, p Policy, res *Result) *CheckError {
	refs := b.ReferrersOf(artifact.PredicateTypeVSA)
	md := string(b.RunDescriptor().Digest)
	digest, _ := hex.DecodeString(strings.TrimPrefix(md, "sha256:"))
	satisfied := make([]bool, len(p.RequireAttestations))
	if err := checkRequiredLevels(p); err != nil {
		return res.fail(CheckAttestations, md, err)
	}
	for _, r := range refs {
		if ctx.Err() != nil {
			return nil
		}
		data, err := b.ReadSignature(r)
		if err != nil {
			_, blob, cause := artifactErr(err)
			return res.fail(CheckAttestations, blob, cause)
		}
		ar, sb, a, err := readAttestation("referrer "+string(r.Descriptor.Digest), data)
		if err == nil {
			err = checkAttestationSubject(a, md)
		}
		if err == nil {
			err = checkAttestationInputs(a, res.Signatures)
		}
		if err == nil && a.Reproduction != nil {
			err = a.Reproduction.CheckCovers(b.Claims())
		}
		if err != nil {
			ar.Reason = err.Error()
			res.Attestations = append(res.Attestations, ar)
			continue
		}
		if len(p.RequireAttestations) == 0 {
			ar.Reason = "signature not checked (no reviewer required)"
			res.Attestations = append(res.Attestations, ar)
			continue
		}
		who, idx, err := v.verifyAny(sb, p.RequireAttestations, digest)
		if err != nil {
			ar.Reason = err.Error()
			res.Attestations = append(res.Attestations, ar)
			continue
		}
		reviewer := who.signer.String()
		if who.signer.Identity != nil {
			reviewer = "identity " + who.who()
		}
		if missing := missingLevels(a, p.RequireLevels); len(missing) > 0 {
			ar.Reviewer = reviewer
			ar.Reason = fmt.Sprintf("signed by %s, but lists %s, not the required %s", reviewer, strings.Join(a.Levels, ", "), strings.Join(missing, ", "))
			res.Attestations = append(res.Attestations, ar)
			continue
		}
		if err := checkAttestedReproduction(a.Reproduction, b, p, &ar.ReproductionChecked); err != nil {
			ar.Reviewer = reviewer
			ar.Reason = fmt.Sprintf("signed by %s, but %v", reviewer, err)
			res.Attestations = append(res.Attestations, ar)
			continue
		}
		ar.Verified, ar.Reviewer = true, reviewer
		satisfied[idx] = true
		res.Attestations = append(res.Attestations, ar)
	}
	listReproductions(b, res)
	if len(p.RequireAttestations) == 0 {
		res.skip(CheckAttestations, fmt.Sprintf("no reviewer required; %d attestation(s) listed, signatures not checked", len(refs)))
		return nil
	}
	var missing []string
	for i, ok := range satisfied {
		if !ok {
			missing = append(missing, p.RequireAttestations[i].String())
		}
	}
	if len(missing) > 0 {
		what := "PASSED attestation"
		if len(p.RequireLevels) > 0 {
			what = "PASSED attestation at level " + strings.Join(p.RequireLevels, " and ")
		}
		err := fmt.Errorf("no valid %s over run manifest %s by %s", what, md, strings.Join(missing, ", "))
		var reasons []string
		for _, a := range res.Attestations {
			if !a.Verified && a.Reason != "" {
				reasons = append(reasons, a.Source+": "+a.Reason)
			}
		}
		if len(reasons) > 0 {
			err = fmt.Errorf("%w (%s)", err, strings.Join(reasons, "; "))
		}
		return res.fail(CheckAttestations, md, err)
	}
	res.pass(CheckAttestations, attestedReason(res.Attestations, len(refs)))
	return nil
}

// checkRequiredLevels refuses a policy whose required levels could not be
// checked: levels without a reviewer to require them of (they would pass
// unchecked), or a level benchseal never writes (it could never pass).
func checkRequiredLevels(p Policy) error {
	if len(p.RequireLevels) > 0 && len(p.RequireAttestations) == 0 {
		return fmt.Errorf("a required level needs a required reviewer: levels %s are required of nobody", strings.Join(p.RequireLevels, ", "))
	}
	for _, l := range p.RequireLevels {
		if !slices.Contains(attest.Levels, l) {
			return fmt.Errorf("unknown level %q: benchseal writes %s", l, strings.Join(attest.Levels, ", "))
		}
	}
	return nil
}

// missingLevels returns the levels of want the attestation does not list.
func missingLevels(a *attest.Attestation, want []string) []string {
	var out []string
	for _, l := range want {
		if !a.Has(l) {
			out = append(out, l)
		}
	}
	return out
}

// checkAttestationSubject binds an attestation to this run: its subject and
// resource URI name the run manifest digest, and it says PASSED.
func checkAttestationSubject(a *attest.Attestation, manifestDigest string) error {
	switch {
	case a.ManifestDigest != manifestDigest:
		return fmt.Errorf("%s: subject %s is not the run manifest %s", ReasonWrongPayload, a.ManifestDigest, manifestDigest)
	case !strings.HasSuffix(a.ResourceURI, manifestDigest):
		return fmt.Errorf("%s: resourceUri %q does not name the run manifest %s", ReasonWrongPayload, a.ResourceURI, manifestDigest)
	case a.Result != attest.ResultPassed:
		return fmt.Errorf("verificationResult %s", a.Result)
	}
	return nil
}

// checkAttestationInputs binds an attestation to this run's publisher: a
// reviewer vouches for a run as published by the signer whose signature
// they verified, so the attestation applies only when its inputAttestations
// name (by sha256) a publisher signature that verified in this run under a
// pinned key or identity. Without this, stripping the publisher's signature
// and re-signing with another key would pass the reviewer's word on to a
// publisher the reviewer never checked.
func checkAttestationInputs(a *attest.Attestation, sigs []SignatureResult) error {
	verified := map[string]bool{}
	for _, s := range sigs {
		if s.Verified && strings.HasPrefix(s.Digest, "sha256:") {
			verified[strings.TrimPrefix(s.Digest, "sha256:")] = true
		}
	}
	var named []string
	for _, in := range a.Inputs {
		d := in.Digest["sha256"]
		if d == "" {
			continue
		}
		if verified[d] {
			return nil
		}
		named = append(named, "sha256:"+d)
	}
	if len(named) == 0 {
		return fmt.Errorf("%s: its inputAttestations name no publisher signature by sha256 digest", ReasonNotApplicable)
	}
	return fmt.Errorf("%s: the publisher signature(s) it vouches for (inputAttestations %s) did not verify in this run under a pinned key or identity (%d verified here)",
		ReasonNotApplicable, strings.Join(named, ", "), len(verified))
}

// AttestOptions says who attests and how the attestation names the bundle.
type AttestOptions struct {
	// VerifierID names the reviewer in verifier.id; default: the signing
	// key's fingerprint.
	VerifierID string
	// ResourceURI names the bundle (an OCI reference ending in the manifest
	// digest); default attest.ResourceURI(run id, digest).
	ResourceURI string
	// Version is benchseal's version, recorded in the policy URI.
	Version string
	// Now is the verification time (tests pin it); default time.Now.
	Now func() time.Time
	// Reproduction, when set, attests a reproduction of the bundle
	// (level BENCHSEAL_REPRODUCED): Attest refuses unless it reproduces
	// this bundle's run manifest and every claim is REPRODUCED.
	Reproduction *Reproduction
}

// Reproduction is a reproduction's verdicts as the reviewer computed them
// (reproduce.Evaluate), to be attested with the bundle.
type Reproduction struct {
	// Of is the run-manifest digest of the original the verdicts were
	// computed against; Attest checks it is the bundle it verified.
	Of string
	// Summary is what the attestation states.
	Summary attest.Reproduction
	// Withheld says why the reproduction's overall verdict cannot be
	// REPRODUCED whatever its claims' verdicts (reproduce's
	// Report.Withheld: another model, simulated against measured
	// evidence, fewer repeats, only counts and flags): Attest refuses
	// the level while it is not empty.
	Withheld []string
	// RepeatsNeeded is, per claim of Summary (same order; nil: none
	// stated), the reproduction repeats an INCONCLUSIVE claim needs to be
	// decided (reproduce's ClaimVerdict.RepeatsNeeded; 0: none stated),
	// and Repeats the repeats the reproduction ran. Attest's refusal
	// states them; they are not attested.
	RepeatsNeeded []int
	Repeats       int
}

// ErrNotReproduced is returned by Attest for a reproduction with a claim
// that is not REPRODUCED: the level is not granted, and nothing is signed.
var ErrNotReproduced = errors.New("not every claim was reproduced")

// AttestResult is what Attest made.
type AttestResult struct {
	// Verification is the full verification that preceded the attestation.
	Verification *Result
	// Statement is the signed in-toto statement and SigstoreBundle the
	// signature; Referrer is the descriptor of the new referrer manifest.
	Statement      []byte
	SigstoreBundle []byte
	Referrer       string
	Levels         []string
	// Withheld says, one line per level not reached, why (a level the
	// run could not reach for lack of a plan is not listed).
	Withheld []string
}

// ErrNotAttestable is returned when the bundle does not verify (or the
// claims were not recomputed) and so must not be attested.
var ErrNotAttestable = errors.New("refusing to attest")

// Attest verifies the bundle at path in full under policy p — publisher
// signature, every digest, every record, and the recomputation of every
// claim (the verifier must have a ClaimChecker) — and only when it
// verified signs a VSA with s and adds it as its own referrer of the run
// manifest. The levels are the ones the verification reached.
func (v *Verifier) Attest(ctx context.Context, path string, p Policy, s *artifact.Signer, o AttestOptions) (*AttestResult, error) {
	if p.AllowUnsignedUnsafe {
		return nil, errcond.Errorf(ErrNotAttestable, "refusing to attest: an unsigned bundle cannot be attested")
	}
	if v.checker == nil {
		return nil, errcond.Errorf(ErrNotAttestable, "refusing to attest: no claim checker: the claims must be recomputed before attesting")
	}
	res, err := v.Verify(ctx, path, p)
	if err != nil || res == nil || !res.Verified || !res.Authenticated {
		if err == nil {
			err = errors.New("not verified")
		}
		return &AttestResult{Verification: res}, errcond.Errorf(ErrNotAttestable, "refusing to attest: %w", err)
	}
	if r := o.Reproduction; r != nil {
		if err := checkReproductionOf(r, res.ManifestDigest, path); err != nil {
			return &AttestResult{Verification: res}, err
		}
	}
	stmt, levels, err := v.attestStatement(res, p, s.Public().Fingerprint(), o)
	if err != nil {
		return nil, err
	}
	sb, err := artifact.SignStatement(ctx, stmt, s)
	if err != nil {
		return nil, err
	}
	rd, err := artifact.Attach(ctx, path, sb, artifact.PredicateTypeVSA)
	if err != nil {
		return nil, err
	}
	return &AttestResult{Verification: res, Statement: stmt, SigstoreBundle: sb, Referrer: string(rd.Digest), Levels: levels, Withheld: withheldLevels(res)}, nil
}

// checkReproductionOf refuses a reproduction of another run than the one
// verified, one with a claim that is not REPRODUCED (listing them), one
// one whose setup withholds the level (Withheld), one the level's rule
// refuses (attest.Reproduction.CheckLevel) and one that
// does not judge exactly the bundle's claims (CheckCovers).
func checkReproductionOf(r *Reproduction, manifestDigest, path string) error {
	if r.Of != manifestDigest {
		return errcond.Errorf(ErrNotAttestable, "refusing to attest: the reproduction's verdicts are of run manifest %s, not of this bundle's %s", r.Of, manifestDigest)
	}
	if len(r.Summary.Claims) == 0 {
		return errcond.Errorf(ErrNotReproduced, "not every claim was reproduced: the reproduction judged no claim")
	}
	// The setup's reason comes first: it withholds the level whatever the
	// claims' verdicts, which a short reproduction leaves INCONCLUSIVE.
	if len(r.Withheld) > 0 {
		return errcond.Errorf(ErrNotReproduced, "not every claim was reproduced: %s not granted: %s", attest.LevelReproduced, strings.Join(r.Withheld, "; "))
	}
	if bad := r.Summary.NotReproduced(); len(bad) > 0 {
		return errcond.Errorf(ErrNotReproduced, "not every claim was reproduced: %s not granted: %s", attest.LevelReproduced, notReproducedText(r, len(bad)))
	}
	if err := r.Summary.CheckLevel(); err != nil {
		return errcond.Errorf(ErrNotReproduced, "not every claim was reproduced: %s not granted: %w", attest.LevelReproduced, err)
	}
	b, err := artifact.Open(path)
	if err != nil {
		return err
	}
	defer b.Close()
	if err := r.Summary.CheckCovers(b.Claims()); err != nil {
		return errcond.Errorf(ErrNotReproduced, "not every claim was reproduced: %s not granted: %w", attest.LevelReproduced, err)
	}
	return nil
}

// notReproducedText says, over several lines, why a reproduction with
// bad claims not REPRODUCED is refused: the count of each verdict; for
// INCONCLUSIVE claims that they are not NOT REPRODUCED (the runs did not
// decide either way) and the most reproduction repeats any of them needs
// (above stats.ExactLimit, the most reproduce searches, only the
// publisher's repeats can decide); then one claim per line, with the
// repeats it needs.
func notReproducedText(r *Reproduction, bad int) string {
	counts := map[string]int{}
	need, beyond := 0, 0
	for i, c := range r.Summary.Claims {
		counts[c.Verdict]++
		if c.Verdict != attest.VerdictInconclusive || i >= len(r.RepeatsNeeded) {
			continue
		}
		if n := r.RepeatsNeeded[i]; n > stats.ExactLimit {
			beyond++
		} else {
			need = max(need, n)
		}
	}
	var b strings.Builder
	fmt.Fprintf(&b, "%d of %d claim(s) are not REPRODUCED (%d %s, %d %s, %d %s)", bad, len(r.Summary.Claims),
		counts[attest.VerdictReproduced], attest.VerdictReproduced, counts[attest.VerdictNotReproduced], attest.VerdictNotReproduced,
		counts[attest.VerdictInconclusive], attest.VerdictInconclusive)
	if n := counts[attest.VerdictInconclusive]; n > 0 {
		fmt.Fprintf(&b, "\n  INCONCLUSIVE is not NOT REPRODUCED: the repeats did not decide %d claim(s) either way", n)
		if need > 0 {
			ran := ""
			if r.Repeats > 0 {
				ran = fmt.Sprintf(" (this one ran %d)", r.Repeats)
			}
			them := "them"
			if beyond > 0 {
				them = fmt.Sprintf("%d of them", n-beyond)
			}
			fmt.Fprintf(&b, "; a reproduction with %d repeats%s may decide %s (benchseal reproduce --repeats %d)", need, ran, them, need)
		}
		if beyond > 0 {
			fmt.Fprintf(&b, "; even %d reproduction repeats would not decide %d: the publisher must provide more repeats", stats.ExactLimit, beyond)
		}
	}
	for i, c := range r.Summary.Claims {
		if c.Verdict == attest.VerdictReproduced {
			continue
		}
		fmt.Fprintf(&b, "\n  %s %s: %s", c.Point, c.Metric, c.Verdict)
		n := 0
		if i < len(r.RepeatsNeeded) {
			n = r.RepeatsNeeded[i]
		}
		switch {
		case n > stats.ExactLimit:
			fmt.Fprintf(&b, " (more than %d reproduction repeats needed)", stats.ExactLimit)
		case n > 0:
			fmt.Fprintf(&b, " (%d reproduction repeats needed)", n)
		}
	}
	return b.String()
}

// withheldLevels says why a verified result does not reach
// BENCHSEAL_RECOMPUTED (the rule of attestStatement); nil when it does.
func withheldLevels(res *Result) []string {
	if c := res.Check(CheckClaims); c != nil && c.Status != StatusPassed {
		return []string{fmt.Sprintf("%s withheld: the claims check was %s (%s)", attest.LevelRecomputed, c.Status, c.Reason)}
	}
	if n := len(res.Unverified); n > 0 {
		names := make([]string, 0, min(n, 3))
		for _, u := range res.Unverified[:min(n, 3)] {
			names = append(names, u.Metric+" of point "+u.Point)
		}
		more := ""
		if n > 3 {
			more = fmt.Sprintf(" and %d more", n-3)
		}
		return []string{fmt.Sprintf("%s withheld: %d claim(s) cannot be recomputed from the records (%s%s; verify lists them as UNVERIFIED)",
			attest.LevelRecomputed, n, strings.Join(names, ", "), more)}
	}
	return nil
}

// attestStatement builds the VSA statement of a verified result.
func (v *Verifier) attestStatement(res *Result, p Policy, keyID string, o AttestOptions) ([]byte, []string, error) {
	levels := []string{attest.LevelIntegrity}
	// Recomputed means every claim recomputed and matched: a claim the
	// records cannot determine (unverified) withholds the level.
	if c := res.Check(CheckClaims); c != nil && c.Status == StatusPassed && len(res.Unverified) == 0 {
		levels = append(levels, attest.LevelRecomputed)
	}
	if c := res.Check(CheckPlan); c != nil && c.Status == StatusPassed {
		levels = append(levels, attest.LevelPlanMatched)
	}
	var repro *attest.Reproduction
	if o.Reproduction != nil {
		// checkReproductionOf passed: every claim is REPRODUCED.
		levels = append(levels, attest.LevelReproduced)
		repro = &o.Reproduction.Summary
	}
	now := time.Now
	if o.Now != nil {
		now = o.Now
	}
	id := o.VerifierID
	if id == "" {
		id = keyID
	}
	uri := o.ResourceURI
	if uri == "" {
		uri = attest.ResourceURI(res.RunID, res.ManifestDigest)
	}
	q := url.Values{}
	if o.Version != "" {
		q.Set("benchseal", o.Version)
	}
	if len(res.Claims) > 0 && res.Claims[0].Definitions != "" {
		q.Set("definitions", res.Claims[0].Definitions)
	}
	pol := attest.Descriptor{URI: attest.PolicyURI}
	if res.Plan != nil && res.Plan.Digest != "" {
		q.Set("plan", res.Plan.Digest)
		pol.Digest = map[string]string{"sha256": strings.TrimPrefix(res.Plan.Digest, "sha256:")}
	}
	if len(q) > 0 {
		pol.URI += "?" + q.Encode()
	}
	var inputs []attest.Descriptor
	for _, s := range res.Signatures {
		if s.Verified && s.Digest != "" {
			inputs = append(inputs, attest.Descriptor{URI: s.Source, Digest: map[string]string{"sha256": strings.TrimPrefix(s.Digest, "sha256:")}})
		}
	}
	stmt, err := attest.Statement(attest.Summary{
		RunID: res.RunID, ManifestDigest: res.ManifestDigest, VerifierID: id, TimeVerified: now(),
		ResourceURI: uri, Policy: pol, Inputs: inputs, Levels: levels, Reproduction: repro,
	})
	return stmt, levels, err
}

// DescribeAttestation reads a reviewer attestation's Sigstore bundle
// without checking its signature (for inspect): the key hint and what the
// attestation says. Reason is set when it cannot be read.
func DescribeAttestation(source string, data []byte) AttestationResult {
	ar, _, _, err := readAttestation(source, data)
	ar.Reason = "signature not checked"
	if err != nil {
		ar.Reason = err.Error()
	}
	return ar
}

// readAttestation parses a reviewer attestation's Sigstore bundle and its
// statement, filling what it says into an AttestationResult. Nothing is
// verified.
func readAttestation(source string, data []byte) (AttestationResult, *sigstoreBundle, *attest.Attestation, error) {
	ar := AttestationResult{Source: source}
	sb, err := parseSigstore(data)
	if sb != nil {
		ar.Hint = sb.hint
	}
	if err != nil {
		return ar, sb, nil, err
	}
	a, err := attest.Parse(sb.payload)
	if err != nil {
		return ar, sb, nil, err
	}
	ar.VerifierID, ar.TimeVerified, ar.ResourceURI = a.VerifierID, a.TimeVerified.Format(time.RFC3339), a.ResourceURI
	ar.Result, ar.Levels, ar.Policy, ar.Reproduction = a.Result, a.Levels, a.Policy.URI, a.Reproduction
	return ar, sb, a, nil
}

// ReproductionResult is one reproduction referrer the bundle carries.
type ReproductionResult struct {
	// RunManifest is the reproduction's run manifest digest (pull or
	// extract it to verify the reproduction as a bundle of its own);
	// ManifestJSON its manifest.json digest, which an attestation at
	// BENCHSEAL_REPRODUCED names; RunID its run id.
	RunManifest  string `json:"runManifest"`
	ManifestJSON string `json:"manifestJson"`
	RunID        string `json:"runId"`
	// Attested is true when an attestation whose signature verified
	// (a required reviewer's) names this reproduction.
	Attested bool `json:"attested"`
}

// listReproductions lists the bundle's reproduction referrers, each
// marked when a verified attestation names it. Carrying a reproduction
// does not change the original's verdict.
func listReproductions(b *artifact.Bundle, res *Result) {
	for _, r := range b.Reproductions() {
		rr := ReproductionResult{RunManifest: string(r.RunDescriptor.Digest), ManifestJSON: string(r.ManifestJSONDigest()), RunID: r.RunID()}
		for _, a := range res.Attestations {
			if a.Verified && a.Reproduction != nil && "sha256:"+a.Reproduction.RunManifest.Digest["sha256"] == rr.ManifestJSON {
				rr.Attested = true
			}
		}
		res.Reproductions = append(res.Reproductions, rr)
	}
}

// checkAttestedReproduction applies the policy to an attestation whose
// signature verified: when the policy requires BENCHSEAL_REPRODUCED and
// the bundle carries reproduction referrers, the reproduction the
// attestation names (by manifest.json digest) must be one of them, and
// checkCarriedReproduction must accept it (*checked is then set). A
// bundle without reproduction referrers is checked on the attestation
// alone, as before referrers could carry reproductions.
func checkAttestedReproduction(r *attest.Reproduction, b *artifact.Bundle, p Policy, checked *bool) error {
	repros := b.Reproductions()
	if r == nil || len(repros) == 0 || !slices.Contains(p.RequireLevels, attest.LevelReproduced) {
		return nil
	}
	want := "sha256:" + r.RunManifest.Digest["sha256"]
	var have []string
	for _, rp := range repros {
		if string(rp.ManifestJSONDigest()) == want {
			err := checkCarriedReproduction(b, rp)
			*checked = err == nil
			return err
		}
		have = append(have, string(rp.ManifestJSONDigest()))
	}
	return fmt.Errorf("the reproduction it attests (manifest.json %s) is not among the bundle's reproduction referrers (manifest.json %s)", want, strings.Join(have, ", "))
}

// checkCarriedReproduction applies to a carried reproduction the rules
// reproduce.Evaluate applies to a reproduction before judging any claim
// (package rerun), read from the bundle's own blobs: it names this run
// manifest as its original (reproduces.run_manifest), it is another run
// (its own run id, start and records: rerun.CheckAnotherRun), and when
// its test forces the output length its ok records reach it
// (rerun.CheckForcedLength, with its workload.jsonl). Without them a
// reviewer's key could attest the original's own records re-labelled as
// a reproduction. The verdicts are not recomputed here.
func checkCarriedReproduction(b *artifact.Bundle, rp artifact.Reproduction) error {
	what := fmt.Sprintf("the reproduction it attests (reproduction referrer %s)", rp.RunDescriptor.Digest)
	rb, err := b.OpenReproduction(rp)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	defer rb.Close()
	md := string(b.RunDescriptor().Digest)
	if r := rb.Manifest().Reproduces; r == nil || r.RunManifest != md {
		named := "none"
		if r != nil {
			named = r.RunManifest
		}
		return fmt.Errorf("%s names another original: reproduces.run_manifest %s, this bundle's run manifest is %s", what, named, md)
	}
	if err := rerun.CheckAnotherRun(b, rb); err != nil {
		return fmt.Errorf("%s is not a reproduction: %w", what, err)
	}
	var wl io.Reader
	for _, l := range rb.Layers() {
		if l.Kind == artifact.KindWorkload {
			rc, err := rb.OpenLayer(l)
			if err != nil {
				return fmt.Errorf("%s: %w", what, err)
			}
			defer rc.Close()
			wl = rc
			break
		}
	}
	if err := rerun.CheckForcedLength(rb, wl); err != nil {
		return fmt.Errorf("%s is not a reproduction: %w", what, err)
	}
	return nil
}

// attestedReason is the passed attestation check's reason: how many of
// the n attestations listed meet the requirement. "verified" alone would
// read the others as failed signatures; most are valid ones that lack a
// required level or reviewer, each listed with why.
func attestedReason(as []AttestationResult, n int) string {
	verified := 0
	for _, a := range as {
		if a.Verified {
			verified++
		}
	}
	why := ""
	if verified < n {
		why = "; each other one is listed with why it does not"
	}
	return fmt.Sprintf("every required reviewer attested (%d of %d attestations meet the requirement%s)", verified, n, why)
}
