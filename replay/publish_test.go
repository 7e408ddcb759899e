package replay

import (
	"context"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/synth"
)

// withClaims is a run whose claims are replaced.
type withClaims struct {
	schema.Run
	c *schema.Claims
}

func (w withClaims) Claims() *schema.Claims { return w.c }

func synthRun(t *testing.T) *schema.RunDir {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	w, err := schema.CreateRun(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	o := synth.DefaultOptions()
	o.Requests = 240
	o.Points = []float64{2, 8}
	o.Repeats = 3
	m, err := synth.Generate(context.Background(), o, w)
	if err != nil {
		w.Abort()
		t.Fatal(err)
	}
	if err := w.SetManifest(m); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	rd, err := schema.OpenRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return rd
}

func TestPublishedClaimsRecomputeAndTamperedOneMismatches(t *testing.T) {
	ctx := context.Background()
	rd := synthRun(t)
	for _, tc := range []struct {
		name string
		opts Options
	}{
		{"manifest SLO", Options{}},
		{"stricter SLO from a flag", Options{SLO: mustSLO(t, "ttft=80ms,e2e=1s,tpot=12ms,one_token=fail")}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			res, err := Replay(ctx, rd, tc.opts)
			if err != nil {
				t.Fatal(err)
			}
			claims := res.Claims(nil, DefaultClaimTolerance)
			if probs := schema.ValidateClaims(claims, rd.Manifest(), "claims.json"); len(probs) > 0 {
				t.Fatalf("claims do not validate: %v", probs)
			}
			n := 0
			for _, pc := range claims.Points {
				n += len(pc.Metrics)
			}
			if n < 2*3*10 {
				t.Fatalf("only %d claims made", n)
			}
			checks, err := ClaimChecker{}.CheckClaims(ctx, withClaims{rd, claims})
			if err != nil {
				t.Fatal(err)
			}
			if len(checks) != n {
				t.Fatalf("%d checks for %d claims", len(checks), n)
			}
			for _, ck := range checks {
				if ck.Outcome != schema.ClaimMatched {
					t.Errorf("%s %s: %s (%s)", ck.Point, ck.Metric, ck.Outcome, ck.Reason)
				}
				// Claims under an SLO other than the manifest's say so.
				if (tc.opts.SLO != nil) != strings.Contains(ck.SLONote, "ttft=80ms") {
					t.Errorf("%s %s: SLO note %q", ck.Point, ck.Metric, ck.SLONote)
				}
			}
			// Raise one claimed goodput by a relative 1e-9: it must mismatch.
			claims.Points[0].Metrics[len(claims.Points[0].Metrics)/2].Value *= 1 + 1e-9
			checks, err = ClaimChecker{}.CheckClaims(ctx, withClaims{rd, claims})
			if err != nil {
				t.Fatal(err)
			}
			bad := 0
			for _, ck := range checks {
				if ck.Outcome == schema.ClaimMismatched {
					bad++
				}
			}
			if bad != 1 {
				t.Fatalf("%d mismatches after changing one claim, want 1", bad)
			}
		})
	}
}

func mustSLO(t *testing.T, s string) *SLOSpec {
	t.Helper()
	v, err := ParseSLO(s)
	if err != nil {
		t.Fatal(err)
	}
	return &v
}

// TestClaimWithoutARepeatIsCheckedAsTheSummary: a claim without a repeat
// stands for the point, and was checked against repeat 0 alone, so the
// best repeat's value could stand for a point of three (and a plan check
// count it for every repeat). It is checked against the median across the
// repeats; on a metric not summarised across repeats it is not
// recomputable.
func TestClaimWithoutARepeatIsCheckedAsTheSummary(t *testing.T) {
	ctx := context.Background()
	rd := synthRun(t)
	res, err := Replay(ctx, rd, Options{})
	if err != nil {
		t.Fatal(err)
	}
	const metric = "e2e_ns.p99"
	point := res.Results[0].Point
	r0, _ := res.Resolve(point, 0, metric)
	med, _ := res.Resolve(point, 0, "summary."+metric+".median")
	f0, _ := r0.Float64()
	fm, _ := med.Float64()
	if RelError(f0, fm) <= DefaultClaimTolerance {
		t.Fatalf("repeat 0 is the median (%v): pick another metric", f0)
	}
	claims := &schema.Claims{Schema: schema.ClaimsSchemaV1, Definitions: "benchseal", DefinitionsVersion: res.DefinitionsVersion, Tolerance: DefaultClaimTolerance,
		Points: []schema.PointClaim{{Point: point, Metrics: []schema.Claim{{Metric: metric, Value: f0}, {Metric: metric, Value: fm}, {Metric: "counts.ok", Value: 240}}}}}
	checks, err := ClaimChecker{}.CheckClaims(ctx, withClaims{rd, claims})
	if err != nil {
		t.Fatal(err)
	}
	want := []string{schema.ClaimMismatched, schema.ClaimMatched, schema.ClaimNotRecomputable}
	for i, ck := range checks {
		if ck.Outcome != want[i] {
			t.Errorf("%s = %v without a repeat: %s (%s), want %s", ck.Metric, ck.Claimed, ck.Outcome, ck.Reason, want[i])
		}
	}
}
