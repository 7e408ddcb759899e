package verify

import (
	"context"

	"github.com/benchseal/benchseal/schema"
)

// ClaimChecker recomputes a run's claimed numbers from its raw records
// under the definitions the claims name. The replay package provides the
// implementation; verify depends only on this interface.
type ClaimChecker interface {
	CheckClaims(ctx context.Context, run schema.Run) ([]schema.ClaimCheck, error)
}

// FlagChecker is a ClaimChecker that also returns every flagged point ×
// repeat of the replay it checked against, claimed or not (for a run
// without claims, of a replay under the run's own definitions): verify
// lists them all, so a point that did not sustain its load is visible
// whether or not a number was claimed for it.
type FlagChecker interface {
	CheckClaimsAndFlags(ctx context.Context, run schema.Run) ([]schema.ClaimCheck, []schema.PointFlags, error)
}

// ImportChecker re-derives an imported run from the source files attached
// to it (attachment returns one by its name under attachments/) and
// returns an error naming the first difference, or nil when the run is
// exactly what its importer makes of them (or is not imported). The
// importer package provides the implementation; verify depends only on
// this interface.
type ImportChecker interface {
	CheckImport(ctx context.Context, run schema.Run, attachment func(name string) ([]byte, error)) error
}

// ImportNoter is an ImportChecker that also returns notes: values today's
// importer derives that a run imported by an older release lacks (that
// release did not derive them). verify prints each as UNVERIFIED; they
// never fail the check.
type ImportNoter interface {
	CheckImportNotes(ctx context.Context, run schema.Run, attachment func(name string) ([]byte, error)) ([]string, error)
}
