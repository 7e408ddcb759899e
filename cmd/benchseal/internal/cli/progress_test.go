package cli

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/internal/progress"
)

// fakeClock returns a clock that moves on by step at each reading.
func fakeClock(step time.Duration) func() time.Time {
	t := time.Unix(0, 0)
	return func() time.Time { t = t.Add(step); return t }
}

// TestWorkLineDrawsAfterADelayAtMostFourTimesASecond: on a terminal the
// line appears only after progressDelay, is redrawn at most every
// progressInterval, and clear removes it.
func TestWorkLineDrawsAfterADelayAtMostFourTimesASecond(t *testing.T) {
	var w bytes.Buffer
	l := newWorkLine(&w, true, func(string) string { return "" })
	l.now = fakeClock(10 * time.Millisecond)
	f := l.fn()
	for i := range 300 { // 3 s of updates, one every 10 ms
		f(progress.Update{Phase: "replay: read records", Unit: "records", Done: int64(i + 1), Total: -1})
	}
	draws := strings.Count(w.String(), "\r")
	// From 0.5 s to 3 s, one draw per 250 ms.
	if draws < 9 || draws > 11 {
		t.Errorf("%d draws in 3 s, want about 10: %q", draws, w.String())
	}
	if !strings.HasPrefix(w.String(), "\rreplay: read records: 5") || !strings.Contains(w.String(), "\x1b[K") {
		t.Errorf("first draw %q", w.String()[:min(60, w.Len())])
	}
	w.Reset()
	l.clear()
	if w.String() != "\r\x1b[K" {
		t.Errorf("clear wrote %q", w.String())
	}
	w.Reset()
	l.clear()
	if w.Len() != 0 {
		t.Errorf("a second clear wrote %q", w.String())
	}
}

// TestWorkLineWithoutColorHasNoEscapes: NO_COLOR or TERM=dumb draw and
// clear with carriage returns and blanks only.
func TestWorkLineWithoutColorHasNoEscapes(t *testing.T) {
	for _, env := range []map[string]string{{"NO_COLOR": "1"}, {"TERM": "dumb"}} {
		var w bytes.Buffer
		l := newWorkLine(&w, true, func(k string) string { return env[k] })
		l.now = fakeClock(300 * time.Millisecond)
		f := l.fn()
		for range 3 { // the third comes after progressDelay
			f(progress.Update{Phase: "pack: compress records", Unit: "bytes", Done: 3 << 20, Total: 4 << 20})
		}
		f(progress.Update{Phase: "x", Unit: "records", Done: 1, Total: 2})
		l.clear()
		s := w.String()
		if strings.ContainsRune(s, 0x1b) || !strings.Contains(s, "pack: compress records: 3.0 of 4.0 MiB (75%)") || !strings.Contains(s, "x: 1 of 2 records (50%)") {
			t.Errorf("%v: wrote %q", env, s)
		}
		// The shorter line blanks the rest of the longer one; clear blanks it all.
		if !strings.HasSuffix(s, "\r"+strings.Repeat(" ", len("x: 1 of 2 records (50%)"))+"\r") {
			t.Errorf("%v: not cleared: %q", env, s)
		}
	}
}

// TestNoProgressOffATerminal: stderr that is not a terminal gets no
// redrawn line, and a short run's pack, verify and replay write nothing to
// it but their own messages.
func TestNoProgressOffATerminal(t *testing.T) {
	if newWorkLine(&bytes.Buffer{}, false, func(string) string { return "" }) != nil {
		t.Fatal("a progress line off a terminal")
	}
	dir := t.TempDir()
	run := artifacttest.WriteRun(t, filepath.Join(dir, "run"), artifacttest.RunOptions{Requests: 2000})
	for _, args := range [][]string{
		{"pack", run, "--out", filepath.Join(dir, "b.tar")},
		{"verify", filepath.Join(dir, "b.tar"), "--allow-unsigned"},
		{"replay", run},
	} {
		var out, errOut bytes.Buffer
		if code := Main(args, strings.NewReader(""), &out, &errOut); code != ExitOK {
			t.Fatalf("%v: exit %d: %s", args, code, errOut.String())
		}
		if s := errOut.String(); strings.ContainsAny(s, "\r\x1b") || strings.Contains(s, "records:") {
			t.Errorf("%v: stderr %q", args, s)
		}
	}
}

// TestPhaseLogOffATerminal: off a terminal a phase that runs phaseLogAfter
// gets one plain line when it is seen running that long and one when it
// ends; a shorter phase gets none, and BENCHSEAL_PROGRESS=off turns the
// log off.
func TestPhaseLogOffATerminal(t *testing.T) {
	var w bytes.Buffer
	t0 := time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)
	at := t0
	s := newProgress(&w, false, func(string) string { return "" })
	l, ok := s.(*phaseLog)
	if !ok {
		t.Fatalf("off a terminal: %T, want the phase log", s)
	}
	l.now = func() time.Time { return at }
	f := l.fn()
	step := func(d time.Duration, phase string, done int64) {
		at = t0.Add(d)
		f(progress.Update{Phase: phase, Unit: "records", Done: done, Total: -1})
	}
	step(0, "pack: read records", 0)
	step(time.Second, "pack: read records", 10)
	step(6*time.Second, "pack: read records", 60)
	step(7*time.Second, "pack: read records", 70)
	step(8*time.Second, "pack: compress records", 1)
	step(9*time.Second, "pack: compress records", 2)
	at = t0.Add(10 * time.Second)
	l.clear()
	want := "pack: read records: 60 records, 6s so far\npack: read records: 70 records: done in 8s\n"
	if got := w.String(); got != want {
		t.Errorf("log:\n%q\nwant\n%q", got, want)
	}
	if s := newProgress(&w, false, func(k string) string {
		if k == "BENCHSEAL_PROGRESS" {
			return "off"
		}
		return ""
	}); s.fn() != nil {
		t.Error("BENCHSEAL_PROGRESS=off: a progress func")
	}
}
