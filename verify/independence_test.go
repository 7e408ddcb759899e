package verify_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

// twinsOf validates fr's run directory's records with a RecordChecker and
// returns the repeats it finds not independent.
func twinsOf(t *testing.T, fr *forgeRun) []schema.RepeatTwin {
	t.Helper()
	rc := schema.NewRecordChecker(fr.m)
	for i, r := range fr.recs {
		rc.Check("records.jsonl", i+1, r)
	}
	rc.Finish()
	return rc.Summary().Twins
}

// TestHonestRepeatsAreIndependent: honest captures against the simulator
// have no pair of repeats whose paired differences spread less than the
// independence test's floors (BENCHSEAL_MEASURE_TWINS=1 runs the full
// matrix, time scales 0.001 and 1, closed loop c1 to c64 and open loop 50
// and 500 req/s, seeds 1 to 3, and prints each pair's margin: its spread
// over the floor it is held to, on the closer of the two timings); by
// default a small part of it runs.
func TestHonestRepeatsAreIndependent(t *testing.T) {
	scales, seeds := []float64{0.001}, int64(1)
	points := []schema.Point{{Concurrency: 1}, {Concurrency: 16}, {Rate: 500, Arrival: schema.ArrivalConstant}}
	full := os.Getenv("BENCHSEAL_MEASURE_TWINS") != ""
	if full {
		scales, seeds = []float64{0.001, 1}, 3
		points = []schema.Point{{Concurrency: 1}, {Concurrency: 4}, {Concurrency: 16}, {Concurrency: 64}, {Rate: 50, Arrival: schema.ArrivalPoisson}, {Rate: 500, Arrival: schema.ArrivalConstant}}
	}
	for _, scale := range scales {
		for _, pt := range points {
			for seed := int64(1); seed <= seeds; seed++ {
				mode := schema.ModeConcurrency
				if pt.Rate > 0 {
					mode = schema.ModeRate
				}
				pt.Requests = max(64, 4*pt.Concurrency)
				fr := captureSim(t, capture.Plan{Mode: mode, Points: []schema.Point{pt}, Repeats: 3, Seed: seed, InputTokens: 32, OutputTokens: 8}, scale, false, nil)
				rt := schema.NewRepeatTimings(fr.m)
				for _, r := range fr.recs {
					rt.Add(0, r)
				}
				for a := range 3 {
					for b := a + 1; b < 3; b++ {
						m, spread, _ := rt.Spreads(0, a, b)
						if m < schema.MinTwinPairs {
							t.Fatalf("%+v: %d matched requests", pt, m)
						}
						if full {
							fmt.Printf("TWINS scale %g c%d rate %g seed %d repeats %d-%d: spread e2e %d ns, first chunk %d ns\n", scale, pt.Concurrency, pt.Rate, seed, a, b, spread[0], spread[1])
						}
					}
				}
				if tw := twinsOf(t, fr); len(tw) > 0 {
					t.Errorf("scale %g %+v seed %d: honest repeats flagged: %v", scale, pt, seed, tw)
				}
			}
		}
	}
}

// copyRepeat replaces repeat dst of fr with a copy of repeat src's
// requests, moved onto dst's start (or after the end of the repeats
// before it); request i's end_ns moves by dEnd(i)
// and every chunk offset by dChunk(i) (kept within 0 and the end).
func (fr *forgeRun) copyRepeat(src, dst int, dEnd, dChunk func(i int) int64) {
	var from, out []*schema.Record
	base := int64(-1)
	for _, r := range fr.recs {
		switch {
		case r.Repeat == src:
			from = append(from, r)
		case r.Repeat == dst && (base < 0 || r.SentNS < base):
			base = r.SentNS
		}
		if r.Repeat != dst {
			out = append(out, r)
		}
	}
	first := from[0].SentNS
	for _, r := range from {
		first = min(first, r.SentNS)
	}
	// After every request of the repeats before it has ended.
	for _, r := range out {
		if r.Repeat < dst {
			base = max(base, r.EndNS+1_000_000)
		}
	}
	for i, r := range from {
		c := *r
		c.Repeat = dst
		c.ID = strings.Replace(r.ID, fmt.Sprintf(".r%d.", src), fmt.Sprintf(".r%d.", dst), 1)
		c.SentNS = r.SentNS - first + base
		c.EndNS = c.SentNS + (r.EndNS - r.SentNS) + dEnd(i)
		c.ChunksNS = make([]int64, len(r.ChunksNS))
		d := dChunk(i)
		for k, x := range r.ChunksNS {
			c.ChunksNS[k] = min(max(0, x+d), c.EndNS-c.SentNS)
		}
		if r.ScheduledNS != nil {
			s := *r.ScheduledNS - first + base
			c.ScheduledNS = &s
		}
		out = append(out, &c)
	}
	fr.recs = out
}

