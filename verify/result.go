package verify

import (
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/attest"
	"github.com/benchseal/benchseal/schema"
)

// ResultMediaType versions the JSON form of Result.
const ResultMediaType = "application/vnd.benchseal.verify.result.v1+json"

// Names of the checks, in the order Verify runs them (the order of the
// issue's specification). Those the bundle reader performs are artifact's
// names, so an artifact.Error names the check it failed.
const (
	CheckContainer    = artifact.CheckContainer    // the tar or directory is safe to read
	CheckLayout       = artifact.CheckLayout       // oci-layout and index.json
	CheckManifest     = artifact.CheckManifest     // run manifest: artifactType, config, layer media types, limits
	CheckDescriptors  = artifact.CheckDescriptors  // every blob: sha256 only, size and digest while streaming
	CheckSignature    = artifact.CheckSignature    // Sigstore bundles verified by pinned keys only
	CheckStatement    = "statement"                // in-toto statement: payload type, predicate type, subjects, predicate
	CheckUncompressed = artifact.CheckUncompressed // uncompressed digests and sizes, bounded decompression
	CheckSchema       = artifact.CheckSchema       // schema and semantic validation of manifest, claims and records
	CheckConsistency  = "consistency"              // shards cover the plan, warmup present, counts add up
	CheckImport       = "import-rederive"          // an imported run is what its importer derives from the attached source files (ImportChecker)
	CheckClaims       = "claims-recompute"         // every claim recomputes (ClaimChecker)
	CheckPlan         = "plan"                     // the run matches its pre-registered plan
	CheckAttestations = "attestations"             // reviewer attestations (SLSA VSA) by the required reviewers
)

// CheckOrder lists the checks in the order they run.
var CheckOrder = []string{
	CheckContainer, CheckLayout, CheckManifest, CheckDescriptors, CheckSignature,
	CheckStatement, CheckUncompressed, CheckSchema, CheckConsistency, CheckImport, CheckClaims,
	CheckPlan, CheckAttestations,
}

// Statuses of a check.
const (
	StatusPassed  = "passed"
	StatusFailed  = "failed"
	StatusSkipped = "skipped"
)

// Result is the versioned, serialisable record of one verification. Verify
// returns it whether the bundle verified or not; Verified says which.
type Result struct {
	MediaType string `json:"mediaType"`
	Bundle    string `json:"bundle"`
	// Verified is true only when every check passed (or was skipped by an
	// explicit choice) and no check failed.
	Verified bool `json:"verified"`
	// Authenticated is true when a pinned key's signature over this exact
	// run manifest and statement was verified.
	Authenticated bool   `json:"authenticated"`
	RunID         string `json:"runId,omitempty"`
	// Evidence, Model and Hardware say what the run manifest claims the
	// run is (authenticated only when Authenticated is).
	Evidence string `json:"evidence,omitempty"`
	Model    string `json:"model,omitempty"`
	Hardware string `json:"hardware,omitempty"`
	// Trace names the trace a trace replay replayed and its SHA-256
	// (schema.TraceSource.Summary); "" for other runs.
	Trace string `json:"trace,omitempty"`
	// Sessions says what of a session run's conversations is the signer's
	// word (schema.SessionSource.Summary); "" for other runs.
	Sessions string `json:"sessions,omitempty"`
	// ClientBuild and ImporterBuild are the executables that measured and
	// imported the run (client.build, source.importer): the manifest's
	// word, nil when it states none.
	ClientBuild   *schema.Build `json:"clientBuild,omitempty"`
	ImporterBuild *schema.Build `json:"importerBuild,omitempty"`
	// SignerStatement says what of the run rests on its signer's word
	// (schema.SignerStatement): printed beside the evidence class,
	// wherever the verdict is.
	SignerStatement string `json:"signerStatement,omitempty"`
	// Incomplete is true when the run is marked incomplete (its capture
	// was interrupted); its missing requests count as not sent and as
	// misses in SLO attainment, and a warning says so.
	Incomplete       bool                `json:"incomplete"`
	IncompleteReason string              `json:"incompleteReason,omitempty"`
	ManifestDigest   string              `json:"manifestDigest,omitempty"`
	Checks           []CheckResult       `json:"checks"`
	Signatures       []SignatureResult   `json:"signatures"`
	Records          *schema.RunSummary  `json:"records,omitempty"`
	Claims           []schema.ClaimCheck `json:"claims,omitempty"`
	// Plan is the outcome of the plan check (nil: no plan).
	Plan *PlanResult `json:"plan,omitempty"`
	// Attestations lists every reviewer attestation found.
	Attestations []AttestationResult `json:"attestations,omitempty"`
	// Reproductions lists the reproduction referrers the bundle carries.
	Reproductions []ReproductionResult `json:"reproductions,omitempty"`
	// Unverified lists the claims the records cannot determine (outcome
	// not-recomputable): signed, but not checked. A verified bundle may
	// hold them (unless Policy.RequireRecomputable); every output names
	// them "unverified" next to the verdict.
	Unverified []schema.ClaimCheck `json:"unverifiedClaims,omitempty"`
	// UnverifiedExternal lists the results of external evidence
	// (manifest.external, e.g. MLPerf): no record lets them be
	// recomputed, so a verified bundle carries them as the source's word,
	// each labelled UNVERIFIED.
	UnverifiedExternal []ExternalResult `json:"unverifiedExternal,omitempty"`
	Warnings           []string         `json:"warnings,omitempty"`
	// Energy says what the accelerator scrapes' checks found; nil when
	// the run has none or its server state was not checked.
	Energy *EnergyEvidence `json:"energyEvidence,omitempty"`
	// Flagged lists every point × repeat the replay flagged (overloaded,
	// generator-limited, …), claimed or not; nil when the claim checker
	// does not report flags or the records were not replayed.
	Flagged []schema.PointFlags `json:"flaggedPoints,omitempty"`
	// counterCells are the point × repeat pairs whose compared engine
	// counters went down between their scrapes (checkServerState), with
	// the reason: their claims are UNVERIFIED.
	counterCells []schema.CellReason
}

