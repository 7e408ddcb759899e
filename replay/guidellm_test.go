package replay

import (
	"math"
	"math/big"
	"math/rand/v2"
	"runtime"
	"slices"
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

// glMergeEventsIterated is the iteration glMergeEvents implements, step by
// step as GuideLLM runs it (O(n) per round, O(n²) on a chain of close
// events): the reference glMergeEvents is checked against. It merges events at equal times (adding occurrences in
// order), then, as GuideLLM's _merge_sorted_times_with_weights, repeatedly
// merges every run of events closer than glMergeThreshold to the run's
// first event into that event (its occurrences become the difference of
// running sums), until no two neighbours are that close. ev is sorted.
func glMergeEventsIterated(ev []glEvent) []glEvent {
	out := ev[:0:0]
	for _, e := range ev {
		if n := len(out); n > 0 && out[n-1].t == e.t {
			out[n-1].w += e.w
			continue
		}
		out = append(out, glEvent{e.t, 0 + e.w})
	}
	for len(out) > 1 {
		n := len(out)
		within := make([]bool, n-1)
		near := false
		for i := range within {
			within[i] = out[i+1].t-out[i].t <= glMergeThreshold
			near = near || within[i]
		}
		if !near {
			break
		}
		// Runs start where within turns true; each ends at the last event
		// no later than its start + threshold.
		var starts, ends []int
		for i, w := range within {
			if w && (i == 0 || !within[i-1]) {
				starts = append(starts, i)
				lim := out[i].t + glMergeThreshold
				j, found := slices.BinarySearchFunc(out, lim, func(e glEvent, t float64) int { return cmpFloat(e.t, t) })
				for found && j < n && out[j].t == lim {
					j++ // side "right": past every equal time
				}
				ends = append(ends, j-1)
			}
		}
		// Drop runs starting inside the previous (original) run.
		if len(starts) > 1 {
			ks, ke := starts[:1], ends[:1]
			for k := 1; k < len(starts); k++ {
				if starts[k] > ends[k-1] {
					ks, ke = append(ks, starts[k]), append(ke, ends[k])
				}
			}
			starts, ends = ks, ke
		}
		cum := make([]float64, n+1)
		for i, e := range out {
			cum[i+1] = cum[i] + e.w
		}
		remove := make([]bool, n)
		for k, s := range starts {
			out[s].w = cum[ends[k]+1] - cum[s]
			for i := s + 1; i <= ends[k]; i++ {
				remove[i] = true
			}
		}
		next := out[:0:0]
		for i, e := range out {
			if !remove[i] {
				next = append(next, e)
			}
		}
		if len(next) == len(out) {
			// Only single-event runs (a gap ≤ threshold that rounds above
			// start + threshold): GuideLLM would loop forever; stop.
			out = next
			break
		}
		out = next
	}
	return out
}

// glMergeEvents gives GuideLLM's round-by-round merge bit for bit: on
// chains of close events, gaps a rounding away from the threshold, times
// near zero and epoch times, whole and fractional occurrences.
func TestGuideLLMMergeEqualsRoundByRound(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for trial := range 20000 {
		n := 1 + rng.IntN(60)
		base := []float64{0, -1.5e-4, 1.7e9, 3.0517578125e-05, 1}[trial%5]
		ev := make([]glEvent, n)
		t0 := base
		for i := range ev {
			switch rng.IntN(4) {
			case 0:
				t0 += glMergeThreshold * (0.5 + rng.Float64())
			case 1:
				t0 += glMergeThreshold // a gap the rounding decides
			case 2:
				t0 += glMergeThreshold * rng.Float64() / 10
			default:
				t0 = math.Nextafter(t0, math.Inf(1))
			}
			w := float64(rng.IntN(5))
			if trial%2 == 1 {
				w = rng.Float64() * math.Pow(10, float64(rng.IntN(30)-15))
			}
			ev[i] = glEvent{t0, w}
		}
		want := glMergeEventsIterated(slices.Clone(ev))
		got := glMergeEvents(slices.Clone(ev))
		if len(got) != len(want) {
			t.Fatalf("trial %d: %d events, want %d\nin   %v\ngot  %v\nwant %v", trial, len(got), len(want), ev, got, want)
		}
		for i := range want {
			if math.Float64bits(got[i].t) != math.Float64bits(want[i].t) || math.Float64bits(got[i].w) != math.Float64bits(want[i].w) {
				t.Fatalf("trial %d: event %d = %v, want %v\nin %v", trial, i, got[i], want[i], ev)
			}
		}
	}
}

// A chain of request ends each closer than the threshold to the one
// before merges one run per GuideLLM round; glMergeEvents does the rounds
// in linear memory, not one list of every gap per round (10,000 events:
// ~1.3 GB allocated round by round).
func TestGuideLLMMergeOfAChainIsLinear(t *testing.T) {
	const n = 10_000
	ev := make([]glEvent, n)
	for i := range ev {
		ev[i] = glEvent{1.7e9 + float64(i)*0.9*glMergeThreshold, 1}
	}
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	got := glMergeEvents(ev)
	runtime.ReadMemStats(&b)
	if alloc := b.TotalAlloc - a.TotalAlloc; alloc > 64*n*8 {
		t.Errorf("merging a chain of %d events allocated %d bytes", n, alloc)
	}
	if len(got) != n/2 {
		t.Errorf("merged to %d events, want %d (pairs)", len(got), n/2)
	}
}
