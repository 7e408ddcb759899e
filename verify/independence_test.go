package verify_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"

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
// have few requests within schema.TwinToleranceNS of their twin in
// another repeat (at most 1 of 64 in the full matrix, time scales 0.001
// and 1, closed loop c1 to c64 and open loop 50 and 500 req/s, seeds 1 to
// 3: BENCHSEAL_MEASURE_TWINS=1 runs it and prints each share), far below
// schema.TwinShare; by default a small part of it runs.
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
				worst := 0.0
				for a := range 3 {
					for b := a + 1; b < 3; b++ {
						c, m := rt.Agreement(0, a, b)
						if m < schema.MinTwinPairs {
							t.Fatalf("%+v: %d matched requests", pt, m)
						}
						worst = max(worst, float64(c)/float64(m))
					}
				}
				if full {
					fmt.Printf("TWINS scale %g c%d rate %g seed %d: worst close share %.3f\n", scale, pt.Concurrency, pt.Rate, seed, worst)
				}
				if tw := twinsOf(t, fr); len(tw) > 0 || worst > schema.TwinShare/5 {
					t.Errorf("scale %g %+v seed %d: worst share %.3f within %d ns, twins %v", scale, pt, seed, worst, schema.TwinToleranceNS, tw)
				}
			}
		}
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
