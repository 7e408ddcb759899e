package replay

import (
	"context"
	"math/big"
	"os"
	"slices"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// TestWindowUnderEachVersion: benchseal/2026.11 ends the window at the
// last ok request's final token (its known defect: a timed-out hard
// request drops out of the window and goodput rises); benchseal/2026.12,
// the current version, at the last end of any measured request. The old
// rule is kept so that claims made under it still recompute.
func TestWindowUnderEachVersion(t *testing.T) {
	slo := &SLOSpec{TTFTNS: ptr(int64(500e6)), E2ENS: ptr(int64(2e9)), TPOTNS: ptr(int64(500e6)), OneToken: schema.OneTokenPass}
	run := hardWorkRun(schema.StatusTimeout, 30)
	for _, c := range []struct {
		version          string
		window           int64
		goodput, reqRate *big.Rat
	}{
		{"benchseal/2026.11", 1e9, big.NewRat(9, 1), big.NewRat(9, 1)},
		{"benchseal/2026.12", 30e9, big.NewRat(9, 30), big.NewRat(9, 30)},
		{"", 30e9, big.NewRat(9, 30), big.NewRat(9, 30)},
	} {
		res := mustReplay(t, run, Options{SLO: slo, Version: c.version})
		if want := cmpOrStr(c.version, CurrentVersion("benchseal")); res.DefinitionsVersion != want {
			t.Errorf("%q: result names %q, want %q", c.version, res.DefinitionsVersion, want)
		}
		p := res.Results[0]
		ratEq(t, c.version+" window", p.Scalars["window_ns"], big.NewRat(c.window, 1))
		ratEq(t, c.version+" goodput", p.Scalars["goodput"], c.goodput)
		ratEq(t, c.version+" request_throughput", p.Scalars["request_throughput"], c.reqRate)
	}
	// Every request failed: the old window has no end, and says why.
	all := &memRun{m: manifest(), recs: []*schema.Record{hardWorkRun(schema.StatusTimeout, 3).recs[9]}}
	p := mustReplay(t, all, Options{SLO: slo, Version: "benchseal/2026.11"}).Results[0]
	for _, k := range []string{"window_ns", "request_throughput", "goodput"} {
		if !p.Scalars[k].IsNull() || p.NullReasons[k] != ReasonNoOKToken {
			t.Errorf("all failed under benchseal/2026.11: %s = %v (%q)", k, p.Scalars[k], p.NullReasons[k])
		}
	}
}

func cmpOrStr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// TestVersionErrors: an unknown version, a version of other definitions
// and a version whose rules are not kept are errors that say so.
func TestVersionErrors(t *testing.T) {
	run := hardWorkRun(schema.StatusOK, 5)
	for _, c := range []struct{ defs, version, want string }{
		{"", "benchseal/2025.01", "unknown definitions version"},
		{"", "vllm/2026.12", "unknown definitions version"},
		{"vllm", "vllm/2026.11", "not kept"},
	} {
		_, err := Replay(context.Background(), run, Options{Definitions: c.defs, Version: c.version})
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s %s: %v, want %q", c.defs, c.version, err, c.want)
		}
	}
}

// claimsUnder writes the headline claims of run replayed under version,
// naming version (or, when name is false, no version: claims made before
// versions were named).
func claimsUnder(t *testing.T, run *memRun, version string, name bool) *schema.Claims {
	t.Helper()
	res := mustReplay(t, run, Options{Version: version})
	c := res.Claims(nil, DefaultClaimTolerance)
	if !name {
		c.DefinitionsVersion = ""
	}
	return c
}

func claim(t *testing.T, cks []schema.ClaimCheck, metric string) schema.ClaimCheck {
	t.Helper()
	i := slices.IndexFunc(cks, func(c schema.ClaimCheck) bool { return c.Metric == metric })
	if i < 0 {
		t.Fatalf("no check of %s", metric)
	}
	return cks[i]
}

