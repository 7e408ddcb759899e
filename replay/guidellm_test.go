package replay

import (
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

func TestLowerPercentilesFollowEachMethod(t *testing.T) {
	var s intSamples
	for _, x := range seq(1, 100) {
		s.add(x)
	}
	// Canonical nearest rank, exact fractions.
	d := intDist(&s)
	for k, want := range map[string]int64{"p01": 1, "p1": 1, "p5": 5, "p10": 10, "p25": 25, "p50": 50, "p75": 75} {
		ratEq(t, "nearest-rank "+k, pct(d, k), big.NewRat(want, 1))
	}
	// numpy linear: (n − 1)·q between neighbours.
	f := floatDist(fseq(1, 100), 0)
	for k, want := range map[string]float64{"p01": 1.099, "p1": 1.99, "p25": 25.75, "p75": 75.25} {
		if got, _ := pct(f, k).Float64(); math.Abs(got-want) > 1e-12 {
			t.Errorf("numpy %s = %v, want %v", k, got, want)
		}
	}
	// MLPerf floor index ⌊n·p⌋: p25 → sorted[25] = 26.
	ratEq(t, "mlperf p25", pct(mlperfDist(&s), "p25"), big.NewRat(26, 1))
}

func TestGuideLLMRateDistribution(t *testing.T) {
	// Window [0, 10], requests ending at 2, 6 and 10: events (0,0) (2,1)
	// (6,1) (10,1), durations 1, 3, 4, 2, rates 0, 1/3, 1/4, 1/2.
	d := glRateDist([]glEvent{{2, 1}, {6, 1}, {10, 1}, {11, 1}}, 0, 10, true)
	if d.N != 3 {
		t.Errorf("n = %d, want 3 (the event at 11 is outside the window)", d.N)
	}
	check := func(k string, want float64) {
		t.Helper()
		v, _ := d.Field(k)
		if got, _ := v.Float64(); math.Abs(got-want) > 1e-15 {
			t.Errorf("%s = %v, want %v", k, got, want)
		}
	}
	check("mean", 0.3) // = 3 requests ÷ 10 s
	check("min", 0)
	check("max", 0.5)
	check("p10", 0)    // cdf 0.1 at rate 0
	check("p50", 0.25) // cdf 0.5 at 1/4
	check("p75", 1.0/3)
	check("p99", 0.5)
	// Variance Σ(r − 0.3)²·p.
	v := 0.09*0.1 + 0.0025*0.4 + (1.0/3-0.3)*(1.0/3-0.3)*0.3 + 0.04*0.2
	check("stddev", math.Sqrt(v))
}

func TestGuideLLMMergesEventsWithinThreshold(t *testing.T) {
	got := glMergeEvents([]glEvent{{0, 1}, {0.00005, 2}, {0.00009, 4}, {0.00015, 8}, {1, 16}, {1, 32}})
	want := []glEvent{{0, 7}, {0.00015, 8}, {1, 48}}
	if len(got) != len(want) {
		t.Fatalf("merged = %v, want %v", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("event %d = %v, want %v", i, got[i], want[i])
		}
	}
}

func TestGuideLLMLinspace(t *testing.T) {
	got := glLinspace(0, 1, 5)
	for i, w := range []float64{0, 0.25, 0.5, 0.75, 1} {
		if got[i] != w {
			t.Errorf("linspace[%d] = %v, want %v", i, got[i], w)
		}
	}
}

func TestInferencePerfNTPOT(t *testing.T) {
	r := req(0, 4, 100, 200, 300, 400)
	r.EndNS = 1000
	run := &memRun{m: manifest(), recs: []*schema.Record{r}}
	res := mustReplay(t, run, Options{Definitions: "inference-perf"})
	v, ok := res.Results[0].Lookup("normalized_time_per_output_token_ns.mean")
	if f, _ := v.Float64(); !ok || f != 250 {
		t.Errorf("ntpot mean = %v (%v), want (1000 − 0)/4 = 250", v, ok)
	}
}

func TestReplayOfExternalReferenceSaysSo(t *testing.T) {
	m := manifest()
	m.Load.Points = nil
	m.Evidence = schema.EvidenceImported
	m.External = []schema.ExternalRef{{Kind: "mlperf-inference", Version: "5.1.0", Scenario: "Server", Status: "VALID"}}
	res := mustReplay(t, &memRun{m: m}, Options{})
	if len(res.Results) != 0 || len(res.Notes) == 0 || !strings.HasPrefix(res.Notes[0], NoPerRequestData+"; external evidence only (mlperf-inference 5.1.0 Server VALID)") {
		t.Errorf("results %d, notes %q", len(res.Results), res.Notes)
	}
}
