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
