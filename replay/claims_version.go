package replay

import (
	"cmp"
	"context"
	"fmt"
	"strings"

	"github.com/benchseal/benchseal/schema"
)

// claimVersion is how one claims file is recomputed: under the version it
// names (claimed; the first version when it names none), which is the
// version its numbers are judged under when this benchseal keeps its
// rules (under), and, when that is not the current version, also under
// the current one, so a reader sees where a definition has changed since.
type claimVersion struct {
	claimed, under, current Version
	// cur is the replay under the current version (nil when under is
	// current).
	cur *Result
}

// unversioned lists the versions a claims file that names none may
// follow, oldest first: those current in some release before claims files
// named versions (benchseal/2026.11 before 3e42009, benchseal/2026.12
// from it); the first is the first release's.
func unversioned(definitions string) []string {
	var out []string
	for _, v := range VersionsOf(cmp.Or(definitions, "benchseal")) {
		if strings.HasSuffix(v.Name, "/"+firstRelease) || strings.HasSuffix(v.Name, "/"+namedRelease) {
			out = append(out, v.Name)
		}
	}
	return out
}

// claimsVersion resolves the version a claims file is checked under.
func claimsVersion(definitions, named string) (*claimVersion, error) {
	v, err := LookupVersion(definitions, named)
	if err != nil {
		return nil, err
	}
	cur, _ := LookupVersion(definitions, CurrentVersion(definitions))
	return &claimVersion{claimed: v, under: firstKept(v), current: cur}, nil
}

// replay replays run under the version the claims are judged under, and
// under the current one when that differs.
func (cv *claimVersion) replay(ctx context.Context, run schema.Run, opts Options) (*Result, error) {
	opts.Version = cv.under.Name
	res, err := Replay(ctx, run, opts)
	if err != nil || cv.under.Name == cv.current.Name {
		return res, err
	}
	opts.Version = cv.current.Name
	if cv.cur, err = Replay(ctx, run, opts); err != nil {
		return nil, err
	}
	return res, nil
}

// compare completes a claim's check with what the versions add: a claimed
// version whose rules are not kept turns a mismatch under the first kept
// version into UNVERIFIED (the claim's own rules cannot be applied, so a
// difference proves nothing), and a value the current version gives
// differently is recorded beside the outcome with what changed.
func (cv *claimVersion) compare(ck *schema.ClaimCheck, pc schema.PointClaim) {
	if cv.claimed.Name != cv.under.Name {
		ck.ClaimedVersion = cv.claimed.Name
		why := fmt.Sprintf("the claims follow %s, whose rules this benchseal does not keep; recomputed under %s (changed: %s)",
			cv.claimed.Name, cv.under.Name, strings.Join(changesSince(cv.claimed, cv.under), "; "))
		switch ck.Outcome {
		case schema.ClaimMatched:
			ck.Reason = JoinReasons(ck.Reason, why+": the value agrees")
		case schema.ClaimMismatched:
			ck.Outcome, ck.Reason = schema.ClaimNotRecomputable, JoinReasons(why, ck.Reason)
		default:
			ck.Reason = JoinReasons(ck.Reason, why)
		}
	}
	if cv.cur == nil || ck.Recomputed == nil {
		return
	}
	v, reason := resolveClaim(cv.cur, pc, ck.Metric)
	now := &schema.ClaimUnderVersion{Version: cv.current.Name, Changed: changesSince(cv.under, cv.current)}
	if f, ok := v.Float64(); ok && reason == "" {
		if RelError(f, *ck.Recomputed) <= ck.Tolerance {
			return
		}
		now.Value = &f
	} else {
		now.Reason = cmp.Or(reason, reasonUndefined)
	}
	ck.Current = now
}