// setFlagged records the replay's flagged points; for a run without
// claims (noClaims), a replay that failed is a warning (with claims, the
// claims check fails on the same error).
func (r *Result) setFlagged(flags []schema.PointFlags, err error, noClaims bool) {
	r.Flagged = flags
	if err != nil && noClaims {
		r.Warnings = append(r.Warnings, "flagged points not determined: the records did not replay: "+err.Error())
	}
}

// ExternalResult is one published result of external evidence.
type ExternalResult struct {
	Kind  string `json:"kind"`
	Key   string `json:"key"`
	Value string `json:"value"`
	// Label is schema.ExternalRef.UnverifiedLabel: "UNVERIFIED (external,
	// as published by …)".
	Label string `json:"label"`
}

// CheckResult is the outcome of one check.
type CheckResult struct {
	Name   string `json:"name"`
	Status string `json:"status"`
	// Reason says why a check failed or was skipped, or what it covered.
	Reason string `json:"reason,omitempty"`
	// Blob names the file, digest or layer a failure is about.
	Blob string `json:"blob,omitempty"`
	// Problems lists validation findings of the schema check.
	Problems []string `json:"problems,omitempty"`
}

// SignatureResult describes one signature found in the bundle (or given
// detached).
type SignatureResult struct {
	// Source is "referrer <digest>" or "detached <n>".
	Source string `json:"source"`
	// Digest is the sha256 of the Sigstore bundle JSON.
	Digest string `json:"digest,omitempty"`
	// Hint is the unauthenticated key hint of the Sigstore bundle, as a
	// fingerprint when it has that form.
	Hint string `json:"hint,omitempty"`
	// Key is the fingerprint of the pinned key that verified it.
	Key string `json:"key,omitempty"`
	// Identity and Issuer are the certificate's subject alternative name
	// and OIDC issuer of a verified keyless signature.
	Identity string `json:"identity,omitempty"`
	Issuer   string `json:"issuer,omitempty"`
	// Times are the verified signing timestamps (transparency log or
	// RFC 3161), RFC 3339; none for offline keyed signatures.
	Times    []string `json:"times,omitempty"`
	Verified bool     `json:"verified"`
	Reason   string   `json:"reason,omitempty"`
}

// ErrRejected is the root of every rejection: the bundle was checked and
// failed.
var ErrRejected = errors.New("bundle rejected")

// CheckError is a rejection by one check, naming the blob it is about. It
// wraps ErrRejected.
type CheckError struct {
	Check string
	Blob  string
	Err   error
}

// Error formats the check, the blob and the cause.
func (e *CheckError) Error() string {
	if e.Blob != "" {
		return fmt.Sprintf("%s check failed: %s: %v", e.Check, e.Blob, e.Err)
	}
	return fmt.Sprintf("%s check failed: %v", e.Check, e.Err)
}

// Unwrap returns the cause and ErrRejected.
func (e *CheckError) Unwrap() []error { return []error{e.Err, ErrRejected} }

func (r *Result) check(name string) *CheckResult {
	for i := range r.Checks {
		if r.Checks[i].Name == name {
			return &r.Checks[i]
		}
	}
	return nil
}

// Check returns the result of the named check, or nil.
func (r *Result) Check(name string) *CheckResult { return r.check(name) }

