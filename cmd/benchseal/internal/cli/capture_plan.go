package cli

import (
	"bytes"
	"encoding/json"

	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/plan"
)

// readCapturePlan reads capture's --plan file: a pre-registered plan
// (schema benchseal/plan/v1), executed exactly and returned as well, or a
// load plan (docs/capture.md).
func readCapturePlan(path string) (*capture.Plan, *plan.Plan, error) {
	b, err := readFileLimited("--plan", path, plan.MaxSize, planWant)
	if err != nil {
		return nil, nil, err // a file it cannot read: exit 1, not usage
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
