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

// ImportChecker re-derives an imported run from the source files attached
// to it (attachment returns one by its name under attachments/) and
// returns an error naming the first difference, or nil when the run is
// exactly what its importer makes of them (or is not imported). The
// importer package provides the implementation; verify depends only on
// this interface.
type ImportChecker interface {
	CheckImport(ctx context.Context, run schema.Run, attachment func(name string) ([]byte, error)) error
}
