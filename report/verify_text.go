package report

import (
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/benchseal/benchseal/attest"
	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/verify"
)

// VerifyTextOptions are the choices of WriteVerifyText.
type VerifyTextOptions struct {
	// ShowClaims lists every recomputed claim, not only those that did
	// not match, are about a flagged point or read otherwise under the
	// current definitions version.
	ShowClaims bool
}

// WriteVerifyText writes the human summary of a verification to out: the
// run's identity, each check with its status and reason, the signatures,
// the claims recomputation, flagged points, unverified external results,
// the plan, reviewer attestations, reproduction referrers, warnings and
// the verdict line.
func WriteVerifyText(out io.Writer, r *verify.Result, o VerifyTextOptions) error {
	var b strings.Builder
	writeVerifyHead(&b, r)
	writeChecks(&b, r.Checks)
	writeSignatures(&b, r.Signatures)
	writeClaimChecks(&b, r.Claims, o.ShowClaims)
	writeFlagged(&b, r.Flagged)
	writeUnverifiedExternal(&b, r.UnverifiedExternal)
	writePlanResult(&b, r.Plan)
	writeAttestations(&b, r.Attestations, r.Reproductions)
	writeReproductions(&b, r.Reproductions)
	for _, wn := range r.Warnings {
		fmt.Fprintf(&b, "\nWARNING: %s\n", wn)
	}
	writeVerdict(&b, r)
	_, err := io.WriteString(out, b.String())
	return err
}

// writeVerifyHead prints what the bundle is: its run, evidence, model,
// hardware and builds.
func writeVerifyHead(w io.Writer, r *verify.Result) {
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
		io.WriteString(w, BuildsText(10, r.ClientBuild, r.ImporterBuild))
	}
	fmt.Fprintln(w)
}

