package replay

import (
	"cmp"
	"context"
	"strings"

	"github.com/benchseal/benchseal/schema"
)

// claimVersion is how one claims file is recomputed: under the version it
// names (or, naming none, one of unversioned), which its numbers are
// judged under, and, when that is not the current version, also under
// the current one, so a reader sees where a definition has changed since.
type claimVersion struct {
	under, current Version
	// cur is the replay under the current version (nil when under is
	// current).
	cur *Result
}

// unversioned lists the versions a claims file that names none may be
// judged under, oldest first: the kept versions current in some release
// before claims files named versions (benchseal/2026.11 before 3e42009,
// benchseal/2026.12 from it; a peer's TOOL/2026.12). A peer's
// TOOL/2026.11 is not among them: its rules are not kept, so a claim
// cannot be shown to follow them, and a claim that differs under the kept
// version is mismatched, as it was before versions were named.
func unversioned(definitions string) []string {
	var out []string
	for _, v := range VersionsOf(cmp.Or(definitions, "benchseal")) {
		if v.Kept && (strings.HasSuffix(v.Name, "/"+firstRelease) || strings.HasSuffix(v.Name, "/"+namedRelease)) {
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
	return &claimVersion{under: v, current: cur}, nil
}

// unwritten returns an error naming claims.json and definitions_version
// when cl names a version whose rules are not kept: no release wrote one
// (claims files name versions from namedRelease on, all kept), so the
// claims file is hand-made and is never recomputed under another version.
func unwritten(cl *schema.Claims) error {
	v, err := LookupVersion(cl.Definitions, cl.DefinitionsVersion)
	if err != nil || v.Kept {
		return nil
	}
	return badInput("%s: definitions_version %q was never written by any release (claims files name versions from %s on; one made before names none)", schema.ClaimsFile, v.Name, namedRelease)
}

// replay replays run under the version the claims are judged under, and
// under the current one when that differs.
func (cv *claimVersion) replay(ctx context.Context, run schema.Run, opts Options, replay replayFunc) (*Result, error) {
	opts.Version = cv.under.Name
	res, err := replay(ctx, run, opts)
	if err != nil || cv.under.Name == cv.current.Name {
		return res, err
	}
	opts.Version = cv.current.Name
	if cv.cur, err = replay(ctx, run, opts); err != nil {
		return nil, err
	}
	return res, nil
}

// compare records beside a claim's outcome the value the current version
// gives, with what changed, when it differs.
func (cv *claimVersion) compare(ck *schema.ClaimCheck, pc schema.PointClaim) {
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
