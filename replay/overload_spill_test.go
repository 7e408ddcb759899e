package replay

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/synth"
)

// withOverloadSpill makes every group write its overload data to the
// spill file from its second request on, in chunks of two entries or so,
// under a temporary directory of the test's own, for one test.
func withOverloadSpill(t *testing.T) {
	t.Helper()
	held, chunk := overloadHeld, spillChunk
	overloadHeld, spillChunk = 0, 2*maxSpillEntry
	t.Setenv("TMPDIR", t.TempDir())
	t.Cleanup(func() { overloadHeld, spillChunk = held, chunk })
}

// spillRuns are runs that take every path of the overload test: open
// loops steady and overloaded, with lags in and out of schedule order,
// shedding load, short, with fast failures; closed loops steady, queueing
// and in their initial burst.
func spillRuns() map[string]schema.Run {
	late := func(i int) int64 {
		if i%20 == 0 {
			return 30e6
		}
		return 200e3
	}
	grow := func(i int) int64 { return int64(i) * 15e3 }
	fast := openLoopRun(3, []float64{24, 60}, []int{300, 300}, noLag)
	fastFail(fast, 300e6)
	return map[string]schema.Run{
		"open overloaded":   openLoopRun(0, []float64{24, 60}, []int{300, 300}, noLag),
		"open steady":       openLoopRun(1, []float64{24}, []int{600}, noLag),
		"open late lags":    openLoopRun(1, []float64{24}, []int{600}, late),
		"open growing lags": openLoopRun(1, []float64{24}, []int{600}, grow),
		"open few":          openLoopRun(2, []float64{24}, []int{12}, noLag),
		"shed client":       shedRun(1, 120, 1500, 8, true, 0),
		"shed server":       shedRun(1, 120, 1500, 8, false, 0),
		"random 429s":       shedRun(2, 24, 600, 1000, false, 0.02),
		"short overloaded":  shortRun(1, 200, 100, 4, 100e6, 300e6),
		"short steady":      shortRun(1, 12, 25, 4, 100e6, 0),
		"fast failures":     fast,
		"closed steady":     closedLoopRun(3, 8, 16, 800),
		"closed queueing":   closedLoopRun(5, 8, 4, 800),
		"closed burst":      closedLoopRun(3, 100, 4, 100),
	}
}

// TestSpilledOverloadMatchesHeld: the overload test of data written to
// the spill file and read back gives the result of the data held in
// memory, to the bit (the same arithmetic in the same order), on every
// path of the test, in one pass and in two (the second spilling from its
// first request), and its JSON is the same bytes.
func TestSpilledOverloadMatchesHeld(t *testing.T) {
	runs := spillRuns()
	for _, c := range []struct {
		name string
		edit func(*synth.Options)
	}{
		{"synth closed", func(o *synth.Options) { o.Requests = 6000 }},
		{"synth open", func(o *synth.Options) {
			o.Requests, o.Mode, o.Points = 6000, schema.ModeRate, []float64{8, 24, 48}
		}},
	} {
		rd, err := schema.OpenRunDir(synthRunWith(t, c.edit))
		if err != nil {
			t.Fatal(err)
		}
		runs[c.name] = rd
	}
	for name, run := range runs {
		for _, two := range []bool{false, true} {
			at := spillAt
			if two {
				at = 50
			}
			held := replayAt(t, run, at, false)
			spilled := replayAt(t, run, at, true)
			if !reflect.DeepEqual(spilled, held) {
				t.Errorf("%s (two passes %v): the spilled replay differs from the held one", name, two)
			}
			hj, _ := json.Marshal(held)
			sj, _ := json.Marshal(spilled)
			if string(hj) != string(sj) {
				t.Errorf("%s (two passes %v): the spilled replay's JSON differs from the held one's", name, two)
			}
		}
	}
}

// replayAt replays run with spillAt at, its overload data spilled or held.
func replayAt(t *testing.T, run schema.Run, at int64, spill bool) *Result {
	t.Helper()
	old := spillAt
	spillAt = at
	defer func() { spillAt = old }()
	if !spill {
		return mustReplay(t, run, Options{})
	}
	held, chunk := overloadHeld, spillChunk
	overloadHeld, spillChunk = 0, 2*maxSpillEntry
	defer func() { overloadHeld, spillChunk = held, chunk }()
	return mustReplay(t, run, Options{})
}

// TestSpillWithoutTempDirHoldsInMemory: a replay that must spill its
// overload data where no file can be made, or whose file stops taking
// writes, holds the rest in memory and gives exactly the result of the
// data held throughout: the temporary directory bounds the memory, never
// the answer (verify would otherwise reject a good bundle for a missing
// TMPDIR).
func TestSpillWithoutTempDirHoldsInMemory(t *testing.T) {
	for name, run := range spillRuns() {
		want := mustReplay(t, run, Options{})
		withOverloadSpill(t)
		t.Setenv("TMPDIR", filepath.Join(t.TempDir(), "missing"))
		got, err := Replay(context.Background(), run, Options{})
		overloadHeld, spillChunk = 1<<20, 32<<10
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the replay held in memory after a failed spill differs from the held one", name)
		}
	}
	// A file that refuses writes midway: the chunks it holds are read
	// from it, the later ones from memory.
	f, err := os.Create(filepath.Join(t.TempDir(), "ro"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s := &spillFile{}
	s.inMem = false
	s.f = f
	a, _ := s.write([]byte("abc"))
	f.Close() // writes now fail
	b, _ := s.write([]byte("defg"))
	s.f, _ = os.Open(f.Name())
	defer s.f.Close()
	pa, pb := make([]byte, 3), make([]byte, 4)
	if s.readAt(pa, a) != nil || s.readAt(pb, b) != nil || string(pa) != "abc" || string(pb) != "defg" || !s.inMem {
		t.Fatalf("read back %q at %d, %q at %d (in memory %v)", pa, a, pb, b, s.inMem)
	}
}

// TestSpillFileRemovedOnEveryPath: no spill file is left behind by a
// replay that succeeds, by one of two passes, nor by one that fails on a
// record after its groups spilled.
func TestSpillFileRemovedOnEveryPath(t *testing.T) {
	withOverloadSpill(t)
	dir := os.Getenv("TMPDIR")
	left := func(what string) {
		t.Helper()
		if es, err := os.ReadDir(dir); err != nil || len(es) > 0 {
			t.Fatalf("%s: %v left in the temporary directory (%v)", what, es, err)
		}
	}
	mustReplay(t, openLoopRun(0, []float64{24}, []int{600}, noLag), Options{})
	left("one pass")
	rd, err := schema.OpenRunDir(zstdSynthRun(t, 3000))
	if err != nil {
		t.Fatal(err)
	}
	withSpillAt(t, 50)
	mustReplay(t, rd, Options{})
	left("two passes")
	bad := openLoopRun(0, []float64{24}, []int{600}, noLag)
	bad.recs[len(bad.recs)-1].Status = "bogus"
	if _, err := Replay(context.Background(), bad, Options{}); err == nil {
		t.Fatal("a record of unknown status replayed")
	}
	left("failed on a record")
}
