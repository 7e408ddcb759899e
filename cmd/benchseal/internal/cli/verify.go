package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/attest"
	"github.com/benchseal/benchseal/report"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/verify"
)

type verifyOptions struct {
	report        reportOut
	io            *IO
	deps          *Deps
	bundle        string
	trust         trustFlags
	reviewers     []string
	levels        []string
	plan          string
	planSignature string
	signatures    []string
	output        string
	allowUnsigned bool
	allChecks     bool
	showClaims    bool
	requireAll    bool
}

func newVerifyCmd(io *IO, d *Deps) *cobra.Command {
	o := &verifyOptions{io: io, deps: d}
	cmd := &cobra.Command{
		Use:   "verify BUNDLE (--key PUB ... | --certificate-identity ID --certificate-oidc-issuer URL --trusted-root FILE) [--plan PLAN] [--require-attestation REVIEWER ... [--require-level LEVEL ...]]",
		Short: "Verify a bundle offline against pinned public keys (exit 3 when rejected)",
		Long: `verify checks BUNDLE fail-closed, in order: the container is safe to read; oci-layout
and index.json; the run manifest (artifactType, empty config, known layer media
types, limits); every blob's sha256 digest and size while streaming; the
signatures — only the keys given with --key are trusted, every one of them must
have signed the run (publisher and co-signers, see 'benchseal sign'; a
reviewer who attested goes in --require-attestation), a key inside the bundle
never counts; the signed in-toto
statement (payload type, predicate type, every subject digest, predicate); the
uncompressed digests and sizes (bounded zstd); schema and semantic validation
of the manifest, claims and every record; consistency of the record shards with
the plan; for an imported run, that re-importing its attached, hash-pinned
source files with the named importer gives exactly its records, provenance,
tool windows, load counts and external results (import-rederive); and the
recomputation of every claim when available.

It prints each check as passed, failed or skipped with the reason (or, with
--output json, a versioned JSON result) and exits 0 when verified, 3 when
rejected, 1 on error, 2 on usage errors. --signature adds a detached Sigstore
bundle, e.g. one made by 'cosign attest-blob' over 'benchseal inspect
--statement'. --allow-unsigned checks only integrity and says loudly that
nothing is authenticated.

Keyless publishers (e.g. 'cosign attest-blob' in CI with an OIDC identity) are
trusted with cosign's flags --certificate-identity(-regexp) and
--certificate-oidc-issuer(-regexp) and a Sigstore trusted root
(--trusted-root trusted_root.json, read offline): the certificate chain to a
Fulcio CA, its SCT, the transparency-log entry and the timestamps are checked
as sigstore-go does, and the signer's identity and issuer are printed.

--plan PLAN checks the run against its pre-registered plan (signature from
--plan-signature, PLAN.sigstore.json, or a plan referrer in the bundle; it
must be signed by a trusted publisher): every planned point × repeat present
with the planned counts, no unplanned point, SLO, definitions, boundary,
seed and workload hash equal, the plan signed before the run started when a
signed timestamp exists. Each deviation is named. Without --plan, a plan
carried in the bundle is checked when present.

--require-attestation REVIEWER (repeatable; a public key file or
IDENTITY@ISSUER_URL) requires a PASSED reviewer attestation (SLSA VSA v1)
over this run manifest signed by each reviewer. An attestation counts only
when its inputAttestations name a publisher signature that verified in this
run under a pinned key or identity: a reviewer vouches for the run as that
publisher signed it, so re-signing by another key leaves it "not
applicable". Every attestation found is listed with who, when and which
levels. --require-level LEVEL (repeatable) counts a required reviewer's
attestation only when it lists LEVEL: BENCHSEAL_INTEGRITY,
BENCHSEAL_RECOMPUTED, BENCHSEAL_PLAN_MATCHED, or BENCHSEAL_REPRODUCED (the
reviewer re-ran the bundle's test with 'benchseal reproduce' and every claim
was REPRODUCED; see 'benchseal attest --reproduction'). The levels are the
reviewer's word, checked only for being signed by that reviewer.

Reproduction referrers the bundle carries ('benchseal attest
--attach-reproduction') are listed with their run manifest digest and whether
a verified attestation names them; their blobs are digest-checked with the
bundle's. With --require-level BENCHSEAL_REPRODUCED, when the bundle carries
any, a required reviewer's attestation counts only when the reproduction it
names (by manifest.json digest) is one of them and that reproduction's
records pass the checks 'benchseal reproduce' makes before judging a claim: it
names this run as its original, it is another run (not the original's records
re-labelled), and it reaches the forced output length when the test forces
one. Its verdicts stay the reviewer's word ('benchseal attest --reproduction'
recomputes them). A bundle without reproduction referrers is checked on the
attestation alone.`,
		Example: `  benchseal verify run.tar --key publisher.pub
  benchseal verify run.tar --key publisher.pub --require-attestation reviewer.pub --output json
  benchseal verify run.tar --key publisher.pub --require-attestation reviewer.pub --require-level BENCHSEAL_REPRODUCED
  benchseal verify run.tar --allow-unsigned`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.bundle = args[0]
			trusted := len(o.trust.keys) > 0 || o.trust.identityGiven()
			if !trusted && !o.allowUnsigned {
				return usagef("verify needs at least one --key or a --certificate-identity (or --allow-unsigned to check integrity only)")
			}
			if trusted && o.allowUnsigned {
				return usagef("--key and --allow-unsigned cannot be used together")
			}
			return runVerify(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	o.trust.bind(f, "key", "pinned public key PEM (repeatable; every key must have signed)")
	f.StringArrayVar(&o.reviewers, "require-attestation", nil, "reviewer whose PASSED attestation is required: a public key file or IDENTITY@ISSUER_URL (repeatable)")
	f.StringArrayVar(&o.levels, "require-level", nil, "level every --require-attestation reviewer's attestation must list, e.g. BENCHSEAL_REPRODUCED (repeatable)")
	f.StringVar(&o.plan, "plan", "", "pre-registered plan the run must match")
	f.StringVar(&o.planSignature, "plan-signature", "", "Sigstore bundle of the plan (default PLAN.sigstore.json when it exists)")
	f.StringArrayVar(&o.signatures, "signature", nil, "extra detached Sigstore bundle to check (repeatable)")
	enumFlag(f, &o.output, "output", "text", []string{"text", "json"}, "report format: text or json")
	o.report.bind(f)
	f.BoolVar(&o.allowUnsigned, "allow-unsigned", false, "UNSAFE: check integrity only; nothing is authenticated")
	f.BoolVar(&o.allChecks, "all-checks", false, "run every check even after the signature check failed (default: stop there)")
	f.BoolVar(&o.showClaims, "show-claims", false, "list every recomputed claim, not only those that did not match")
	f.BoolVar(&o.requireAll, "require-recomputable", false, "reject the bundle when any claim cannot be recomputed from its records (default: a warning)")
	return cmd
}

func runVerify(ctx context.Context, o *verifyOptions) error {
	if err := checkBundleArg(o.bundle); err != nil {
		return err
	}
	keys, opts, err := o.trust.build()
	if err != nil {
		return err
	}
	var pol verify.Policy
	if len(o.levels) > 0 && len(o.reviewers) == 0 {
		return usagef("--require-level needs --require-attestation: the level is required of a reviewer")
	}
	for _, l := range o.levels {
		if !slices.Contains(attest.Levels, l) {
			return usagef("--require-level %q: want one of %s", l, strings.Join(attest.Levels, ", "))
		}
	}
	pol.RequireLevels = o.levels
	for _, r := range o.reviewers {
		s, err := parseReviewer(r)
		if err != nil {
			return err
		}
		pol.RequireAttestations = append(pol.RequireAttestations, s)
	}
	if o.plan != "" {
		if pol.Plan, pol.PlanSignature, err = readPlan(o.plan, o.planSignature); err != nil {
			return err
		}
	}
	pol.AllowUnsignedUnsafe = o.allowUnsigned
	pol.AllChecks = o.allChecks
	pol.RequireRecomputable = o.requireAll
	for _, p := range o.signatures {
		b, err := readFileLimited(p, artifact.MaxSignatureBundleSize)
		if err != nil {
			return err
		}
		pol.Detached = append(pol.Detached, b)
	}
	opts = append(opts, o.deps.verifyOptions()...)
	v, err := verify.NewVerifier(keys, opts...)
	if err != nil {
		return err
	}
	rf, err := o.report.open(o.io, o.inputs()...)
	if err != nil {
		return err
	}
	defer rf.Discard()
	if o.allowUnsigned {
		fmt.Fprintln(o.io.ErrOut, "benchseal: WARNING: --allow-unsigned: signatures are NOT checked; NOTHING IS AUTHENTICATED")
	}
	res, verr := v.Verify(ctx, o.bundle, pol)
	if res == nil {
		return verr
	}
	if o.output == "json" {
		b, err := json.MarshalIndent(res, "", "  ")
		if err != nil {
			return err
		}
		fmt.Fprintf(rf.w, "%s\n", b)
	} else {
		writeVerifyText(rf.w, res, o.showClaims)
	}
	if err := rf.Commit(); err != nil {
		return err
	}
	if verr != nil {
		if ctx.Err() != nil {
			return verr
		}
		if res.Verified {
			return verr
		}
		return silentExit{ExitRejected}
	}
	return nil
}

func readFileLimited(p string, limit int64) ([]byte, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: over %d bytes", p, limit)
	}
	return b, nil
}

// writeVerifyText prints the human summary of a verification.
func writeVerifyText(w io.Writer, r *verify.Result, showClaims bool) {
	fmt.Fprintf(w, "bundle    %s\n", r.Bundle)
	if r.RunID != "" {
		fmt.Fprintf(w, "run id    %s\nmanifest  %s\n", r.RunID, r.ManifestDigest)
		fmt.Fprintf(w, "evidence  %s\nmodel     %s\nhardware  %s\n", r.Evidence, r.Model, r.Hardware)
		if r.Trace != "" {
			fmt.Fprintf(w, "trace     %s\n", r.Trace)
		}
		if r.Sessions != "" {
			fmt.Fprintf(w, "sessions  %s\n", r.Sessions)
		}
		writeBuilds(w, 10, r.ClientBuild, r.ImporterBuild)
	}
	fmt.Fprintln(w)
	for _, c := range r.Checks {
		line := fmt.Sprintf("%-7s %-16s %s", strings.ToUpper(statusWord(c.Status)), c.Name, c.Reason)
		// The blob at fault, unless the reason already names it.
		if c.Blob != "" && c.Status == verify.StatusFailed && !strings.Contains(c.Reason, c.Blob) {
			line += " (in " + c.Blob + ")"
		}
		fmt.Fprintln(w, strings.TrimRight(line, " "))
		for _, p := range c.Problems {
			fmt.Fprintf(w, "        %s\n", p)
		}
	}
	if len(r.Signatures) > 0 {
		fmt.Fprintln(w, "\nsignatures")
		for _, s := range r.Signatures {
			state := "not verified"
			switch {
			case s.Verified && s.Identity != "":
				state = fmt.Sprintf("verified: identity %s, issuer %s", s.Identity, s.Issuer)
			case s.Verified:
				state = "verified by " + s.Key
			}
			if len(s.Times) > 0 {
				state += ", signed at " + strings.Join(s.Times, ", ")
			}
			fmt.Fprintf(w, "  %s: %s", s.Source, state)
			if s.Reason != "" {
				fmt.Fprintf(w, " (%s)", s.Reason)
			}
			fmt.Fprintln(w)
		}
	}
	writeClaimChecks(w, r.Claims, showClaims)
	writeFlagged(w, r.Flagged)
	if len(r.UnverifiedExternal) > 0 {
		label := ""
		for _, x := range r.UnverifiedExternal {
			if x.Label != label {
				label = x.Label
				fmt.Fprintf(w, "\nexternal evidence: %s\n", label)
			}
			fmt.Fprintf(w, "  UNVERIFIED       %s %s = %s\n", x.Kind, x.Key, x.Value)
		}
	}
	writePlanResult(w, r.Plan)
	writeAttestations(w, r.Attestations, r.Reproductions)
	writeReproductions(w, r.Reproductions)
	for _, wn := range r.Warnings {
		fmt.Fprintf(w, "\nWARNING: %s\n", wn)
	}
	fmt.Fprintln(w)
	if r.Energy != nil {
		fmt.Fprintln(w, r.Energy.Line())
	}
	if r.RunID != "" {
		// What was verified, next to the verdict: a simulator run labelled
		// with real hardware says "synthetic" here.
		fmt.Fprintf(w, "evidence %s · model %s · hardware %s · run %s", r.Evidence, r.Model, r.Hardware, r.RunID)
		if r.Incomplete {
			fmt.Fprint(w, " · INCOMPLETE")
		}
		fmt.Fprintln(w)
		if r.SignerStatement != "" {
			fmt.Fprintln(w, r.SignerStatement)
		}
	}
	unverified := ""
	if n := len(r.Unverified); n > 0 {
		unverified = fmt.Sprintf(" — %d claim(s) UNVERIFIED (not recomputable from the records; listed above)", n)
	}
	if n := len(r.UnverifiedExternal); n > 0 {
		unverified += fmt.Sprintf(" — %d external result(s) UNVERIFIED (as published by the source; listed above)", n)
	}
	switch {
	case r.Verified && r.Authenticated:
		fmt.Fprintln(w, "VERIFIED"+unverified)
	case r.Verified:
		fmt.Fprintln(w, "INTEGRITY OK — NOT AUTHENTICATED (unsigned check)"+unverified)
	default:
		fmt.Fprintln(w, "REJECTED")
	}
}

func statusWord(s string) string {
	switch s {
	case verify.StatusPassed:
		return "pass"
	case verify.StatusFailed:
		return "FAIL"
	default:
		return "skip"
	}
}

// versionText names the version claims were recomputed under, and
// whether it was inferred.
func versionText(c schema.ClaimCheck) string {
	switch {
	case c.DefinitionsVersion == "":
		return ""
	case c.VersionInferred:
		return ", claims name no version (made before versions were named): recomputed under " + c.DefinitionsVersion
	}
	return ", recomputed under " + c.DefinitionsVersion
}

// writeClaimChecks prints the outcome of the claims recomputation: a count
// per outcome, then every claim that did not match, is about a flagged
// point or has another value under the current definitions version (every
// claim with all).
func writeClaimChecks(w io.Writer, checks []schema.ClaimCheck, all bool) {
	if len(checks) == 0 {
		return
	}
	count := map[string]int{}
	for _, c := range checks {
		count[c.Outcome]++
	}
	fmt.Fprintf(w, "\nclaims (%s definitions%s, tolerance %s): %d matched, %d mismatched, %d not recomputable (unverified)\n",
		checks[0].Definitions, versionText(checks[0]), strconv.FormatFloat(checks[0].Tolerance, 'g', -1, 64),
		count[schema.ClaimMatched], count[schema.ClaimMismatched], count[schema.ClaimNotRecomputable])
	if n := checks[0].SLONote; n != "" {
		fmt.Fprintf(w, "  NOTE: %s\n", n)
	}
	for _, c := range checks {
		num := claimNumber(c.Metric)
		if c.Outcome == schema.ClaimMatched && !all && len(c.Flags) == 0 && c.Current == nil {
			continue // a claim on a flagged point, or one the current version gives otherwise, is always shown
		}
		where := c.Point
		if c.Repeat != nil {
			where += fmt.Sprintf(" repeat %d", *c.Repeat)
		}
		outcome := strings.ToUpper(c.Outcome)
		if c.Outcome == schema.ClaimNotRecomputable {
			outcome = "UNVERIFIED"
		}
		line := fmt.Sprintf("  %-16s %s %s: claimed %s", outcome, where, c.Metric, num(c.Claimed))
		if c.Recomputed != nil {
			line += ", recomputed " + num(*c.Recomputed)
		}
		if c.Reason != "" && c.Outcome != schema.ClaimMismatched {
			line += " (" + c.Reason + ")"
		} else if _, more, ok := strings.Cut(c.Reason, "; "); ok {
			// What follows "claimed X, recomputed Y" (e.g. that the claim
			// was marked not recomputable).
			line += " (" + more + ")"
		}
		if c.DefinitionsVersion != "" {
			line += " under " + c.DefinitionsVersion
		}
		if c.KnownDefect != "" {
			line += " (known defect: " + c.KnownDefect + ")"
		}
		if cur := c.Current; cur != nil {
			now := "none (" + cur.Reason + ")"
			if cur.Value != nil {
				now = num(*cur.Value)
			}
			line += "; under the current " + cur.Version + ": " + now + " (changed: " + strings.Join(cur.Changed, "; ") + ")"
		}
		if len(c.Flags) > 0 {
			line += " [point flagged: " + strings.Join(c.Flags, ", ") + "]"
		}
		fmt.Fprintln(w, line)
	}
}

// claimNumber returns how the claims of metric read: the number as the
// claim stores it, and for a duration in ns its ms rendering beside it,
// as replay prints the same quantity (report.MillisecondsText).
func claimNumber(metric string) func(float64) string {
	return func(f float64) string {
		s := strconv.FormatFloat(f, 'f', -1, 64)
		if strings.Contains(metric, "_ns") {
			s += " (" + report.MillisecondsText(f) + ")"
		}
		return s
	}
}

// writeFlagged lists every point × repeat the replay flagged, claimed or
// not: its numbers describe a load the run did not sustain (or a client
// that did not keep its schedule).
func writeFlagged(w io.Writer, fs []schema.PointFlags) {
	if len(fs) == 0 {
		return
	}
	fmt.Fprintf(w, "\nflagged points (%d, claimed or not: their numbers describe a load the run did not sustain, or a schedule the client did not keep)\n", len(fs))
	for _, f := range fs {
		fmt.Fprintf(w, "  FLAGGED          %s repeat %d: %s\n", schema.EscapeText(f.Point, false), f.Repeat, strings.Join(f.Flags, ", "))
		for i, why := range f.Why {
			if why != "" {
				fmt.Fprintf(w, "                   %s: %s\n", f.Flags[i], why)
			}
		}
	}
}

// writePlanResult prints the plan a run was checked against.
func writePlanResult(w io.Writer, p *verify.PlanResult) {
	if p == nil {
		return
	}
	signed := "NOT signed by a trusted publisher"
	if p.SignedBy != "" {
		signed = "signed by " + p.SignedBy
		if p.SignedAt != "" {
			signed += " at " + p.SignedAt
		}
	}
	fmt.Fprintf(w, "\npre-registered plan %s, %s (%s)\n", p.Digest, signed, p.Source)
	if p.Reason != "" {
		fmt.Fprintf(w, "  %s\n", p.Reason)
	}
	for _, d := range p.Deviations {
		fmt.Fprintf(w, "  DEVIATION %s\n", d)
	}
}

// writeAttestations lists every reviewer attestation: who, when, levels;
// of a reproduction, whether the bundle carries it (repros, matched by
// manifest.json digest).
func writeAttestations(w io.Writer, as []verify.AttestationResult, repros []verify.ReproductionResult) {
	if len(as) == 0 {
		return
	}
	fmt.Fprintln(w, "\nreviewer attestations")
	for _, a := range as {
		who := "NOT verified"
		if a.Verified {
			who = "verified: " + schema.EscapeText(a.Reviewer, false)
		}
		fmt.Fprintf(w, "  %s: %s\n    verifier %s, verified %s, result %s, levels %s\n", a.Source, who,
			orDash(a.VerifierID), orDash(a.TimeVerified), orDash(a.Result), orDash(strings.Join(a.Levels, ",")))
		if r := a.Reproduction; r != nil {
			// The level bounds no margin: the reviewer chose it.
			mj := "sha256:" + r.RunManifest.Digest["sha256"]
			fmt.Fprintf(w, "    reproduction manifest.json %s, margin %v (the reviewer's choice), alpha %v: %d of %d claims REPRODUCED\n",
				mj, r.Margin, r.Alpha, len(r.Claims)-len(r.NotReproduced()), len(r.Claims))
			if i := slices.IndexFunc(repros, func(rr verify.ReproductionResult) bool { return rr.ManifestJSON == mj }); i >= 0 {
				fmt.Fprintf(w, "    carried as reproduction referrer %s; its manifest.json digest matches the attestation\n", repros[i].RunManifest)
				if a.ReproductionChecked {
					fmt.Fprintln(w, "    its records were checked against the original's: it names this run, is another run (not the original's records), and reaches the forced output length when the test forces one")
				}
				fmt.Fprintln(w, "    (its verdicts are the reviewer's word, not recomputed here: benchseal attest BUNDLE --reproduction DIR recomputes them from the reproduction run)")
			} else {
				fmt.Fprintln(w, "    (the reviewer's word: the reproduction is not carried as a referrer, so it is not checked here)")
			}
			writeReproductionLimits(w, r.Limits)
		}
		if a.Reason != "" {
			fmt.Fprintf(w, "    (%s)\n", schema.EscapeText(a.Reason, false))
		}
	}
}

// writeReproductions lists the reproduction referrers the bundle carries
// and whether a verified attestation names each.
func writeReproductions(w io.Writer, rs []verify.ReproductionResult) {
	if len(rs) == 0 {
		return
	}
	fmt.Fprintln(w, "\nreproduction referrers (the original's verdict does not depend on them)")
	for _, r := range rs {
		att := "not attested by a verified attestation"
		if r.Attested {
			att = "attested BENCHSEAL_REPRODUCED by a verified attestation"
		}
		fmt.Fprintf(w, "  run %s: run manifest %s, manifest.json %s: %s\n", schema.EscapeText(r.RunID, false), r.RunManifest, r.ManifestJSON, att)
	}
}

// orDash returns s as one line of text output (EscapeText, newlines
// escaped: s is a publisher's string), or "-" when it is empty.
func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return schema.EscapeText(s, false)
}

// inputs are the files verify reads: its --out may name none of them.
func (o *verifyOptions) inputs() []string {
	in := append([]string{o.bundle, o.plan, o.planSignature}, o.signatures...)
	return append(append(in, o.reviewers...), o.trust.files()...)
}
