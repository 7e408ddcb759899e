package replay

import (
	"context"
	"math/big"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// hardWorkRun is a pair of runs: 10 requests sent at 0, nine ok
// at 1 s, and a tenth (the hard one) that ends at endS seconds with
// status.
func hardWorkRun(status string, endS int64) *memRun {
	const s = int64(1e9)
	var recs []*schema.Record
	for range 9 {
		recs = append(recs, req(0, 10, s/10, s))
	}
	hard := req(0, 10, s/10, endS*s)
	if status != schema.StatusOK {
		hard.Status, hard.ChunksNS, hard.OutputTokens = status, nil, 0
	}
	return &memRun{m: manifest(), recs: append(recs, hard)}
}

// TestFailingHardWorkCannotRaiseGoodput: the window is the elapsed
// measurement interval, first send to the last end of any measured
// request, ok or failed. A timed-out request keeps its time in the window:
// timing out the hard request at 30 s gave 9 req/s against 1.8 for the run
// that finished it at 5 s while the window stopped at the last ok token.
func TestFailingHardWorkCannotRaiseGoodput(t *testing.T) {
	slo := &SLOSpec{TTFTNS: ptr(int64(500e6)), E2ENS: ptr(int64(2e9)), TPOTNS: ptr(int64(500e6)), OneToken: schema.OneTokenPass}
	goodput := func(run *memRun) *big.Rat {
		t.Helper()
		v := mustReplay(t, run, Options{SLO: slo}).Results[0].Scalars["goodput"]
		if !v.IsExact() {
			t.Fatalf("goodput %v is not a number", v)
		}
		return v.Rat()
	}
	finished := goodput(hardWorkRun(schema.StatusOK, 5))
	ratEq(t, "finished at 5 s", Exact(finished), big.NewRat(9, 5))
	for _, c := range []struct {
		status string
		endS   int64
		want   *big.Rat
	}{
		{schema.StatusTimeout, 30, big.NewRat(9, 30)},
		{schema.StatusTimeout, 5, big.NewRat(9, 5)},
		{schema.StatusError, 5, big.NewRat(9, 5)},
		{schema.StatusCancelled, 5, big.NewRat(9, 5)},
		{schema.StatusRejected, 5, big.NewRat(9, 5)},
	} {
		g := goodput(hardWorkRun(c.status, c.endS))
		ratEq(t, c.status, Exact(g), c.want)
		if g.Cmp(finished) > 0 {
			t.Errorf("%s at %d s raised goodput above the run that finished the request: %v > %v", c.status, c.endS, g, finished)
		}
	}
	// The throughputs share the window.
	p := mustReplay(t, hardWorkRun(schema.StatusTimeout, 30), Options{SLO: slo}).Results[0]
	ratEq(t, "window", p.Scalars["window_ns"], big.NewRat(30e9, 1))
	ratEq(t, "request_throughput", p.Scalars["request_throughput"], big.NewRat(9, 30))
	ratEq(t, "output_token_throughput", p.Scalars["output_token_throughput"], big.NewRat(90, 30))
}

// TestWindowWithoutMeasuredRequestIsNullWithReason: a point and repeat with
// only warmup records has no elapsed window; its window and rates are null
// with the reason, never a silent null.
func TestWindowWithoutMeasuredRequestIsNullWithReason(t *testing.T) {
	w := req(0, 3, 1, 2)
	w.Phase = schema.PhaseWarmup
	p := mustReplay(t, &memRun{m: manifest(), recs: []*schema.Record{w}}, Options{SLO: &SLOSpec{TTFTNS: ptr(int64(10)), OneToken: "pass"}}).Results[0]
	for _, k := range []string{"window_ns", "request_throughput", "goodput", "token_goodput", "output_token_throughput", "total_token_throughput"} {
		if !p.Scalars[k].IsNull() || p.NullReasons[k] != ReasonNothingSent {
			t.Errorf("%s = %v, reason %q", k, p.Scalars[k], p.NullReasons[k])
		}
	}
	if _, ok := p.NullReasons["smooth_goodput"]; ok {
		t.Error("smooth goodput, not asked for, got a reason")
	}
	// The records determine that there is no goodput: a number claimed
	// for it is mismatched, not unverifiable.
	run := &memRun{m: manifest(), recs: []*schema.Record{w}}
	run.m.SLO = schema.SLO{TTFT: 10}
	run.c = &schema.Claims{Schema: schema.ClaimsSchemaV1, Definitions: "benchseal", Tolerance: 1e-9, SLO: &schema.SLO{TTFT: 10},
		Points: []schema.PointClaim{{Point: "p", Metrics: []schema.Claim{{Metric: "goodput", Value: 5}, {Metric: "summary.goodput.median", Value: 5}}}}}
	cks, err := ClaimChecker{}.CheckClaims(context.Background(), run)
	if err != nil {
		t.Fatal(err)
	}
	for _, ck := range cks {
		if ck.Outcome != schema.ClaimMismatched {
			t.Errorf("claim %s on a point with nothing sent: %s (%s), want mismatched", ck.Metric, ck.Outcome, ck.Reason)
		}
	}
}

func TestJoinReasonsStatesEachClauseOnce(t *testing.T) {
	for _, c := range []struct{ a, b, want string }{
		{"", "x", "x"},
		{"x", "", "x"},
		{"x", "x", "x"},
		{"x; y", "y; z", "x; y; z"},
		{"output_tokens not measured (a; b)", "output_tokens not measured (a; b)", "output_tokens not measured (a; b)"},
		{"f not measured (a; b)", "b)", "f not measured (a; b); b)"},
	} {
		if got := JoinReasons(c.a, c.b); got != c.want {
			t.Errorf("JoinReasons(%q, %q) = %q, want %q", c.a, c.b, got, c.want)
		}
	}
}

// TestElapsedWindowNeedsMeasuredEnds: the window reads sent_ns and end_ns;
// when the source did not measure end_ns it is null with that reason,
// never the placeholder ends.
func TestElapsedWindowNeedsMeasuredEnds(t *testing.T) {
	run := hardWorkRun(schema.StatusTimeout, 30)
	run.m.Evidence = schema.EvidenceImported
	run.m.Provenance = &schema.Provenance{}
	run.m.Provenance.Set(schema.FieldEnd, schema.FieldAbsent, "placeholder: the send time")
	slo := &SLOSpec{E2ENS: ptr(int64(2e9)), OneToken: schema.OneTokenPass}
	p := mustReplay(t, run, Options{SLO: slo}).Results[0]
	for _, k := range []string{"window_ns", "goodput", "request_throughput"} {
		if !p.Scalars[k].IsNull() || !strings.Contains(p.NullReasons[k], "end_ns not measured") {
			t.Errorf("%s = %v, reason %q", k, p.Scalars[k], p.NullReasons[k])
		}
	}
}

// TestOldWindowNeedsMeasuredLastChunks: benchseal/2026.11's window ends at
// a last chunk, so it reads sent_ns and last_chunk_ns, not end_ns: without
// measured end_ns it is still computed, without measured last chunks it is
// null with that reason (the current version the other way round).
func TestOldWindowNeedsMeasuredLastChunks(t *testing.T) {
	slo := &SLOSpec{E2ENS: ptr(int64(2e9)), OneToken: schema.OneTokenPass}
	for _, c := range []struct {
		field, version, null string
	}{
		{schema.FieldEnd, "benchseal/2026.11", ""},
		{schema.FieldEnd, "benchseal/2026.12", "end_ns not measured"},
		{schema.FieldLastChunk, "benchseal/2026.11", "last_chunk_ns not measured"},
		{schema.FieldLastChunk, "benchseal/2026.12", ""},
	} {
		run := hardWorkRun(schema.StatusTimeout, 30)
		run.m.Evidence = schema.EvidenceImported
		run.m.Provenance = &schema.Provenance{}
		run.m.Provenance.Set(c.field, schema.FieldAbsent, "placeholder")
		p := mustReplay(t, run, Options{SLO: slo, Version: c.version}).Results[0]
		w := p.Scalars["window_ns"]
		if c.null == "" && (w.IsNull() || p.NullReasons["window_ns"] != "") {
			t.Errorf("%s without %s: window %v (%q), want a window", c.version, c.field, w, p.NullReasons["window_ns"])
		}
		if c.null != "" && (!w.IsNull() || !strings.Contains(p.NullReasons["window_ns"], c.null)) {
			t.Errorf("%s without %s: window %v (%q), want null: %s", c.version, c.field, w, p.NullReasons["window_ns"], c.null)
		}
	}
}
