package verify

import (
	"errors"
	"fmt"
	"strings"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/schema"
)

func (v *Verifier) checkClaims(res *Result, checks []schema.ClaimCheck, err error, requireAll bool) *CheckError {
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
	if notRecomp > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("%d claim(s) UNVERIFIED: the records cannot determine them, so their numbers are the publisher's word only (--require-recomputable rejects them)", notRecomp))
	}
	if len(bad) > 0 {
		return res.fail(CheckClaims, artifact.TitleClaims, fmt.Errorf("%d claim(s) do not recompute: %s", len(bad), strings.Join(bad, "; ")))
	}
	reason := fmt.Sprintf("%d claim(s) matched, %d not recomputable", matched, notRecomp)
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
		got = fmt.Sprintf("%v", *c.Recomputed)
	}
	return fmt.Sprintf("%s %s %s: claimed %v, recomputed %s", c.Point, rep, c.Metric, c.Claimed, got)
}
