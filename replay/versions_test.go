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
		{"aiperf", "aiperf/2026.11", "not kept"},
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
// under a kept version, a value that differs under every one mismatched
// (vLLM's, whose first version is kept, under both).
func TestClaimsOfAVersionNotKeptAreInvalid(t *testing.T) {
	run := hardWorkRun(schema.StatusOK, 5)
	res := mustReplay(t, run, Options{Definitions: "aiperf"})
	cl := res.Claims(nil, DefaultClaimTolerance)
	if cl.DefinitionsVersion != "aiperf/2026.12" {
		t.Fatalf("claims name %q", cl.DefinitionsVersion)
	}
	cl.Points[0].Metrics[0].Value *= 10
	cl.DefinitionsVersion = "aiperf/2026.11"
	run.c = cl
	_, err := ClaimChecker{}.CheckClaims(context.Background(), run)
	if err == nil || !strings.Contains(err.Error(), "claims.json") || !strings.Contains(err.Error(), "definitions_version") || !strings.Contains(err.Error(), "aiperf/2026.11") {
		t.Errorf("claims naming aiperf/2026.11: err %v, want an error naming claims.json and definitions_version", err)
	}
	for _, defs := range []string{"aiperf", "vllm"} {
		cl := mustReplay(t, run, Options{Definitions: defs}).Claims(nil, DefaultClaimTolerance)
		cl.Points[0].Metrics[0].Value *= 10
		cl.DefinitionsVersion = ""
		for i, c := range checkClaims(t, run, cl) {
			want := schema.ClaimMatched
			if i == 0 {
				want = schema.ClaimMismatched
			}
			if c.Outcome != want || c.DefinitionsVersion != defs+"/2026.12" || !c.VersionInferred {
				t.Errorf("%s, no version: %s %s under %s (inferred %v): %s; want %s", defs, c.Metric, c.Outcome, c.DefinitionsVersion, c.VersionInferred, c.Reason, want)
			}
		}
	}
}

// streamEndRun is one ok request of 3 tokens whose stream ends (end_ns,
// 1500 ms) well after its last chunk (1000 ms): vLLM's and SGLang's
// latency differs between their versions.
func streamEndRun() *memRun {
	ms := int64(1e6)
	r := req(0, 3, 100*ms, 550*ms, 1000*ms)
	r.EndNS = 1500 * ms
	return &memRun{m: manifest(), recs: []*schema.Record{r}}
}

// TestPeerLatencyUnderEachVersion: vllm/2026.11 and sglang/2026.11, the
// rules of the releases before 7772d6e, end a captured request's latency
// at its last chunk (and need it measured); their 2026.12 at end_ns. The
// old rule is kept so that claims made under it still recompute.
func TestPeerLatencyUnderEachVersion(t *testing.T) {
	ms := 1e6
	slo := &SLOSpec{E2ENS: ptr(int64(1200e6))}
	for _, def := range []string{"vllm", "sglang"} {
		for _, c := range []struct {
			version         string
			e2e, tpot, good float64
		}{
			{def + "/2026.11", 1000 * ms, 450 * ms, 1},
			{def + "/2026.12", 1500 * ms, 700 * ms, 0},
		} {
			res := mustReplay(t, streamEndRun(), Options{Definitions: def, Version: c.version, SLO: slo})
			p := res.Results[0]
			e, _ := p.Dists["e2e_ns"].Mean.Float64()
			tp, _ := p.Dists["tpot_ns"].Mean.Float64()
			if res.DefinitionsVersion != c.version || e != c.e2e || tp != c.tpot || float64(p.Counts.Good) != c.good {
				t.Errorf("%s: %s e2e %v tpot %v good %d, want e2e %v tpot %v good %v", c.version, res.DefinitionsVersion, e, tp, p.Counts.Good, c.e2e, c.tpot, c.good)
			}
		}
		run := streamEndRun()
		run.m.Provenance = &schema.Provenance{}
		run.m.Provenance.Set(schema.FieldLastChunk, schema.FieldDerived, "placeholder")
		p := mustReplay(t, run, Options{Definitions: def, Version: def + "/2026.11"}).Results[0]
		if p.Dists["e2e_ns"].N != 0 || !strings.Contains(p.NullReasons["e2e_ns"], "the last chunk (last_chunk_ns), which the source did not measure") {
			t.Errorf("%s/2026.11, last chunk not measured: e2e n %d reason %q, want null with the reason", def, p.Dists["e2e_ns"].N, p.NullReasons["e2e_ns"])
		}
	}
}