// TestJitteredCopiesAmongHonestRepeatsAreNotIndependent: of five repeats,
// repeats 2 to 4 are copies of repeat 1. With their chunk offsets moved
// k × 1.5 µs (+ up to 0.375 µs) earlier and end_ns exact, they escaped the
// test that needed both timings within 1 µs, and decide named a winner
// from two real repeats; with both timings jittered request by request
// by up to 1/100 of what the two real repeats differ by, they escape any
// fixed tolerance of a few microseconds. Each copy is now named not
// independent of repeat 1, and the honest capture has no such warning.
func TestJitteredCopiesAmongHonestRepeatsAreNotIndependent(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	cases := []struct {
		name         string
		dEnd, dChunk func(j int64, dst, i int) int64
	}{
		{"chunks moved 1.5 µs × k, end exact",
			func(int64, int, int) int64 { return 0 },
			func(_ int64, dst, _ int) int64 { return -int64(dst-1)*1500 - rng.Int64N(376) }},
		{"both timings jittered by up to 1/100 of the real difference",
			func(j int64, _, _ int) int64 { return -rng.Int64N(j) },
			func(j int64, _, _ int) int64 { return -rng.Int64N(j) }},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			fr := captureServed(t, capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 4, Requests: 100}}, Repeats: 5, Seed: 7, InputTokens: 32, OutputTokens: 8}, 0.01, "", false, nil, serverVariation(4*time.Millisecond))
			if tw := twinsOf(t, fr); len(tw) != 0 {
				t.Fatalf("honest capture: %v", tw)
			}
			rt := schema.NewRepeatTimings(fr.m)
			for _, r := range fr.recs {
				rt.Add(0, r)
			}
			_, real, _ := rt.Spreads(0, 0, 1)
			j := min(real[0], real[1]) / 100
			// Uniform noise in [0, j) spreads the paired differences
			// by about j/4: above the fixed tolerance, so that only the
			// floor taken from the real repeats can catch the copies.
			if j/4 <= schema.TwinToleranceNS {
				t.Fatalf("the real repeats differ by %v ns: too little for the test", real)
			}
			bundle := fr.pack(t)
			for dst := 2; dst <= 4; dst++ {
				fr.copyRepeat(1, dst, func(i int) int64 { return tc.dEnd(j, dst, i) }, func(i int) int64 { return tc.dChunk(j, dst, i) })
			}
			verr, res, err := fr.forge(t, bundle)
			if verr != nil || err != nil || res == nil {
				t.Fatalf("validate %v, verify %v", verr, err)
			}
			for dst := 2; dst <= 4; dst++ {
				found := false
				for _, w := range res.Warnings {
					found = found || strings.Contains(w, fmt.Sprintf("UNVERIFIED independence: point \"c4\" repeat %d is not shown independent of repeat 1", dst))
				}
				if !found {
					t.Errorf("verify: repeat %d not named a copy in %q", dst, res.Warnings)
				}
			}
		})
	}
}

