package compare

import (
	"math/big"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

// fakeInput is a run with one concurrency point whose repeats have the
// given goodput values (req/s) and TTFT p50 values (ms).
func fakeInput(name string, goodput []int64, ttftMS []int64) *Input {
	m := &schema.Manifest{RunID: name, Evidence: schema.EvidenceSelfRun,
		Client:   schema.Client{Name: "benchseal", Boundary: schema.BoundaryClientStreaming},
		Model:    schema.Model{Name: "org/m", Revision: "r1", Tokenizer: "org/m", Precision: "bf16"},
		Hardware: schema.Hardware{Accelerator: "H100", AcceleratorCount: schema.Count(8)},
		Engine:   schema.Engine{Name: "vllm", Version: "0.9", PrefixCache: schema.CacheEmpty},
		Workload: schema.Workload{SHA256: strings.Repeat("a", 64), InputTokens: &schema.LengthDist{Kind: "fixed", Min: 100, Max: 100}, OutputTokens: &schema.LengthDist{Kind: "fixed", Min: 50, Max: 50}},
		Load:     schema.Load{Mode: schema.ModeConcurrency, Points: []schema.Point{{Name: "c8", Concurrency: 8}}, Repeats: len(goodput)},
	}
	ttft := int64(500e6)
	res := &replay.Result{Definitions: "benchseal", SLO: replay.SLOSpec{TTFTNS: &ttft, OneToken: "pass", Source: "flag"}}
	for i, g := range goodput {
		d := replay.Dist{P: make([]replay.Value, len(replay.Percentiles))}
		for j := range d.P {
			d.P[j] = replay.Null
		}
		for j, p := range replay.Percentiles {
			if p.Key == "p50" {
				d.P[j] = replay.Int(ttftMS[i] * 1e6)
			}
		}
		res.Results = append(res.Results, &replay.PointResult{Point: "c8", Repeat: i,
			Counts:  replay.Counts{Sent: 100, OK: 99, Error: 1},
			Scalars: map[string]replay.Value{"goodput": replay.Int(g), "slo_attainment": replay.Frac(95, 100), "window_ns": replay.Int(1e9), "output_token_throughput": replay.Int(1000), "token_goodput": replay.Int(900)},
			Dists:   map[string]replay.Dist{"ttft_ns": d},
		})
	}
	return &Input{Name: name, Manifest: m, Result: res, Verification: Verification{Status: RunDirectory}}
}

func TestGuardQuantizedWithoutGateRefused(t *testing.T) {
	a, b := fakeInput("a", []int64{10, 11, 12}, []int64{50, 51, 52}), fakeInput("b", []int64{10, 11, 12}, []int64{50, 51, 52})
	b.Manifest.Model.Precision = "fp8"
	g := RunGuard([]*Input{a, b}, GuardOptions{Allow: []string{CheckQualityGate}})
	if g.Verdict != Refused || !strings.Contains(g.Refusals[0], "b is quantized (fp8) and has no quality gate") {
		t.Fatalf("guard: %s %v", g.Verdict, g.Refusals)
	}
	if _, err := Compare([]*Input{a, b}, Options{Guard: GuardOptions{Allow: []string{CheckQualityGate}}}); err == nil {
		t.Error("the quality gate was allowed away")
	}
	b.Manifest.QualityGate = &schema.QualityGate{Check: "lm-eval", Dataset: "mmlu", Metric: "acc", Threshold: 0.7, Result: 0.71, Passed: true}
	g = RunGuard([]*Input{a, b}, GuardOptions{})
	if g.Verdict != WithDifferences || g.Check(CheckPrecision).Status != Differs || g.Check(CheckQualityGate).Status != Pass {
		t.Errorf("with a passing gate: %s %+v", g.Verdict, g.Checks)
	}
}

func TestGuardShowsDifferencesAndUnknowns(t *testing.T) {
	a, b := fakeInput("a", []int64{10, 11, 12}, []int64{50, 51, 52}), fakeInput("b", []int64{10, 11, 12}, []int64{50, 51, 52})
	b.Manifest.Engine.PrefixCache = schema.CacheWarm
	b.Manifest.Evidence = schema.EvidenceVendorRun
	b.Manifest.Model.Revision = ""
	b.Manifest.Unknown = []string{"model.revision"}
	b.Manifest.Client.Boundary = schema.BoundaryServerTimer
	g := RunGuard([]*Input{a, b}, GuardOptions{})
	want := map[string]string{CheckPrefixCache: Differs, CheckEvidence: Differs, CheckRevision: Unknown, CheckBoundary: Differs, CheckWorkload: Pass}
	for c, st := range want {
		if got := g.Check(c).Status; got != st {
			t.Errorf("%s: %s, want %s", c, got, st)
		}
	}
	if d := g.Check(CheckRevision).Detail; d != "declared unknown on b" {
		t.Errorf("revision detail %q", d)
	}
	if g.Verdict != Refused || !strings.Contains(strings.Join(g.Refusals, ";"), "boundary differs (a: client-streaming; b: server-timer)") {
		t.Errorf("boundary: %s %v", g.Verdict, g.Refusals)
	}
	g = RunGuard([]*Input{a, b}, GuardOptions{Allow: []string{CheckBoundary, CheckPrefixCache}})
	if g.Verdict != WithDifferences || !strings.Contains(strings.Join(g.Limits, ";"), "prefix_cache differs (allowed): a: empty; b: warm") {
		t.Errorf("allowed: %s %v", g.Verdict, g.Limits)
	}
}

// TestGuardRefusesAWarmCacheRunBesideACacheOffRun: the prefix-cache
// state compare reads is the one the engine's per-request reports
// measure (replay's PointResult.Cache), not only the declared one, and a
// difference refuses the comparison: two runs both declaring an empty
// cache, one of whose records show every point warm, are not comparable.
func TestGuardRefusesAWarmCacheRunBesideACacheOffRun(t *testing.T) {
	warm := &schema.CacheUse{Requests: 10, PromptTokens: 1000, CachedTokens: 990, FirstCached: 99, FirstPrompt: 100}
	cold := &schema.CacheUse{Requests: 10, PromptTokens: 1000, CachedTokens: 10, FirstCached: 1, FirstPrompt: 100}
	none := &schema.CacheUse{Requests: 10, PromptTokens: 1000, FirstPrompt: 100}
	withCache := func(name string, uses ...*schema.CacheUse) *Input {
		in := fakeInput(name, []int64{10, 11}, []int64{50, 51})
		for i, u := range uses {
			in.Result.Results[i].Cache = u
		}
		return in
	}
	for _, tc := range []struct {
		name      string
		a, b      *Input
		verdict   string
		valueA    string
		valueB    string
		refusalOn string
	}{
		{"declared alike, measured warm beside measured empty", withCache("a", warm, warm), withCache("b", cold, cold), Refused, "warm", "empty", "prefix-cache states differ"},
		{"warm after the first point beside empty", withCache("a", cold, warm), withCache("b", cold, cold), Refused, "warm at 1 of 2 points × repeats", "empty", "prefix-cache states differ"},
		{"measured warm beside declared disabled", withCache("a", warm, warm), func() *Input {
			in := withCache("b")
			in.Manifest.Engine.PrefixCache = schema.CacheDisabled
			return in
		}(), Refused, "warm", "disabled", "prefix-cache states differ"},
		{"declared disabled, nothing cached, beside declared disabled", func() *Input {
			in := withCache("a", none, none)
			in.Manifest.Engine.PrefixCache = schema.CacheDisabled
			return in
		}(), func() *Input {
			in := withCache("b")
			in.Manifest.Engine.PrefixCache = schema.CacheDisabled
			return in
		}(), Comparable, "disabled", "disabled", ""},
		{"declared disabled, records cached, beside declared disabled", func() *Input {
			in := withCache("a", cold, warm)
			in.Manifest.Engine.PrefixCache = schema.CacheDisabled
			return in
		}(), func() *Input {
			in := withCache("b")
			in.Manifest.Engine.PrefixCache = schema.CacheDisabled
			return in
		}(), Refused, "warm at 1 of 2 points × repeats", "disabled", "prefix-cache states differ"},
		{"measured empty beside declared empty", withCache("a", cold, cold), withCache("b"), Comparable, "empty", "empty", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			g := RunGuard([]*Input{tc.a, tc.b}, GuardOptions{})
			c := g.Check(CheckPrefixCache)
			if g.Verdict != tc.verdict || c.Values[0] != tc.valueA || c.Values[1] != tc.valueB {
				t.Fatalf("verdict %s, values %q, want %s with %q, %q (refusals %v)", g.Verdict, c.Values, tc.verdict, tc.valueA, tc.valueB, g.Refusals)
			}
			if tc.refusalOn != "" && !strings.Contains(strings.Join(g.Refusals, ";"), tc.refusalOn) {
				t.Errorf("refusals %v, want one on %q", g.Refusals, tc.refusalOn)
			}
			if tc.verdict == Refused {
				if g := RunGuard([]*Input{tc.a, tc.b}, GuardOptions{Allow: []string{CheckPrefixCache}}); g.Verdict != WithDifferences {
					t.Errorf("allowed: %s %v", g.Verdict, g.Refusals)
				}
			}
		})
	}
}

