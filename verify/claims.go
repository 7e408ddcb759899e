package verify

import (
	"errors"
	"fmt"
	"strings"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/schema"
)

func (v *Verifier) checkClaims(res *Result, checks []schema.ClaimCheck, err error, requireAll, merged bool) *CheckError {
	if err != nil {
		check, blob, cause := artifactErr(err)
		if !errors.Is(err, artifact.ErrInvalid) {
			check, blob, cause = CheckClaims, "", err
		}
		if check != CheckClaims {
			cause = fmt.Errorf("%s: %v", check, cause)
		}
		return res.fail(CheckClaims, blob, cause)
	}
	if res.Records != nil {
		unproven(checks, res.Records.Unproven)
		// A merged run holds no scrape (merge refuses shards holding
		// them), so nothing could bound its counts beyond the records.
		exempt := isSent
		if merged {
			exempt = recordsOnlyCount
		}
		unplaced(checks, res.Records.Unplaced, exempt)
	}
	unplaced(checks, res.counterCells, isSent)
	res.Claims = checks
	var bad []string
	matched, notRecomp := 0, 0
	for _, c := range checks {
		switch c.Outcome {
		case schema.ClaimMatched:
			matched++
		case schema.ClaimNotRecomputable:
			notRecomp++
			res.Unverified = append(res.Unverified, c)
			if requireAll {
				bad = append(bad, fmt.Sprintf("%s %s: not recomputable (%s)", c.Point, c.Metric, c.Reason))
			}
		default:
			bad = append(bad, mismatchText(c))
		}
	}
	res.Warnings = append(res.Warnings, versionWarnings(checks)...)
	if notRecomp > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d claim(s) UNVERIFIED (each with its reason above): not confirmed from the records, so their numbers are the publisher's word only (--require-recomputable rejects them)", notRecomp))
	}
	if len(bad) > 0 {
		return res.fail(CheckClaims, artifact.TitleClaims, fmt.Errorf("%d claim(s) do not recompute: %s", len(bad), strings.Join(bad, "; ")))
	}
	reason := fmt.Sprintf("%d claim(s) matched%s, %d not recomputable", matched, underVersion(checks), notRecomp)
	if notRecomp > 0 {
		reason += " (UNVERIFIED)"
	}
	res.pass(CheckClaims, reason)
	return nil
}

// mismatchText says where a claim failed and by how much: point, repeat
// (or "all repeats"), metric, the claimed and the recomputed value.
func mismatchText(c schema.ClaimCheck) string {
	rep := "all repeats"
	if c.Repeat != nil {
		rep = fmt.Sprintf("repeat %d", *c.Repeat)
	}
	got := "none"
	if c.Recomputed != nil {
		got = digits.Shortest(*c.Recomputed)
	}
	return fmt.Sprintf("%s %s %s: claimed %s, recomputed %s%s", c.Point, rep, c.Metric, digits.Shortest(c.Claimed), got, underVersion([]schema.ClaimCheck{c}))
}

// underVersion names the definitions version claims were recomputed
// under, with its known defect: " under benchseal/2026.11 (known defect:
// …)"; "" when the checks name none (a checker that predates versions).
func underVersion(checks []schema.ClaimCheck) string {
	if len(checks) == 0 || checks[0].DefinitionsVersion == "" {
		return ""
	}
	s := " under " + checks[0].DefinitionsVersion
	if d := checks[0].KnownDefect; d != "" {
		s += " (known defect: " + d + ")"
	}
	return s
}