// writeChecks prints each check: status, name, reason and the blob at
// fault.
func writeChecks(w io.Writer, checks []verify.CheckResult) {
	for _, c := range checks {
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
}

// writeSignatures prints every signature found and whether it verified.
func writeSignatures(w io.Writer, sigs []verify.SignatureResult) {
	if len(sigs) > 0 {
		fmt.Fprintln(w, "\nsignatures")
		for _, s := range sigs {
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
}

// writeUnverifiedExternal lists the external results the source published
// and no record can recompute, under their evidence label.
func writeUnverifiedExternal(w io.Writer, xs []verify.ExternalResult) {
	if len(xs) > 0 {
		label := ""
		for _, x := range xs {
			if x.Label != label {
				label = x.Label
				fmt.Fprintf(w, "\nexternal evidence: %s\n", label)
			}
			fmt.Fprintf(w, "  UNVERIFIED       %s %s = %s\n", x.Kind, x.Key, x.Value)
		}
	}
}

// writeVerdict prints the energy line, what was verified and the verdict.
func writeVerdict(w io.Writer, r *verify.Result) {
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
		checks[0].Definitions, versionText(checks[0]), shortestFloat(checks[0].Tolerance),
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
// claim stores it, and for a duration in ns (schema.ClaimIsDuration) its
// ms rendering beside it, as replay prints the same quantity
// (MillisecondsText); a count such as ttft_ns.n is not one.
func claimNumber(metric string) func(float64) string {
	dur := schema.ClaimIsDuration(metric)
	return func(f float64) string {
		s := plainFloat(f)
		if dur {
			s += " (" + MillisecondsText(f) + ")"
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
		// Why an attestation is not verified is printed on the verdict's
		// line: printed last, after the attestation's unchecked statements
		// and its reproduction, it read as one more statement, and
		// "NOT verified" as the whole answer.
		who, reason := "NOT verified", a.Reason
		if a.Verified {
			who = "verified: " + schema.EscapeText(a.Reviewer, false)
		} else if reason != "" {
			who, reason = who+": "+schema.EscapeText(reason, false), ""
		}
		fmt.Fprintf(w, "  %s: %s\n    verifier %s, verified %s, result %s, levels %s\n", a.Source, who,
			lineOrDash(a.VerifierID), lineOrDash(a.TimeVerified), lineOrDash(a.Result), lineOrDash(strings.Join(a.Levels, ",")))
		if r := a.Reproduction; r != nil {
			// The level bounds no margin: the reviewer chose it.
			mj := "sha256:" + r.RunManifest.Digest["sha256"]
			fmt.Fprintf(w, "    reproduction manifest.json %s, margin %s (the reviewer's choice), alpha %s: %d of %d claims REPRODUCED\n",
				mj, digits.Percent(r.Margin), shortestFloat(r.Alpha), len(r.Claims)-len(r.NotReproduced()), len(r.Claims))
			if i := slices.IndexFunc(repros, func(rr verify.ReproductionResult) bool { return rr.ManifestJSON == mj }); i >= 0 {
				fmt.Fprintf(w, "    carried as reproduction referrer %s; its manifest.json digest matches the attestation\n", repros[i].RunManifest)
				if a.ReproductionChecked {
					fmt.Fprintln(w, "    its records were checked against the original's: it names this run, is another run (not the original's records), and reaches the forced output length when the test forces one")
				}
				fmt.Fprintln(w, "    (its verdicts are the reviewer's word, not recomputed here: benchseal attest BUNDLE --reproduction DIR recomputes them from the reproduction run)")
			} else {
				fmt.Fprintln(w, "    (the reviewer's word: the reproduction is not carried as a referrer, so it is not checked here)")
			}
			io.WriteString(w, reproductionLimitsText(r.Limits))
		}
		if reason != "" {
			fmt.Fprintf(w, "    (%s)\n", schema.EscapeText(reason, false))
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

// lineOrDash returns s as one line of text output (EscapeText, newlines
// escaped: s is a publisher's string), or "-" when it is empty.
func lineOrDash(s string) string {
	if s == "" {
		return "-"
	}
	return schema.EscapeText(s, false)
}

// AttestedReproductionText is the lines attest prints of the reproduction
// in dir it attested (all its claims reproduced): its manifest.json
// digest, claims, margin and alpha, then its setup limits
// (reproductionLimitsText).
func AttestedReproductionText(dir string, r *attest.Reproduction) string {
	return fmt.Sprintf("  reproduced %s (manifest.json sha256:%s): all %d claims REPRODUCED, margin %s, alpha %s\n",
		dir, r.RunManifest.Digest["sha256"], len(r.Claims), digits.Percent(r.Margin), shortestFloat(r.Alpha)) + reproductionLimitsText(r.Limits)
}

// reproductionLimitsText is what the reviewer's reproduction states
// of its setup against the original's (recorded in the predicate):
// REPRODUCED means reproduced on that setup. Its lines are indented to
// sit under an attestation. It says "differs" only when a stated value
// differs (schema.SplitSetupLimits); facts unknown on a side are listed
// as unknown, not as a difference.
func reproductionLimitsText(limits []string) string {
	w := new(strings.Builder)
	switch {
	case limits == nil:
		fmt.Fprintln(w, "    the attestation states no comparison of the reproduction's setup with the original's")
		return w.String()
	case len(limits) == 0:
		fmt.Fprintln(w, "    the reproduction's setup differs from the original's in nothing compare checks")
		return w.String()
	}
	differ, unknown := schema.SplitSetupLimits(limits)
	if len(differ) > 0 {
		fmt.Fprintf(w, "    reproduced on the reviewer's setup, which differs from the original's (stated in the attestation):\n")
	} else {
		fmt.Fprintf(w, "    reproduced on the same stated setup as the original's; unknown (stated in the attestation):\n")
	}
	for _, l := range differ {
		fmt.Fprintf(w, "      %s\n", schema.EscapeText(l, false))
	}
	if len(differ) > 0 && len(unknown) > 0 {
		fmt.Fprintln(w, "    and unknown, no stated value differing:")
	}
	for _, l := range unknown {
		fmt.Fprintf(w, "      %s\n", schema.EscapeText(l, false))
	}
	return w.String()
}