// A clear winner wins with margin and interval; a synthetic run never
// wins between different hardware; nulls stay null with their reason.
func TestDecide(t *testing.T) {
	a := fakeInput("a", []int64{10, 11, 12, 10, 11}, []int64{50, 51, 52, 50, 51})
	b := fakeInput("b", []int64{20, 21, 22, 20, 21}, []int64{60, 61, 62, 60, 61})
	d, err := Decide([]*Input{a, b}, DecideOptions{Objective: MaxGoodput})
	if err != nil {
		t.Fatal(err)
	}
	if d.Verdict != Winner || d.Winner != 1 || d.Shift == nil || !d.Shift.Bounded || d.Shift.Low <= 0 {
		t.Fatalf("decide: %s %d %+v: %s", d.Verdict, d.Winner, d.Shift, d.Answer)
	}
	if m, _ := d.Margin.Float64(); m < 0.90 || m > 0.92 { // 21/11 − 1
		t.Errorf("margin %v", m)
	}
	// Cost: no price on either side: unknown, no decision.
	d, _ = Decide([]*Input{a, b}, DecideOptions{Objective: MinCostPerGoodToken})
	if d.Verdict != NoDecision || !strings.HasPrefix(d.Rows[0].Cost.NullReason, "unknown: the manifest states no price") {
		t.Errorf("cost: %s %q", d.Verdict, d.Rows[0].Cost.NullReason)
	}
	// Prices in different currencies: no cost decision, no cost test.
	a.Result.Cost = &replay.CostSpec{Currency: "USD", PricePerHour: big.NewRat(10, 1), Text: "10"}
	b.Result.Cost = &replay.CostSpec{Currency: "EUR", PricePerHour: big.NewRat(10, 1), Text: "10"}
	for _, in := range []*Input{a, b} {
		for _, pr := range in.Result.Results {
			pr.Scalars[replay.CostPerMillionGoodTokens] = replay.Int(3)
		}
	}
	d, _ = Decide([]*Input{a, b}, DecideOptions{Objective: MinCostPerGoodToken})
	if d.Verdict != NoDecision || !strings.Contains(d.Answer, "different currencies") {
		t.Errorf("currencies: %s", d.Answer)
	}
	r, _ := Compare([]*Input{a, b}, Options{})
	for _, c := range r.Comparisons {
		if c.Metric.Path == replay.CostPerMillionGoodTokens && (c.Tested || !strings.Contains(c.Note, "different currencies")) {
			t.Errorf("cost compared across currencies: %+v", c)
		}
	}
	a.Result.Cost, b.Result.Cost = nil, nil
	// b is synthetic on other hardware: it cannot win, a is alone.
	b.Manifest.Evidence = schema.EvidenceSynthetic
	b.Manifest.Hardware.Accelerator = "simulator"
	d, _ = Decide([]*Input{a, b}, DecideOptions{Objective: MaxGoodput})
	if d.Winner != -1 || d.Rows[1].Eligible || !strings.Contains(d.Answer, "only a can win, nothing to compare it with: b is a synthetic run and the hardware differs") {
		t.Errorf("synthetic on other hardware: %s / %s", d.Answer, d.Rows[1].Ineligible)
	}
	// Capacity: attainment 95 % ≥ 90 % at concurrency 8 (the only point)
	// in every repeat: the test never crossed the target, so capacity is
	// null, at least 8.
	d, _ = Decide([]*Input{a, b}, DecideOptions{Objective: MaxCapacity, Target: big.NewRat(9, 10)})
	if r := d.Rows[0]; !r.Capacity.Summary.Median.IsNull() || r.CapacityAtLeast.Rat().Cmp(big.NewRat(8, 1)) != 0 {
		t.Errorf("capacity %v, at least %v", r.Capacity.Summary.Median, r.CapacityAtLeast)
	}
}