func newResult(path string) *Result {
	r := &Result{MediaType: ResultMediaType, Bundle: path, Signatures: []SignatureResult{}}
	for _, n := range CheckOrder {
		r.Checks = append(r.Checks, CheckResult{Name: n, Status: StatusSkipped, Reason: "not reached"})
	}
	return r
}

func (r *Result) pass(name, reason string) {
	c := r.check(name)
	c.Status, c.Reason = StatusPassed, reason
}

func (r *Result) skip(name, reason string) {
	c := r.check(name)
	c.Status, c.Reason = StatusSkipped, reason
}

func (r *Result) fail(name, blob string, err error) *CheckError {
	c := r.check(name)
	c.Status, c.Reason, c.Blob = StatusFailed, err.Error(), blob
	return &CheckError{Check: name, Blob: blob, Err: err}
}

// finish closes the result: Verified when nothing failed.
func (r *Result) finish(errs []error) error {
	if r.RunID != "" {
		var v schema.Vouch
		for _, s := range r.Signatures {
			if s.Verified && s.Identity != "" {
				v.Identities = append(v.Identities, s.Identity+" (issuer "+s.Issuer+")")
			}
		}
		for _, a := range r.Attestations {
			switch rp := a.Reproduction; {
			case a.Verified && rp != nil && slices.Contains(a.Levels, attest.LevelReproduced):
				mj := "sha256:" + rp.RunManifest.Digest["sha256"]
				carried := slices.ContainsFunc(r.Reproductions, func(rr ReproductionResult) bool { return rr.ManifestJSON == mj })
				v.Reproductions = append(v.Reproductions, schema.ReviewerReproduction{Reviewer: a.Reviewer, ManifestJSON: mj, Limits: rp.Limits, Carried: carried})
			case a.Verified:
				v.Reviewers = append(v.Reviewers, a.Reviewer)
			}
		}
		r.SignerStatement = schema.SignerStatement(r.Evidence, v)
	}
	for _, c := range r.Checks {
		if c.Status == StatusFailed {
			r.Verified = false
			r.Authenticated = false
			return errors.Join(errs...)
		}
	}
	r.Verified = true
	return nil
}

// artifactErr splits an error of the bundle reader into the check it
// names (artifact's check names are verify's), the blob and the cause; an
// error naming no check of verify's (the bundle could not be read at all)
// fails the container check.
func artifactErr(err error) (check, blob string, cause error) {
	var ae *artifact.Error
	if errors.As(err, &ae) && slices.Contains(CheckOrder, ae.Check) {
		return ae.Check, ae.Blob, ae.Err
	}
	return CheckContainer, "", err
}

func (r *Result) openFailed(err error) error {
	check, blob, cause := artifactErr(err)
	structural := []string{CheckContainer, CheckLayout, CheckManifest}
	for _, n := range structural {
		if n == check {
			break
		}
		r.pass(n, "")
	}
	ce := r.fail(check, blob, cause)
	return r.finish([]error{ce})
}

// EnergyEvidence is the outcome of the checks on a run's accelerator
// scrapes (artifact.CheckGPUEvidence, artifact.CheckGPUIdleGaps).
type EnergyEvidence struct {
	Scrapes   int `json:"scrapes"`
	Devices   int `json:"devices"`
	Endpoints int `json:"endpoints"`
	// Evidence is StatusPassed or StatusFailed: every scrape present, of
	// its sha256, parsable, and its devices the manifest's.
	Evidence string `json:"evidence"`
	// IdleGaps is the number of idle gaps the idle check covered; Idle is
	// StatusPassed, StatusFailed, or StatusSkipped when there was none
	// (no two scrapes with nothing in flight between them).
	IdleGaps int    `json:"idleGaps"`
	Idle     string `json:"idle"`
	// GaugeNotApplied says why the counter-against-gauge checks were not
	// applied (artifact.GPUGaugeNotApplied), "" when they were.
	GaugeNotApplied string `json:"gaugeCheckNotApplied,omitempty"`
}

// Line is e in one line of text.
func (e *EnergyEvidence) Line() string {
	idle := fmt.Sprintf("%s over %d idle gap(s)", strings.ToUpper(e.Idle), e.IdleGaps)
	switch {
	case e.Idle == StatusSkipped:
		idle = "not checkable: no two scrapes with nothing in flight between them (a warmup or a point precedes every scrape)"
	case e.Evidence == StatusFailed && e.IdleGaps == 0:
		idle = "not checked"
	}
	gauge := ""
	if e.GaugeNotApplied != "" {
		gauge = " (counter-against-gauge check NOT APPLIED: " + e.GaugeNotApplied + ")"
	}
	return fmt.Sprintf("accelerator scrapes: %d scrape(s) of %d device(s) on %d endpoint(s), evidence check %s%s; idle check %s",
		e.Scrapes, e.Devices, e.Endpoints, strings.ToUpper(e.Evidence), gauge, idle)
}
