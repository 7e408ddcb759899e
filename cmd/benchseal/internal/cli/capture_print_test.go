package cli

import (
	"bytes"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/capture"
)

// TestLiveProgressEndsItsLine: a terminal progress line left open (a
// capture that failed before its final progress) is ended, so the next
// message starts on a line of its own; a final line is not ended twice.
func TestLiveProgressEndsItsLine(t *testing.T) {
	var b bytes.Buffer
	l := &liveProgress{w: &b}
	l.render(capture.Progress{Cell: 1, Cells: 2, Point: "c1"})
	l.end()
	if !strings.HasSuffix(b.String(), "\n") {
		t.Errorf("open line not ended: %q", b.String())
	}
	b.Reset()
	l.render(capture.Progress{Cell: 2, Cells: 2, Point: "c1", Final: true})
	l.end()
	if s := b.String(); !strings.HasSuffix(s, "\n") || strings.HasSuffix(s, "\n\n") {
		t.Errorf("final line: %q", s)
	}
}

// Capture's end-of-run summary prints, for every point × repeat, the
// numbers replay prints for it (before: capture's own requests ÷
// duration, 64.67 against replay's 68.34 req/s). Closed and open loop,
// against the simulator.
func TestCaptureSummaryEqualsReplay(t *testing.T) {
	for _, mode := range [][]string{{"--concurrency", "1,3"}, {"--rate", "40,80"}} {
		run := filepath.Join(t.TempDir(), "run")
		args := append([]string{"capture", "--simulate", "--sim-time-scale", "0.01", "--out", run, "--requests", "30", "--repeats", "2", "--progress", "never"}, mode...)
		code, out, errOut := runArgs(t, nil, args...)
		if code != ExitOK {
			t.Fatalf("capture: exit %d\n%s\n%s", code, out, errOut)
		}
		code, rep, errOut := runArgs(t, nil, "replay", run, "--detail")
		if code != ExitOK {
			t.Fatalf("replay: exit %d\n%s", code, errOut)
		}
		// replayed is the first match of re in replay's block of point ×
		// repeat.
		replayed := func(point string, repeat int, re string) string {
			_, block, ok := strings.Cut(rep, fmt.Sprintf("\npoint %s repeat %d\n", point, repeat))
			if !ok {
				t.Fatalf("no block for %s repeat %d in replay's output", point, repeat)
			}
			block, _, _ = strings.Cut(block, "\npoint ")
			m := regexp.MustCompile(re).FindStringSubmatch(block)
			if m == nil {
				t.Fatalf("no %s for %s repeat %d in\n%s", re, point, repeat, block)
			}
			return m[1]
		}
		lines := strings.Split(out, "\n")
		head := slices.IndexFunc(lines, func(l string) bool { return strings.HasPrefix(l, "point ") })
		if head < 0 {
			t.Fatalf("no summary table:\n%s", out)
		}
		rows := 0
		for _, l := range lines[head+1:] {
			f := strings.Fields(l)
			if len(f) < 8 || f[0] == "wrote" || f[0] == "failed" || f[0] == "WARNING:" {
				break
			}
			rows++
			r, _ := strconv.Atoi(f[1])
			check := func(what, got, re string) {
				if want := replayed(f[0], r, re); got != want {
					t.Errorf("%s %s repeat %d: capture prints %s %s, replay %s", mode[0], f[0], r, what, got, want)
				}
			}
			check("request_throughput", f[6], `(?m)^  request_throughput +(\S+) req/s`)
			check("window", f[7], `(?m)^  window +(\S+) ms`)
			flags := f[8:]
			if mode[0] == "--rate" {
				check("achieved arrival rate", f[8], `(?m)^  arrival rate +offered \S+ req/s; achieved (\S+) req/s`)
				check("offered rate", f[10], `(?m)^  arrival rate +offered (\S+) req/s`)
				check("send_lag p99", f[11], `(?m)^  send_lag +.* p99 (\S+) `)
				flags = f[12:]
			}
			// The load flags column names each flag replay sets YES.
			for _, flag := range []string{"overloaded", "generator-limited"} {
				set := replayed(f[0], r, `(?m)^  `+flag+` +(\S+)`) == "YES:"
				if named := strings.Contains(strings.Join(flags, " "), flag); named != set {
					t.Errorf("%s %s repeat %d: capture's load flags %q, replay's %s set %v", mode[0], f[0], r, flags, flag, set)
				}
			}
		}
		if rows != 4 {
			t.Errorf("%s: %d summary rows, want 4:\n%s", mode[0], rows, out)
		}
	}
}
