package replay

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"testing"

	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/synth"
)

// withGLSpill makes every glStream write a sorted run from its third
// event on, read runs two events at a time and merge every two runs of a
// level, with its files in a directory of the test's own (returned).
func withGLSpill(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir)
	held, block, fan := glHeld, glReadBlock, glFanIn
	glHeld, glReadBlock, glFanIn = 3, 2, 2
	t.Cleanup(func() { glHeld, glReadBlock, glFanIn = held, block, fan })
	return dir
}

// noFilesLeft fails when dir holds a file.
func noFilesLeft(t *testing.T, dir string) {
	t.Helper()
	if es, err := os.ReadDir(dir); err != nil || len(es) > 0 {
		t.Errorf("temporary files left in %s: %v (%v)", dir, es, err)
	}
}

func TestPairwiseNextEqualsPairwiseSum(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 1200 {
		a := make([]float64, n)
		for i := range a {
			a[i] = rng.NormFloat64() * math.Pow(10, float64(rng.IntN(30)-15))
		}
		i := 0
		got := pairwiseNext(n, func() float64 { i++; return a[i-1] })
		if want := pairwiseSum(a); math.Float64bits(got) != math.Float64bits(want) || i != n {
			t.Fatalf("n=%d: pairwiseNext %v (%d values read), pairwiseSum %v", n, got, i, want)
		}
	}
}

// glSpillCases are event sets that take every path of the spilled rate
// distribution: stretches of close events merged over many rounds (a
// chain), equal times, events far apart, a window cut, occurrences that
// are fractional (held) or too large to sum exactly (held), and a NaN
// time (held).
func glSpillCases() map[string][]glEvent {
	rng := rand.New(rand.NewPCG(3, 4))
	random := func(n int, spread float64, tokens int) []glEvent {
		ev := make([]glEvent, n)
		for i := range ev {
			ev[i] = glEvent{1.7e9 + rng.Float64()*spread, float64(rng.IntN(tokens))}
		}
		return ev
	}
	chain := make([]glEvent, 300)
	for i := range chain {
		// Gaps just under the threshold: one run merges per round.
		chain[len(chain)-1-i] = glEvent{1.7e9 + float64(i)*0.9e-4, 1}
	}
	equal := random(400, 0.05, 3)
	for i := range equal {
		equal[i].t = equal[i/4].t
	}
	frac := random(200, 0.5, 5)
	frac[17].w = 0.25
	huge := random(200, 0.5, 5)
	huge[3].w = 1 << 52
	nan := random(200, 0.5, 5)
	nan[150].t = math.NaN()
	return map[string][]glEvent{
		"empty":       nil,
		"one":         {{1.7e9, 3}},
		"dense":       random(2000, 0.2, 4),
		"sparse":      random(2000, 200, 40),
		"mixed":       append(random(1000, 0.1, 2), random(1000, 50, 9)...),
		"chain":       chain,
		"equal times": equal,
		"zero tokens": random(500, 1, 1),
		"fractional":  frac,
		"huge":        huge,
		"nan time":    nan,
	}
}

// TestGuideLLMSpilledDistsEqualHeld: GuideLLM's rate and value
// distributions of events spilled to sorted runs and streamed back are
// glRateDist's and glSummarise's of the same events held, to the bit, in
// one stream or two, cut to a window or not; the files are gone after.
func TestGuideLLMSpilledDistsEqualHeld(t *testing.T) {
	dir := withGLSpill(t)
	cases := glSpillCases()
	for name, ev := range cases {
		for _, bounded := range []bool{false, true} {
			start, end := 1.7e9+0.03, 1.7e9+30
			want := glRateDist(ev, start, end, bounded)
			s := newGLStream()
			for _, e := range ev {
				s.add(e)
			}
			if len(ev) > 3 && !s.spilled() {
				t.Errorf("%s: %d events never spilled", name, len(ev))
			}
			got, err := glRateDistStreams([]*glStream{s}, start, end, bounded)
			if err != nil {
				t.Fatalf("%s: %v", name, err)
			}
			if g, w := fmt.Sprintf("%#v", got), fmt.Sprintf("%#v", want); g != w {
				t.Errorf("%s (bounded %v): spilled\n%s\nheld\n%s", name, bounded, g, w)
			}
			s.close()
		}
		// Two streams, as tokens_per_second reads prompt and output.
		other := cases["sparse"]
		want := glRateDist(append(append([]glEvent{}, ev...), other...), 0, 0, false)
		a, b := newGLStream(), newGLStream()
		for _, e := range ev {
			a.add(e)
		}
		for _, e := range other {
			b.add(e)
		}
		got, err := glRateDistStreams([]*glStream{a, b}, 0, 0, false)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := fmt.Sprintf("%#v", got), fmt.Sprintf("%#v", want); g != w {
			t.Errorf("%s and sparse: spilled\n%s\nheld\n%s", name, g, w)
		}
		a.close()
		b.close()
		// The events as (value, weight) pairs of a value distribution.
		xs, ws := make([]float64, len(ev)), make([]float64, len(ev))
		v := newGLValues()
		for i, e := range ev {
			xs[i], ws[i] = e.t-1.7e9, e.w
			v.add(glEvent{xs[i], ws[i]})
		}
		wd := emptyDist()
		wd.N = int64(len(xs))
		glSummarise(&wd, xs, ws)
		gd, err := glValueDistStream(v)
		if err != nil {
			t.Fatal(err)
		}
		if g, w := fmt.Sprintf("%#v", gd), fmt.Sprintf("%#v", wd); g != w {
			t.Errorf("%s as values: spilled\n%s\nheld\n%s", name, g, w)
		}
		v.close()
	}
	noFilesLeft(t, dir)
}

// TestGuideLLMSpilledReplayEqualsHeld: a replay under GuideLLM's
// definitions whose every distribution spills gives the JSON of the one
// that holds them, in one pass and in two, and leaves no file.
func TestGuideLLMSpilledReplayEqualsHeld(t *testing.T) {
	runs := map[string]schema.Run{
		"closed steady": closedLoopRun(3, 8, 16, 800),
		"open steady":   openLoopRun(1, []float64{24}, []int{600}, noLag),
	}
	rd, err := schema.OpenRunDir(synthRunWith(t, func(o *synth.Options) { o.Requests = 3000 }))
	if err != nil {
		t.Fatal(err)
	}
	runs["synth"] = rd
	for name, run := range runs {
		for _, at := range []int64{spillAt, 50} {
			old := spillAt
			spillAt = at
			held, _ := json.Marshal(mustReplay(t, run, Options{Definitions: "guidellm"}))
			var spilled []byte
			t.Run("", func(t *testing.T) {
				dir := withGLSpill(t)
				spilled, _ = json.Marshal(mustReplay(t, run, Options{Definitions: "guidellm"}))
				noFilesLeft(t, dir)
			})
			spillAt = old
			if string(held) != string(spilled) {
				t.Errorf("%s (spillAt %d): the spilled replay's JSON differs from the held one's", name, at)
			}
		}
	}
}
