package capture

import (
	"fmt"
	"slices"
	"strings"

	"github.com/benchseal/benchseal/plan"
	"github.com/benchseal/benchseal/schema"
)

// checkRegistered refuses settings that would contradict the
// pre-registered plan p: a dataset workload needs prompts, the SLO is the
// plan's, and the measurement boundary must match.
func checkRegistered(p *plan.Plan, sets []string, stream, prompts bool) error {
	if p.Workload.Kind == "dataset" && !prompts {
		return flagError(fmt.Sprintf("the pre-registered plan's workload is a dataset (sha256 %s): give it with --prompts", p.Workload.SHA256))
	}
	for _, s := range sets {
		if strings.HasPrefix(s, "slo.") || strings.HasPrefix(s, "slo=") {
			return flagError(fmt.Sprintf("--set %s: the pre-registered plan fixes the SLO", s))
		}
	}
	if want := (p.Boundary != schema.BoundaryNonStreaming); want != stream {
		return flagError(fmt.Sprintf("the pre-registered plan's boundary is %s; --no-stream does not match it", p.Boundary))
	}
	return nil
}

// applyRegistered records the pre-registered plan p in the manifest the
// capture starts from: its reference (plan.Plan.Ref) and its SLO.
func applyRegistered(m *schema.Manifest, p *plan.Plan) error {
	ref, err := p.Ref()
	if err != nil {
		return err
	}
	m.Plan = ref
	m.SLO = p.SLO
	return nil
}

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