func checkClaims(t *testing.T, run *memRun, c *schema.Claims) []schema.ClaimCheck {
	t.Helper()
	run.c = c
	cks, err := ClaimChecker{}.CheckClaims(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	return cks
}

// TestOldVersionClaimsMatchWithDefectAndCurrentValue: claims made under
// benchseal/2026.11 (named or, from a release before versions, unnamed)
// match under it, carry its known defect, and show the current version's
// value where it differs (the window and every rate over it); claims made
// under the current version match under it with nothing beside them.
func TestOldVersionClaimsMatchWithDefectAndCurrentValue(t *testing.T) {
	run := hardWorkRun(schema.StatusTimeout, 30)
	for _, named := range []bool{true, false} {
		cks := checkClaims(t, run, claimsUnder(t, run, "benchseal/2026.11", named))
		for _, c := range cks {
			if c.Outcome != schema.ClaimMatched || c.DefinitionsVersion != "benchseal/2026.11" || c.KnownDefect == "" || c.VersionInferred == named {
				t.Errorf("named %v: %s: %s under %q (defect %q, inferred %v): %s", named, c.Metric, c.Outcome, c.DefinitionsVersion, c.KnownDefect, c.VersionInferred, c.Reason)
			}
		}
		w := claim(t, cks, "window_ns")
		if w.Current == nil || w.Current.Value == nil || *w.Current.Value != 30e9 || w.Current.Version != "benchseal/2026.12" ||
			len(w.Current.Changed) != 1 || !strings.Contains(w.Current.Changed[0], "window") {
			t.Errorf("named %v: window's current value %+v, want 30e9 under benchseal/2026.12 with the window change", named, w.Current)
		}
		if c := claim(t, cks, "counts.ok"); c.Current != nil {
			t.Errorf("named %v: counts.ok has a current value %+v although no definition of it changed", named, c.Current)
		}
	}
	for _, named := range []bool{true, false} {
		for _, c := range checkClaims(t, run, claimsUnder(t, run, "benchseal/2026.12", named)) {
			if c.Outcome != schema.ClaimMatched || c.DefinitionsVersion != "benchseal/2026.12" || c.KnownDefect != "" || c.Current != nil {
				t.Errorf("current, named %v: %s: %s under %q: %+v", named, c.Metric, c.Outcome, c.DefinitionsVersion, c)
			}
		}
	}
}

// TestVersionsNeverHideAForgedClaim: a claim that matches under no version
// is mismatched under the version its claims name, and, for claims naming
// none, under the newest version current before versions were named.
func TestVersionsNeverHideAForgedClaim(t *testing.T) {
	run := hardWorkRun(schema.StatusTimeout, 30)
	for _, c := range []struct {
		version string
		named   bool
		under   string
	}{
		{"benchseal/2026.11", true, "benchseal/2026.11"},
		{"benchseal/2026.12", true, "benchseal/2026.12"},
		{"benchseal/2026.11", false, "benchseal/2026.12"},
	} {
		cl := claimsUnder(t, run, c.version, c.named)
		for i := range cl.Points[0].Metrics {
			if cl.Points[0].Metrics[i].Metric == "counts.ok" {
				cl.Points[0].Metrics[i].Value++
			}
		}
		ck := claim(t, checkClaims(t, run, cl), "counts.ok")
		if ck.Outcome != schema.ClaimMismatched || ck.DefinitionsVersion != c.under {
			t.Errorf("%s named %v: forged counts.ok %s under %s, want mismatched under %s", c.version, c.named, ck.Outcome, ck.DefinitionsVersion, c.under)
		}
	}
}

// TestClaimsOfAVersionNotKeptAreInvalid: peer claims naming the first
// version, which no release wrote (its rules are not kept), are an error
// naming claims.json and definitions_version, never recomputed under
// another version; claims under peer definitions naming none are judged
// under the kept version, a value that differs mismatched.
func TestClaimsOfAVersionNotKeptAreInvalid(t *testing.T) {
	run := hardWorkRun(schema.StatusOK, 5)
	res := mustReplay(t, run, Options{Definitions: "vllm"})
	cl := res.Claims(nil, DefaultClaimTolerance)
	if cl.DefinitionsVersion != "vllm/2026.12" {
		t.Fatalf("claims name %q", cl.DefinitionsVersion)
	}
	cl.Points[0].Metrics[0].Value *= 10
	cl.DefinitionsVersion = "vllm/2026.11"
	run.c = cl
	_, err := ClaimChecker{}.CheckClaims(context.Background(), run)
	if err == nil || !strings.Contains(err.Error(), "claims.json") || !strings.Contains(err.Error(), "definitions_version") || !strings.Contains(err.Error(), "vllm/2026.11") {
		t.Errorf("claims naming vllm/2026.11: err %v, want an error naming claims.json and definitions_version", err)
	}
	cl.DefinitionsVersion = ""
	for i, c := range checkClaims(t, run, cl) {
		want := schema.ClaimMatched
		if i == 0 {
			want = schema.ClaimMismatched
		}
		if c.Outcome != want || c.DefinitionsVersion != "vllm/2026.12" || !c.VersionInferred {
			t.Errorf("no version: %s %s under %s (inferred %v): %s; want %s", c.Metric, c.Outcome, c.DefinitionsVersion, c.VersionInferred, c.Reason, want)
		}
	}
}

// TestEveryVersionIsDocumented: the versions are named DEFINITIONS/YYYY.MM,
// one current per definitions, kept ones computable; benchseal's are all
// kept; every later version says what changed and why; and docs/format.md's
// versions section names each with its change and known defect.
func TestEveryVersionIsDocumented(t *testing.T) {
	b, err := os.ReadFile("../docs/format.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	_, sec, ok := strings.Cut(doc, "\n## Versions")
	if !ok {
		t.Fatal(`docs/format.md has no "## Versions" section`)
	}
	for _, d := range registry {
		vs := VersionsOf(d.Name())
		if len(vs) == 0 || !vs[len(vs)-1].Kept {
			t.Errorf("%s: no kept current version", d.Name())
		}
		for i, v := range vs {
			if !strings.HasPrefix(v.Name, d.Name()+"/") || v.Since == "" {
				t.Errorf("%s: version %q misnamed or without Since", d.Name(), v.Name)
			}
			if (i > 0) != (v.Changed != "" && v.Why != "") {
				t.Errorf("%s: only a later version states Changed and Why", v.Name)
			}
			if d.Name() == "benchseal" && !v.Kept {
				t.Errorf("%s: benchseal's versions are all kept", v.Name)
			}
			if v.Kept {
				if _, err := Replay(context.Background(), hardWorkRun(schema.StatusOK, 5), Options{Definitions: d.Name(), Version: v.Name}); err != nil {
					t.Errorf("%s: %v", v.Name, err)
				}
			}
			if d.Name() == "benchseal" {
				for _, s := range []string{v.Name, v.Defect} {
					if !strings.Contains(sec, s) {
						t.Errorf("docs/format.md's versions section lacks %q", s)
					}
				}
			}
		}
	}
	for _, s := range []string{"2026.11", "not kept", windowChanged} {
		if !strings.Contains(sec, s) {
			t.Errorf("docs/format.md's versions section lacks %q", s)
		}
	}
}
