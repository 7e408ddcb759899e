package replay

import (
	"context"
	"encoding/json"
	"math"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// imported makes run an import of tool: evidence imported, source.tool.
func imported(m *schema.Manifest, tool string) *schema.Manifest {
	m.Evidence = schema.EvidenceImported
	m.Source = &schema.Source{Tool: tool}
	return m
}

func withOrig(r *schema.Record, o string) *schema.Record {
	r.Orig = json.RawMessage(o)
	return r
}

// TestPeerDefinitionsReadOnlyTheirOwnOrig: an import replayed under another tool's definitions read that
// tool's keys in the wrong orig, or the records' placeholder send times.
// A peer definition reads orig only in a run imported from that tool;
// otherwise it reads the records through the provenance gate.
func TestPeerDefinitionsReadOnlyTheirOwnOrig(t *testing.T) {
	ms := int64(1e6)
	// (a) An LLMPerf import: send times absent (all 0), a stored window of
	// 50 s. GuideLLM's rates are distributions over the requests' own
	// times: null, never 150 requests ÷ the longest latency.
	prov := &schema.Provenance{Windows: []schema.ToolWindow{{Point: "p", WindowNS: 50_000 * ms, How: "LLMPerf's results_num_completed_requests ÷ results_num_completed_requests_per_min × 60 s"}}}
	prov.Set(schema.FieldSent, schema.FieldAbsent, "LLMPerf stores no send times; every request is placed at 0")
	var recs []*schema.Record
	for i := range 150 {
		recs = append(recs, withOrig(req(0, 150, 300*ms, int64(800+i)*ms), `{"error_code":null,"ttft_s":0.3,"end_to_end_latency_s":0.9,"number_output_tokens":150}`))
	}
	m := imported(manifest(), "llmperf")
	m.Provenance = prov
	lp := &memRun{m: m, recs: recs}
	p := mustReplay(t, lp, Options{Definitions: "guidellm"}).Results[0]
	for _, k := range []string{"request_throughput", "output_token_throughput", "total_token_throughput"} {
		if !p.Scalars[k].IsNull() || !strings.Contains(p.NullReasons[k], "sent_ns not measured") {
			t.Errorf("llmperf import, guidellm: %s = %v (%q), want null: the records' send times are placeholders", k, p.Scalars[k], p.NullReasons[k])
		}
	}
	if d := p.Dists["requests_per_second"]; d.N != 0 || p.NullReasons["requests_per_second"] == "" {
		t.Errorf("llmperf import, guidellm: requests_per_second n %d, want null with a reason", d.N)
	}
	if w, _ := p.Scalars["window_ns"].Float64(); w != 50_000e6 || !strings.Contains(p.WindowSource, "LLMPerf's") {
		t.Errorf("llmperf import, guidellm: window %v labelled %q, want the stored 50 s labelled as LLMPerf's", w, p.WindowSource)
	}

	// (b) A vLLM import writes "error": "" for every success: under
	// AIPerf's definitions that is not an AIPerf error record.
	vm := imported(manifest(), "vllm")
	var vrecs []*schema.Record
	for range 10 {
		vrecs = append(vrecs, withOrig(req(0, 3, 60*ms, 130*ms, 200*ms), `{"error":"","ttft":0.06,"itl":[0.07,0.07],"output_len":3,"input_len":10,"duration":5.0}`))
	}
	p = mustReplay(t, &memRun{m: vm, recs: vrecs}, Options{Definitions: "aiperf"}).Results[0]
	if f, _ := p.Scalars["request_throughput"].Float64(); p.Dists["ttft_ns"].N != 10 || !(f > 0) {
		t.Errorf("vllm import, aiperf: ttft n %d, request_throughput %v; want 10 and > 0", p.Dists["ttft_ns"].N, p.Scalars["request_throughput"])
	}

	// (c) An AIPerf import stores request_latency; its orig has no
	// "latency" key, which under vLLM's definitions meant "this tool
	// version stored none". The records' measured end_ns is the end of
	// the stream vLLM's latency runs to.
	am := imported(manifest(), "aiperf")
	var arecs []*schema.Record
	for range 5 {
		r := withOrig(req(0, 3, 100*ms, 200*ms, 300*ms), `{"metrics":{"request_latency":{"value":300,"unit":"ms"},"time_to_first_token":{"value":100,"unit":"ms"}}}`)
		r.EndNS = 400 * ms
		arecs = append(arecs, r)
	}
	arun := &memRun{m: am, recs: arecs}
	e2e := 1000 * ms
	res := mustReplay(t, arun, Options{Definitions: "vllm", SLO: &SLOSpec{E2ENS: &e2e}})
	p = res.Results[0]
	if d := p.Dists["e2e_ns"]; d.N != 5 || p.Counts.Good != 5 {
		t.Errorf("aiperf import, vllm: e2e n %d, good %d (%q); want 5 and 5", d.N, p.Counts.Good, p.NullReasons)
	}
	for _, n := range res.Notes {
		if strings.Contains(n, "not stored by this tool version") {
			t.Errorf("aiperf import, vllm: note %q", n)
		}
	}
	// The same records, not an import: orig is the publisher's word,
	// not a tool's; AIPerf's definitions do not read it either.
	arun.m = manifest()
	for _, r := range arun.recs {
		r.Orig = json.RawMessage(`{"error":"x","metrics":{"request_latency":{"value":1,"unit":"ms"}}}`)
	}
	p = mustReplay(t, arun, Options{Definitions: "aiperf"}).Results[0]
	if d := p.Dists["e2e_ns"]; d.N != 5 || !sameValue(d.Mean, Float(300e6)) {
		t.Errorf("non-imported run, aiperf: e2e n %d mean %v, want 5 × 300 ms from the records", d.N, d.Mean)
	}
}

// TestVLLMUnstoredLatencyIsNullNotAMiss:
// a vLLM or SGLang file without per-request latency, under an e2e or TPOT
// limit, gave goodput 0 and attainment 0 (every request "missed" a limit
// on a value nobody stored). They are null with the reason, and so are
// the e2e and TPOT distributions; a TTFT-only SLO still judges.
func TestVLLMUnstoredLatencyIsNullNotAMiss(t *testing.T) {
	ms := int64(1e6)
	for _, tool := range []string{"vllm", "sglang"} {
		m := imported(manifest(), tool)
		var recs []*schema.Record
		for range 10 {
			recs = append(recs, withOrig(req(0, 3, 60*ms, 130*ms, 200*ms), `{"error":"","ttft":0.06,"itl":[0.07,0.07],"output_len":3,"input_len":10,"duration":5.0}`))
		}
		run := &memRun{m: m, recs: recs}
		ttft, e2e, tpot := 1000*ms, 100_000*ms, 1000*ms
		for _, slo := range []SLOSpec{{TTFTNS: &ttft, E2ENS: &e2e}, {TTFTNS: &ttft, TPOTNS: &tpot}, {E2ENS: &e2e}} {
			p := mustReplay(t, run, Options{Definitions: tool, SLO: &slo}).Results[0]
			for _, k := range []string{"goodput", "slo_attainment", "slo_attainment_ok"} {
				if !p.Scalars[k].IsNull() || !strings.Contains(p.NullReasons[k], "latency not stored") {
					t.Errorf("%s: %s = %v (%q), want null with the reason", tool, k, p.Scalars[k], p.NullReasons[k])
				}
			}
			if v, _ := p.Count("good"); !v.IsNull() {
				t.Errorf("%s: counts.good = %v, want null", tool, v)
			}
			for _, k := range []string{"e2e_ns", "tpot_ns"} {
				if p.Dists[k].N != 0 || !strings.Contains(p.NullReasons[k], "latency not stored") {
					t.Errorf("%s: %s n %d reason %q, want null with the reason", tool, k, p.Dists[k].N, p.NullReasons[k])
				}
			}
		}
		// A TTFT limit alone is judged; a TTFT miss is a miss whatever
		// the latency.
		short := 10 * ms
		for _, c := range []struct {
			slo  SLOSpec
			good int64
		}{{SLOSpec{TTFTNS: &ttft}, 10}, {SLOSpec{TTFTNS: &short, E2ENS: &e2e}, 0}} {
			p := mustReplay(t, run, Options{Definitions: tool, SLO: &c.slo}).Results[0]
			if v, _ := p.Count("good"); v.IsNull() || p.Counts.Good != c.good {
				t.Errorf("%s: counts.good %v (%q), want %d", tool, v, p.NullReasons["counts.good"], c.good)
			}
		}
	}
}

// distServeRun is a goodput test vector in the style of DistServe's
// (Zhong et al., OSDI 2024, SLO attainment): five requests, one a
// one-token answer; under TTFT 250 ms and TPOT 50 ms 3 pass with
// one_token pass and 2 with fail.
func distServeRun() *memRun {
	ms := int64(1e6)
	mk := func(ttft, tpot, n int64) *schema.Record {
		return req(0, n, ttft*ms, ttft*ms+tpot*ms*(n-1))
	}
	return &memRun{m: manifest(), recs: []*schema.Record{mk(150, 40, 100), mk(300, 60, 50), mk(250, 0, 1), mk(100, 50, 10), mk(260, 30, 20)}}
}

// TestPeerOneTokenPolicyIsPrinted: six
// peer definitions printed the SLO's one-token policy but applied their
// own. The applied policy is printed, a note names the tool's rule, and
// a claim under an SLO that states the other policy is not recomputable
// under those definitions.
func TestPeerOneTokenPolicyIsPrinted(t *testing.T) {
	ms := int64(1e6)
	run := distServeRun()
	for _, c := range []struct {
		def, fixed string
		good       int64
	}{{"vllm", "pass", 3}, {"sglang", "pass", 3}, {"aiperf", "fail", 2}, {"genai-perf", "fail", 2}, {"inference-perf", "fail", 2}, {"mlperf", "fail", 2}, {"llmperf", "", 0}, {"guidellm", "", 0}} {
		for _, stated := range []string{"pass", "fail"} {
			slo := &SLOSpec{TTFTNS: ptr(250 * ms), TPOTNS: ptr(50 * ms), OneToken: stated}
			res := mustReplay(t, run, Options{Definitions: c.def, SLO: slo})
			want, good := c.fixed, c.good
			if want == "" {
				want, good = stated, map[string]int64{"pass": 3, "fail": 2}[stated]
			}
			if over := c.fixed != "" && c.fixed != stated; over != (res.SLO.OverriddenOneToken == stated) {
				t.Errorf("%s, SLO one_token %s: overridden %q", c.def, stated, res.SLO.OverriddenOneToken)
			}
			if res.SLO.OneToken != want || res.Results[0].Counts.Good != good {
				t.Errorf("%s, SLO one_token %s: printed %s, good %d; want %s, %d", c.def, stated, res.SLO.OneToken, res.Results[0].Counts.Good, want, good)
			}
			noted := false
			for _, n := range res.Notes {
				noted = noted || strings.Contains(n, "one_token "+want+" applied")
			}
			if noted != (c.fixed != "") || (c.fixed != "" && c.fixed != stated && !strings.Contains(strings.Join(res.Notes, "\n"), "overriding the SLO's one_token "+stated)) {
				t.Errorf("%s, SLO one_token %s: notes %q", c.def, stated, res.Notes)
			}
			// Claims: SLO metrics under the other policy are refused;
			// the rest, and the same policy, are checked.
			good0 := float64(res.Results[0].Counts.Good)
			att, _ := res.Results[0].Scalars["slo_attainment"].Float64()
			run.c = &schema.Claims{Schema: schema.ClaimsSchemaV1, Definitions: c.def, Tolerance: 1e-9,
				SLO: &schema.SLO{TTFT: schema.Duration(250 * ms), TPOT: schema.Duration(50 * ms), OneToken: stated},
				Points: []schema.PointClaim{{Point: "p", Metrics: []schema.Claim{
					{Metric: "counts.good", Value: good0}, {Metric: "slo_attainment", Value: att}, {Metric: "summary.goodput.median", Value: 1},
					{Metric: "counts.ok", Value: 5}}}}}
			cks, err := ClaimChecker{}.CheckClaims(context.Background(), run)
			if err != nil {
				t.Fatal(err)
			}
			refuse := c.fixed != "" && c.fixed != stated
			for _, ck := range cks {
				switch {
				case ck.Metric == "counts.ok":
					if ck.Outcome != schema.ClaimMatched {
						t.Errorf("%s %s: counts.ok claim %s %q", c.def, stated, ck.Outcome, ck.Reason)
					}
				case refuse:
					if ck.Outcome != schema.ClaimNotRecomputable || !strings.Contains(ck.Reason, "not computable under "+c.def) {
						t.Errorf("%s %s: %s claim %s %q, want not recomputable", c.def, stated, ck.Metric, ck.Outcome, ck.Reason)
					}
				case ck.Metric != "summary.goodput.median" && ck.Outcome != schema.ClaimMatched:
					t.Errorf("%s %s: %s claim %s %q, want matched", c.def, stated, ck.Metric, ck.Outcome, ck.Reason)
				}
			}
			run.c = nil
		}
	}
}

// TestPeerSweepFollowsDefinitions:
// --sweep-slo under a peer --definitions was computed with benchseal's
// rules, so one report held two goodputs for one SLO. At the SLO's own
// limit the sweep now equals the replay's goodput and attainment, for
// every definitions and swept metric.
func TestPeerSweepFollowsDefinitions(t *testing.T) {
	ms := int64(1e6)
	runs := map[string]*memRun{"distserve": distServeRun(), "random": genRun(3, 120)}
	for name, run := range runs {
		for _, def := range DefinitionNames() {
			for _, metric := range []string{"ttft", "e2e", "tpot"} {
				limits := map[string]int64{"ttft": 250 * ms, "e2e": 600 * ms, "tpot": 50 * ms}
				slo := &SLOSpec{TTFTNS: ptr(limits["ttft"]), E2ENS: ptr(limits["e2e"]), TPOTNS: ptr(limits["tpot"]), OneToken: "pass"}
				lim := limits[metric]
				res := mustReplay(t, run, Options{Definitions: def, SLO: slo, Sweep: &SweepSpec{Metric: metric, FromNS: lim / 2, ToNS: lim, Steps: 2}})
				for i, p := range res.Results {
					row := res.Sweep.Rows[i]
					g, a := row.Goodput[1], row.Attainment[1]
					if !sameValue(g, p.Scalars["goodput"]) || !sameValue(a, p.Scalars["slo_attainment"]) {
						t.Errorf("%s, %s, sweep of %s at the SLO's limit: goodput %v attainment %v; the replay's %v %v", name, def, metric, g, a, p.Scalars["goodput"], p.Scalars["slo_attainment"])
					}
				}
			}
		}
	}
}

func sameValue(a, b Value) bool {
	if a.IsNull() || b.IsNull() {
		return a.IsNull() == b.IsNull()
	}
	x, _ := a.Float64()
	y, _ := b.Float64()
	return x == y || math.Abs(x-y) <= 1e-12*math.Abs(y)
}

// TestVLLMLatencyRunsToTheEndOfTheStream: vLLM's and SGLang's definitions name the latency to the end
// of the stream but used the last content chunk. On records without
// orig.latency the latency is end_ns − sent_ns; when the source did not
// measure end_ns it is null with the reason.
func TestVLLMLatencyRunsToTheEndOfTheStream(t *testing.T) {
	ms := int64(1e6)
	r := req(0, 3, 100*ms, 550*ms, 1000*ms)
	r.EndNS = 1500 * ms
	run := &memRun{m: manifest(), recs: []*schema.Record{r}}
	for _, def := range []string{"vllm", "sglang"} {
		p := mustReplay(t, run, Options{Definitions: def, SLO: &SLOSpec{E2ENS: ptr(1200 * ms)}}).Results[0]
		e, _ := p.Dists["e2e_ns"].Mean.Float64()
		tp, _ := p.Dists["tpot_ns"].Mean.Float64()
		if e != 1500e6 || tp != 700e6 || p.Counts.Good != 0 {
			t.Errorf("%s: e2e %v, tpot %v, good %d; want 1500 ms, (1500 − 100)/2 = 700 ms, 0 (1500 ms > 1200 ms)", def, e, tp, p.Counts.Good)
		}
	}
	prov := &schema.Provenance{}
	prov.Set(schema.FieldEnd, schema.FieldDerived, "the last chunk")
	run.m.Provenance = prov
	p := mustReplay(t, run, Options{Definitions: "vllm"}).Results[0]
	if p.Dists["e2e_ns"].N != 0 || !strings.Contains(p.NullReasons["e2e_ns"], "end of the stream") {
		t.Errorf("derived end_ns: e2e n %d reason %q, want null with the reason", p.Dists["e2e_ns"].N, p.NullReasons["e2e_ns"])
	}
}

// TestPeerTokenGoodputNullHasReason: no peer tool defines a token goodput,
// so under every peer definition it is null with that reason, which every output format prints from NullReasons.
func TestPeerTokenGoodputNullHasReason(t *testing.T) {
	run := distServeRun()
	for _, def := range []string{"vllm", "sglang", "aiperf", "genai-perf", "inference-perf", "mlperf", "llmperf", "guidellm"} {
		res := mustReplay(t, run, Options{Definitions: def, SLO: &SLOSpec{TTFTNS: ptr(int64(250e6))}})
		for _, p := range res.Results {
			if !p.Scalars["token_goodput"].IsNull() {
				t.Errorf("%s: token_goodput %v, want null", def, p.Scalars["token_goodput"])
			}
			if r, ok := p.NullReason("token_goodput"); !ok || !strings.Contains(r, def+"'s definitions define no token goodput") {
				t.Errorf("%s: token_goodput null reason %q", def, r)
			}
		}
	}
}

// TestGuideLLMTokenRatesUseChunkTimes:
// under GuideLLM's definitions a run that is not a GuideLLM import put
// every output token at its request's last token although the records
// hold each chunk's time, so staggered requests ending together gave a
// token rate far above the tokens produced per second. Each chunk's
// tokens now sit at its arrival; without measured chunk times the token
// rates are null with the reason.
func TestGuideLLMTokenRatesUseChunkTimes(t *testing.T) {
	ms := int64(1e6)
	var recs []*schema.Record
	for i := range 8 {
		var ch []int64
		for j := 1; j <= 10; j++ {
			ch = append(ch, int64(j)*100*ms)
		}
		recs = append(recs, req(int64(i)*ms, 10, ch...))
	}
	run := &memRun{m: manifest(), recs: recs}
	bs := mustReplay(t, run, Options{}).Results[0]
	gl := mustReplay(t, run, Options{Definitions: "guidellm"}).Results[0]
	want, _ := bs.Scalars["output_token_throughput"].Float64()
	got, _ := gl.Scalars["output_token_throughput"].Float64()
	if gl.Scalars["output_token_throughput"].IsNull() || got > 1.5*want || got < want/1.5 {
		t.Errorf("guidellm output_token_throughput %v, want near the %v tok/s produced (tokens at their chunks' times)", got, want)
	}
	if d := gl.Dists["output_tokens_per_second"]; d.N != 80 {
		t.Errorf("guidellm output_tokens_per_second n %d, want 80 tokens", d.N)
	}

	m := manifest()
	m.Provenance = &schema.Provenance{}
	m.Provenance.Set(schema.FieldChunks, schema.FieldAbsent, "the tool stores no chunk times")
	p := mustReplay(t, &memRun{m: m, recs: recs}, Options{Definitions: "guidellm"}).Results[0]
	for _, k := range []string{"output_token_throughput", "output_tokens_per_second", "total_token_throughput"} {
		if !strings.Contains(p.NullReasons[k], "chunks_ns not measured") {
			t.Errorf("chunk times absent, guidellm: %s reason %q, want null for chunks_ns not measured", k, p.NullReasons[k])
		}
	}
	if p.Scalars["output_token_throughput"].IsNull() == false || p.Dists["output_tokens_per_second"].N != 0 {
		t.Errorf("chunk times absent, guidellm: token rates %v / n %d, want null", p.Scalars["output_token_throughput"], p.Dists["output_tokens_per_second"].N)
	}
}
