package replay

import (
	"context"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// TestCountsNeedTheirFields:
// counts.good and counts.one_token read output_tokens (good only under a
// TPOT limit); when the source did not measure it they are null with the
// reason, and a claim on them is unverified, not matched. With no SLO at
// all counts.good is null ("no SLO"), never 0.
func TestCountsNeedTheirFields(t *testing.T) {
	run := genRun(5, 20)
	prov := &schema.Provenance{}
	prov.Set(schema.FieldOutputTokens, schema.FieldAbsent, "the number of responses")
	run.m.Provenance = prov
	tpot := int64(50e6)
	res := mustReplay(t, run, Options{SLO: &SLOSpec{TPOTNS: &tpot, OneToken: schema.OneTokenPass}})
	p := res.Results[0]
	for _, k := range []string{"good", "one_token"} {
		if v, ok := p.Count(k); !ok || !v.IsNull() {
			t.Errorf("counts.%s = %v, want null", k, v)
		}
		if why := p.NullReasons["counts."+k]; !strings.Contains(why, "output_tokens not measured") {
			t.Errorf("counts.%s reason %q", k, why)
		}
	}
	if v, _ := p.Count("ok"); v.IsNull() {
		t.Error("counts.ok null; it reads no unmeasured field")
	}
	run.c = &schema.Claims{Schema: schema.ClaimsSchemaV1, Definitions: "benchseal", Tolerance: 1e-9,
		SLO:    &schema.SLO{TPOT: schema.Duration(tpot), OneToken: schema.OneTokenPass},
		Points: []schema.PointClaim{{Point: "p", Metrics: []schema.Claim{{Metric: "counts.good", Value: float64(p.Counts.Good)}}}}}
	cks, err := ClaimChecker{}.CheckClaims(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	if len(cks) != 1 || cks[0].Outcome != schema.ClaimNotRecomputable {
		t.Fatalf("claim on counts.good: %+v, want not-recomputable", cks)
	}

	// A TTFT-only SLO reads no token count: good is determined.
	ttft := int64(1e9)
	p = mustReplay(t, run, Options{SLO: &SLOSpec{TTFTNS: &ttft, OneToken: schema.OneTokenPass}}).Results[0]
	if v, _ := p.Count("good"); v.IsNull() {
		t.Errorf("counts.good null under a TTFT-only SLO: %q", p.NullReasons["counts.good"])
	}

	// No SLO: null with its reason, not 0.
	run.m.Provenance = nil
	p = mustReplay(t, run, Options{}).Results[0]
	if v, _ := p.Count("good"); !v.IsNull() || p.NullReasons["counts.good"] != ReasonNoSLO {
		t.Errorf("no SLO: counts.good = %v (%q), want null (%q)", v, p.NullReasons["counts.good"], ReasonNoSLO)
	}
}