// versionWarnings says what a reader must know about the version claims
// were recomputed under: that its rules have a known defect, that the
// current version gives other numbers for some (and what changed).
func versionWarnings(checks []schema.ClaimCheck) []string {
	if len(checks) == 0 {
		return nil
	}
	c0 := checks[0]
	var out []string
	if c0.KnownDefect != "" {
		out = append(out, fmt.Sprintf("claims recomputed under %s, whose rules have a known defect: %s", c0.DefinitionsVersion, c0.KnownDefect))
	}
	n, cur := 0, (*schema.ClaimUnderVersion)(nil)
	for _, c := range checks {
		if c.Current != nil {
			n, cur = n+1, c.Current
		}
	}
	if n > 0 {
		out = append(out, fmt.Sprintf("%d claim(s) recomputed under %s give another value under the current %s (changed: %s); the claims are judged under their own version",
			n, c0.DefinitionsVersion, cur.Version, strings.Join(cur.Changed, "; ")))
	}
	return out
}

// unproven turns every matched claim on a point × repeat that an
// incomplete run cannot show complete (schema.RunSummary.Unproven; a
// summary claim: on any repeat of its point) into not recomputable: the
// number follows from the records, but the records may lack the requests
// an interruption — or a publisher — removed (the slowest 2 % dropped
// moved an e2e p99 by a third).
func unproven(checks []schema.ClaimCheck, cells []schema.CellRef) {
	if len(cells) == 0 {
		return
	}
	for i := range checks {
		c := &checks[i]
		if c.Outcome != schema.ClaimMatched {
			continue
		}
		for _, cell := range cells {
			if cell.Point == c.Point && (c.Repeat == nil || *c.Repeat == cell.Repeat) {
				c.Outcome = schema.ClaimNotRecomputable
				c.Reason = fmt.Sprintf("the run is incomplete and point %q repeat %d cannot be shown complete (no declared request count it holds in full), so requests may be missing from it: the claim recomputes from the records present, which is the publisher's word", cell.Point, cell.Repeat)
				break
			}
		}
	}
}

// unplaced turns every matched claim on a point × repeat that no
// server-metrics scrape places in time (schema.RunSummary.Unplaced; a
// summary claim: on any repeat of its point) into not recomputable, with
// the pair's reason: a c4 capture re-laid as c16 or a 20 req/s capture
// moved onto 200 req/s slots recomputes to its forged claims. A claim
// whose metric exempt names keeps its outcome.
func unplaced(checks []schema.ClaimCheck, cells []schema.CellReason, exempt func(metric string) bool) {
	if len(cells) == 0 {
		return
	}
	why := map[schema.CellRef]string{}
	first := map[string]string{} // per point, for a summary claim
	for _, cell := range cells {
		why[cell.CellRef] = cell.Reason
		if _, ok := first[cell.Point]; !ok {
			first[cell.Point] = cell.Reason
		}
	}
	for i := range checks {
		c := &checks[i]
		if c.Outcome != schema.ClaimMatched || exempt(c.Metric) {
			continue
		}
		r, ok := first[c.Point]
		if c.Repeat != nil {
			r, ok = why[schema.CellRef{Point: c.Point, Repeat: *c.Repeat}]
		}
		if ok {
			c.Outcome, c.Reason = schema.ClaimNotRecomputable, r
		}
	}
}

// isSent tells whether metric is counts.sent, the number of records of
// the point, which the records alone fix (under load.generator, against
// the declared request count): it depends on no placement or token count.
func isSent(metric string) bool { return metric == "counts.sent" }

// recordsOnlyCount tells whether metric is a count the records' statuses
// and chunks alone fix, which depends on no placement in time and no
// token count: counts.sent (isSent), and counts.ok and the other
// statuses that split it. A settled after scrape would add a bound on the
// ok requests, which is why elsewhere they are UNVERIFIED without one;
// but a merged run cannot hold one (merge refuses shards with scrapes).
// counts.one_token (output tokens) and counts.good (timings) are not.
func recordsOnlyCount(metric string) bool {
	switch metric {
	case "counts.sent", "counts.ok", "counts.error", "counts.timeout", "counts.cancelled", "counts.rejected",
		"counts.warmup", "counts.ok_no_content", "counts.not_sent":
		return true
	}
	return false
}