// serverVariation wraps a handler so that each request waits a random
// time in [0, most) before it is served: the request-by-request variation
// of a live server, which the deterministic simulator lacks and a quiet
// machine's scheduling (about 0.1 ms between two repeats here) is too
// small to stand in for.
func serverVariation(most time.Duration) func(http.Handler) http.Handler {
	var mu sync.Mutex
	rng := rand.New(rand.NewPCG(3, 4))
	return func(h http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Path != "/metrics" {
				mu.Lock()
				d := time.Duration(rng.Int64N(int64(most)))
				mu.Unlock()
				time.Sleep(d)
			}
			h.ServeHTTP(w, r)
		})
	}
}

// jitterCopy makes repeat 1 of fr a copy of repeat 0, moved onto repeat
// 1's start, with 1 to 3 ns added to end_ns and every chunk offset.
func (fr *forgeRun) jitterCopy() {
	var r0, out []*schema.Record
	base := int64(-1)
	for _, r := range fr.recs {
		switch {
		case r.Repeat == 0:
			r0 = append(r0, r)
			out = append(out, r)
		case r.Repeat == 1 && (base < 0 || r.SentNS < base):
			base = r.SentNS
		}
		if r.Repeat > 1 {
			out = append(out, r)
		}
	}
	first := r0[0].SentNS
	for _, r := range r0 {
		first = min(first, r.SentNS)
	}
	for i, r := range r0 {
		c := *r
		j := int64(1 + i%3)
		c.Repeat = 1
		c.ID = strings.Replace(r.ID, ".r0.", ".r1.", 1)
		c.SentNS = r.SentNS - first + base
		c.EndNS = c.SentNS + (r.EndNS - r.SentNS) + j
		c.ChunksNS = make([]int64, len(r.ChunksNS))
		for k, x := range r.ChunksNS {
			c.ChunksNS[k] = x + j
		}
		if r.ScheduledNS != nil {
			s := *r.ScheduledNS - first + base
			c.ScheduledNS = &s
		}
		out = append(out, &c)
	}
	fr.recs = out
}

// TestJitteredRepeatCopyIsNotIndependent: repeat 1 made of repeat 0's
// requests, moved onto repeat 1's start with 1 to 3 ns added to end_ns
// and every chunk offset, escaped the exact copy fingerprint and verified
// as a second repeat, collapsing the interval across repeats. verify now
// names it not independent, and replay counts it as repeat 0 (the summary
// across repeats has one value); the honest capture has no such
// warning.
func TestJitteredRepeatCopyIsNotIndependent(t *testing.T) {
	fr := captureSim(t, capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 4, Requests: 100}}, Repeats: 2, Seed: 7, InputTokens: 32, OutputTokens: 8}, 0.01, false, nil)
	fr.write(t)
	wantVerified(t, fr)
	if tw := twinsOf(t, fr); len(tw) != 0 {
		t.Fatalf("honest capture: %v", tw)
	}
	bundle := fr.pack(t)
	fr.jitterCopy()
	verr, res, err := fr.forge(t, bundle)
	if verr != nil || err != nil || res == nil {
		t.Fatalf("validate %v, verify %v", verr, err)
	}
	found := false
	for _, w := range res.Warnings {
		found = found || strings.Contains(w, "UNVERIFIED independence: point \"c4\" repeat 1 is not shown independent of repeat 0")
	}
	if !found {
		t.Errorf("verify: no independence warning in %q", res.Warnings)
	}
	rd, err := schema.OpenRunDir(fr.dir)
	if err != nil {
		t.Fatal(err)
	}
	rr, err := replay.Replay(context.Background(), rd, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := rr.Summary[0].Metrics["e2e_ns.p99"].N; n != 1 {
		t.Errorf("summary across repeats counts %d repeats, want 1 (the copy counted as repeat 0)", n)
	}
	if p := rr.Point("c4", 1); p == nil || p.TwinOf == nil || *p.TwinOf != 0 {
		t.Errorf("replay: repeat 1 not marked a twin of repeat 0: %+v", p)
	}
}