// Comparisons carry nulls: a metric undefined on one side is not tested
// and says why; the count of tests excludes it.
func TestCompareCarriesNulls(t *testing.T) {
	a := fakeInput("a", []int64{10, 11, 12, 10}, []int64{50, 51, 52, 50})
	b := fakeInput("b", []int64{20, 21, 22, 20}, []int64{60, 61, 62, 60})
	for _, pr := range b.Result.Results {
		pr.Dists["ttft_ns"] = replay.Dist{P: make([]replay.Value, len(replay.Percentiles))}
		pr.NullReasons = map[string]string{"ttft_ns": "the source stored no first-token time"}
	}
	r, err := Compare([]*Input{a, b}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range r.Comparisons {
		if c.Metric.Path == "ttft_ns.p50" {
			if c.Tested || c.Patch.NullReason != "not measured: the source stored no first-token time" || !c.Change.IsNull() {
				t.Errorf("ttft: %+v", c)
			}
		}
		if c.Metric.Path == "goodput" && (!c.Significant || !c.Better) {
			t.Errorf("goodput: %+v", c)
		}
	}
	if r.Tests != 4 { // output token throughput, goodput, token goodput, attainment
		t.Errorf("%d tests", r.Tests)
	}
}

// TestHardwareTextOfASimulatorSaysNoAccelerator: a simulator's stated
// hardware reads as such, never "unknown count × none (…)".
func TestHardwareTextOfASimulatorSaysNoAccelerator(t *testing.T) {
	for _, c := range []struct {
		h    schema.Hardware
		want string
	}{
		{schema.Hardware{Accelerator: schema.HardwareSimulated}, "simulated server (no accelerator)"},
		{schema.Hardware{Accelerator: "NVIDIA H200"}, "unknown count × NVIDIA H200"},
		{schema.Hardware{Accelerator: "NVIDIA H200", AcceleratorCount: schema.Count(8)}, "8 × NVIDIA H200"},
	} {
		if got := HardwareText(&schema.Manifest{Hardware: c.h}); got != c.want {
			t.Errorf("%+v: %q, want %q", c.h, got, c.want)
		}
	}
}

// A workload.sha256 stated without the workload file is
// the publisher's word; the guard's workload check is unknown ("declared,
// not shipped"), never pass, and the comparison carries it as a limit.
// Differing declared hashes still refuse.
func TestGuardWorkloadDeclaredNotShippedIsUnknown(t *testing.T) {
	a, b := fakeInput("a", []int64{10, 11, 12}, []int64{50, 51, 52}), fakeInput("b", []int64{10, 11, 12}, []int64{50, 51, 52})
	b.WorkloadNotShipped = true
	g := RunGuard([]*Input{a, b}, GuardOptions{})
	c := g.Check(CheckWorkload)
	if c.Status != Unknown || !strings.Contains(c.Detail, "declared, not shipped on b") {
		t.Fatalf("workload check %s %q, want unknown, declared, not shipped on b", c.Status, c.Detail)
	}
	if g.Verdict != WithDifferences || !strings.Contains(strings.Join(g.Limits, ";"), "workload unknown: declared, not shipped on b") {
		t.Errorf("verdict %s, limits %v", g.Verdict, g.Limits)
	}
	b.Manifest.Workload.SHA256 = strings.Repeat("b", 64)
	if g := RunGuard([]*Input{a, b}, GuardOptions{}); g.Verdict != Refused {
		t.Errorf("differing declared workloads: %s, want refused", g.Verdict)
	}
}

// TestGuardNamesDifferentClientBuilds: two runs of one client version
// from different builds differ on the client check, which names each
// build's revision and executable digest; one build on both passes.
func TestGuardNamesDifferentClientBuilds(t *testing.T) {
	a, b := fakeInput("a", []int64{10, 11, 12}, []int64{50, 51, 52}), fakeInput("b", []int64{10, 11, 12}, []int64{50, 51, 52})
	clean, dirty := false, true
	a.Manifest.Client.Build = &schema.Build{Module: "github.com/benchseal/benchseal", Version: "v0.3.0", GoVersion: "go1.26.8",
		Revision: strings.Repeat("1", 40), Modified: &clean, ExecutableSHA256: strings.Repeat("a", 64)}
	same := *a.Manifest.Client.Build
	b.Manifest.Client.Build = &same
	if g := RunGuard([]*Input{a, b}, GuardOptions{}); g.Check(CheckClient).Status != Pass {
		t.Fatalf("one build: %+v", g.Check(CheckClient))
	}
	b.Manifest.Client.Build = &schema.Build{Module: "github.com/benchseal/benchseal", Version: "v0.3.0", GoVersion: "go1.26.8",
		Revision: strings.Repeat("2", 40), Modified: &dirty, ExecutableSHA256: strings.Repeat("b", 64)}
	c := RunGuard([]*Input{a, b}, GuardOptions{}).Check(CheckClient)
	want := "a: benchseal [build v0.3.0, rev 111111111111, exe sha256:aaaaaaaaaaaa]; b: benchseal [build v0.3.0, rev 222222222222+modified, exe sha256:bbbbbbbbbbbb]"
	if c.Status != Differs || c.Detail != want {
		t.Errorf("client check %s %q, want differs %q", c.Status, c.Detail, want)
	}
}

// TestGuardSameUnknownsAreNoDifference: when the only limits are facts no
// input states (the revision declared unknown on both), the verdict says so
// instead of "with differences"; stated on one input only, it is one.
func TestGuardSameUnknownsAreNoDifference(t *testing.T) {
	a, b := fakeInput("a", []int64{10, 11, 12}, []int64{50, 51, 52}), fakeInput("b", []int64{10, 11, 12}, []int64{50, 51, 52})
	for _, in := range []*Input{a, b} {
		in.Manifest.Model.Revision = ""
		in.Manifest.Unknown = []string{"model.revision"}
	}
	g := RunGuard([]*Input{a, b}, GuardOptions{})
	if g.Verdict != SameUnknowns || strings.Join(g.UnknownOnAll(), ",") != CheckRevision {
		t.Fatalf("unknown on both: %s %v", g.Verdict, g.UnknownOnAll())
	}
	a.Manifest.Model.Revision, a.Manifest.Unknown = "r1", nil
	if g = RunGuard([]*Input{a, b}, GuardOptions{}); g.Verdict != WithDifferences {
		t.Errorf("stated on a only: %s, want %s", g.Verdict, WithDifferences)
	}
}

// TestLengthChecksStateTheUnit: the length checks print what a length
// counts, and 128 words are not 128 tokens: two runs alike but for the
// unit of their input lengths are refused.
func TestLengthChecksStateTheUnit(t *testing.T) {
	a, b := fakeInput("a", []int64{10, 11, 12}, []int64{50, 51, 52}), fakeInput("b", []int64{10, 11, 12}, []int64{50, 51, 52})
	a.Manifest.Workload.InputTokens.Unit = schema.LengthTokens
	b.Manifest.Workload.InputTokens.Unit = schema.LengthWords
	a.Manifest.Workload.OutputTokens.Unit = schema.LengthTokens
	g := RunGuard([]*Input{a, b}, GuardOptions{})
	in := g.Check(CheckInputLengths)
	if in.Status != Differs || in.Values[0] != "fixed, min 100, max 100, in tokens of the served model" || in.Values[1] != "fixed, min 100, max 100, in words (not tokens)" {
		t.Errorf("input_lengths: %s %q", in.Status, in.Values)
	}
	if out := g.Check(CheckOutputLengths); out.Values[1] != "fixed, min 50, max 50, unit not stated" {
		t.Errorf("output_lengths: %q", out.Values)
	}
	if g.Verdict != Refused {
		t.Errorf("verdict %s, want refused", g.Verdict)
	}
}

// TestSameRunTwiceIsRefused: one run given twice (the same run_id, signed
// again or copied under another name) is not two configurations: compare
// and decide refuse, naming the run id and both inputs, and no --allow
// lifts it.
func TestSameRunTwiceIsRefused(t *testing.T) {
	a, b := fakeInput("a", []int64{10, 11, 12}, []int64{50, 51, 52}), fakeInput("b", []int64{20, 21, 22}, []int64{50, 51, 52})
	b.Manifest.RunID = a.Manifest.RunID
	g := RunGuard([]*Input{a, b}, GuardOptions{Allow: RequiredChecks})
	if g.Verdict != Refused || len(g.Refusals) != 1 || !strings.Contains(g.Refusals[0], "the same run (run_id a) given 2 times (a, b)") {
		t.Fatalf("guard: %s %q", g.Verdict, g.Refusals)
	}
	d, err := Decide([]*Input{a, b}, DecideOptions{Objective: MaxGoodput})
	if err != nil {
		t.Fatal(err)
	}
	if d.Verdict != NoDecision || d.Winner != -1 || !strings.Contains(d.Answer, "run_id a") {
		t.Errorf("decide: %s winner %d %q", d.Verdict, d.Winner, d.Answer)
	}
	if r, err := Compare([]*Input{a, b}, Options{}); err != nil || r.Guard.Verdict != Refused || len(r.Loads) != 0 {
		t.Errorf("compare of one run against itself: %v, %+v", err, r)
	}
}
