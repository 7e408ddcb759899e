package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/plan"
	"github.com/benchseal/benchseal/schema"
)

// readCapturePlan reads capture's --plan file: a pre-registered plan
// (schema benchseal/plan/v1), executed exactly and returned as well, or a
// load plan (docs/capture.md).
func readCapturePlan(path string) (*capture.Plan, *plan.Plan, error) {
	b, err := readFileLimited(path, plan.MaxSize)
	if err != nil {
		return nil, nil, usagef("--plan: %v", err)
	}
	var head struct {
		Schema string `json:"schema"`
	}
	if json.Unmarshal(b, &head) == nil && head.Schema == plan.SchemaV1 {
		p, err := plan.Decode(bytes.NewReader(b), path)
		if err != nil {
			return nil, nil, usagef("--plan: %v", err)
		}
		cp, err := capture.FromPlan(p)
		if err != nil {
			return nil, nil, usagef("--plan %s: %v", path, err)
		}
		return cp, p, nil
	}
	cp, err := capture.DecodePlan(bytes.NewReader(b))
	if err != nil {
		return nil, nil, usagef("--plan %s: %v", path, err)
	}
	return cp, nil, nil
}

// applyRegistered records a pre-registered plan in the manifest the
// capture starts from: its digest and title, and its SLO. Settings that
// would contradict the plan are refused before anything is sent.
func applyRegistered(m *schema.Manifest, p *plan.Plan, sets []string, stream, prompts bool) error {
	if p.Workload.Kind == "dataset" && !prompts {
		return usagef("the pre-registered plan's workload is a dataset (sha256 %s): give it with --prompts", p.Workload.SHA256)
	}
	for _, s := range sets {
		if strings.HasPrefix(s, "slo.") || strings.HasPrefix(s, "slo=") {
			return usagef("--set %s: the pre-registered plan fixes the SLO", s)
		}
	}
	if want := (p.Boundary != schema.BoundaryNonStreaming); want != stream {
		return usagef("the pre-registered plan's boundary is %s; --no-stream does not match it", p.Boundary)
	}
	d, err := p.Digest()
	if err != nil {
		return err
	}
	m.Plan = &schema.PlanRef{SHA256: strings.TrimPrefix(d, "sha256:"), Title: p.Title}
	m.SLO = p.SLO
	return nil
}

// planLine says in a summary whether the run was pre-registered.
func planLine(m *schema.Manifest) string {
	if m.Plan == nil {
		return "no pre-registered plan: the run was not pre-registered"
	}
	return fmt.Sprintf("pre-registered plan sha256:%s", m.Plan.SHA256)
}
