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
// progress line at all: pack, verify and replay of a run write nothing to
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
