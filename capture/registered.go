package capture

import (
	"fmt"
	"slices"

	"github.com/benchseal/benchseal/plan"
)

// FromPlan returns the capture plan that executes a pre-registered plan
// exactly: its load points, counts, warmup, repeats, timeout, outstanding
// cap, seed and default lengths, nothing else. The result is normalized,
// so a plan whose load breaks capture's rules is refused here, before
// anything is sent. A pre-registered plan plans no cancellations.
func FromPlan(p *plan.Plan) (*Plan, error) {
	l := p.Load
	cp := &Plan{
		Mode:           l.Mode,
		Points:         slices.Clone(l.Points),
		Warmup:         l.Warmup,
		Repeats:        l.Repeats,
		RequestTimeout: l.RequestTimeout,
		MaxOutstanding: l.MaxOutstanding,
		Seed:           l.Seed,
		InputTokens:    l.InputTokens,
		OutputTokens:   l.OutputTokens,
	}
	if err := cp.Normalize(); err != nil {
		return nil, fmt.Errorf("pre-registered plan: %w", err)
	}
	return cp, nil
}