// TestOldPeerClaimsMatchWithCurrentValue: claims made under vLLM's or
// SGLang's definitions by a release before versions (naming none), or
// naming the first version, match under it and show the current value and
// what changed beside the latencies; a forged one is mismatched under
// every version.
func TestOldPeerClaimsMatchWithCurrentValue(t *testing.T) {
	for _, def := range []string{"vllm", "sglang"} {
		for _, named := range []bool{true, false} {
			run := streamEndRun()
			cl := mustReplay(t, run, Options{Definitions: def, Version: def + "/2026.11"}).Claims(nil, DefaultClaimTolerance)
			if !named {
				cl.DefinitionsVersion = ""
			}
			cks := checkClaims(t, run, cl)
			for _, c := range cks {
				if c.Outcome != schema.ClaimMatched || c.DefinitionsVersion != def+"/2026.11" || c.VersionInferred == named || c.KnownDefect != "" {
					t.Errorf("%s named %v: %s %s under %q (inferred %v): %s", def, named, c.Metric, c.Outcome, c.DefinitionsVersion, c.VersionInferred, c.Reason)
				}
			}
			e := claim(t, cks, "e2e_ns.p50")
			if e.Current == nil || e.Current.Value == nil || *e.Current.Value != 1500e6 || e.Current.Version != def+"/2026.12" ||
				len(e.Current.Changed) != 1 || !strings.Contains(e.Current.Changed[0], "end_ns") {
				t.Errorf("%s named %v: e2e's current value %+v, want 1500 ms under %s/2026.12 naming the latency change", def, named, e.Current, def)
			}
			if c := claim(t, cks, "ttft_ns.p50"); c.Current != nil {
				t.Errorf("%s named %v: ttft has a current value %+v although it did not change", def, named, c.Current)
			}
			for i := range cl.Points[0].Metrics {
				if cl.Points[0].Metrics[i].Metric == "e2e_ns.p50" {
					cl.Points[0].Metrics[i].Value = 1250e6
				}
			}
			if c := claim(t, checkClaims(t, run, cl), "e2e_ns.p50"); c.Outcome != schema.ClaimMismatched {
				t.Errorf("%s named %v: forged e2e %s under %s, want mismatched", def, named, c.Outcome, c.DefinitionsVersion)
			}
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
	for _, d := range registry() {
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
			if d.Name() == "benchseal" || (i == 0 && v.Kept) {
				for _, s := range []string{v.Name, v.Defect} {
					if !strings.Contains(sec, s) {
						t.Errorf("docs/format.md's versions section lacks %q", s)
					}
				}
			}
		}
	}
	for _, s := range []string{"2026.11", "not kept", windowChanged, "`last_chunk_ns`", "`end_ns`, the end of the stream (was: its last chunk"} {
		if !strings.Contains(sec, s) {
			t.Errorf("docs/format.md's versions section lacks %q", s)
		}
	}
}

// chunkedRun is 8 ok requests of 10 tokens, one per chunk every 100 ms,
// sent 1 ms apart: GuideLLM's token rates differ between its versions
// (each chunk's tokens at its arrival, or all 10 at the last chunk).
func chunkedRun() *memRun {
	ms := int64(1e6)
	var recs []*schema.Record
	for i := range 8 {
		var ch []int64
		for j := 1; j <= 10; j++ {
			ch = append(ch, int64(j)*100*ms)
		}
		recs = append(recs, req(int64(i)*ms, 10, ch...))
	}
	return &memRun{m: manifest(), recs: recs}
}

// TestGuideLLMTokensUnderEachVersion: guidellm/2026.11, the rules of the
// releases before ded935d, put a captured request's output tokens at its
// last chunk (and need its first and last chunk measured, not every
// chunk's time); guidellm/2026.12 each chunk's tokens at its arrival.
// Claims made under the old rule, naming it or no version, match under it
// with the current value and the change beside the token rates; a forged
// one is mismatched under every version.
func TestGuideLLMTokensUnderEachVersion(t *testing.T) {
	run := chunkedRun()
	oldP := mustReplay(t, run, Options{Definitions: "guidellm", Version: "guidellm/2026.11"}).Results[0]
	newP := mustReplay(t, run, Options{Definitions: "guidellm"}).Results[0]
	o, _ := oldP.Scalars["output_token_throughput"].Float64()
	n, _ := newP.Scalars["output_token_throughput"].Float64()
	if !(o > 1.5*n) {
		t.Errorf("output_token_throughput: guidellm/2026.11 %v, guidellm/2026.12 %v; want the old (all tokens at the last chunk) well above the new", o, n)
	}
	for _, named := range []bool{true, false} {
		cl := mustReplay(t, run, Options{Definitions: "guidellm", Version: "guidellm/2026.11"}).Claims(nil, DefaultClaimTolerance)
		if !named {
			cl.DefinitionsVersion = ""
		}
		cks := checkClaims(t, run, cl)
		for _, c := range cks {
			if c.Outcome != schema.ClaimMatched || c.DefinitionsVersion != "guidellm/2026.11" || c.VersionInferred == named || c.KnownDefect != "" {
				t.Errorf("named %v: %s %s under %q (inferred %v): %s", named, c.Metric, c.Outcome, c.DefinitionsVersion, c.VersionInferred, c.Reason)
			}
		}
		c := claim(t, cks, "output_token_throughput")
		if c.Current == nil || c.Current.Value == nil || *c.Current.Value != n || c.Current.Version != "guidellm/2026.12" ||
			len(c.Current.Changed) != 1 || !strings.Contains(c.Current.Changed[0], "recorded arrival") {
			t.Errorf("named %v: output_token_throughput's current value %+v, want %v under guidellm/2026.12 naming the token change", named, c.Current, n)
		}
		if c := claim(t, cks, "ttft_ns.p50"); c.Current != nil {
			t.Errorf("named %v: ttft has a current value %+v although it did not change", named, c.Current)
		}
		for i := range cl.Points[0].Metrics {
			if cl.Points[0].Metrics[i].Metric == "output_token_throughput" {
				cl.Points[0].Metrics[i].Value = (o + n) / 2
			}
		}
		if c := claim(t, checkClaims(t, run, cl), "output_token_throughput"); c.Outcome != schema.ClaimMismatched {
			t.Errorf("named %v: forged output_token_throughput %s under %s, want mismatched", named, c.Outcome, c.DefinitionsVersion)
		}
	}
	// The old rule reads only the first and last chunk: absent chunk
	// times leave it computable, an absent last chunk does not.
	run = chunkedRun()
	run.m.Provenance = &schema.Provenance{}
	run.m.Provenance.Set(schema.FieldChunks, schema.FieldAbsent, "the tool stores no chunk times")
	p := mustReplay(t, run, Options{Definitions: "guidellm", Version: "guidellm/2026.11"}).Results[0]
	if v, _ := p.Scalars["output_token_throughput"].Float64(); v != o {
		t.Errorf("guidellm/2026.11, chunk times absent: output_token_throughput %v (%q), want %v", v, p.NullReasons["output_token_throughput"], o)
	}
	run.m.Provenance.Set(schema.FieldLastChunk, schema.FieldAbsent, "the tool stores no last chunk")
	p = mustReplay(t, run, Options{Definitions: "guidellm", Version: "guidellm/2026.11"}).Results[0]
	if !p.Scalars["output_token_throughput"].IsNull() || !strings.Contains(p.NullReasons["output_token_throughput"], "first and last chunk") {
		t.Errorf("guidellm/2026.11, last chunk not measured: output_token_throughput %v reason %q, want null with the reason", p.Scalars["output_token_throughput"], p.NullReasons["output_token_throughput"])
	}
}
