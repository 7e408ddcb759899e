package demo

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// TestDemoRuns runs scripts/demo.sh as "make demo" does: in a directory laid
// out like the repository (scripts/demo.sh, bin/benchseal built from this
// repository, testdata/ the repository's), with DEMO_OUT in a temporary
// directory. The demo must exit 0. It took 3 min 57 s on an idle 2-core
// machine and 4 min 12 s beside four busy loops (2026-12-05): most of it
// is steps 9 and 12's time-scale-1 captures. The timeout allows for more.
func TestDemoRuns(t *testing.T) {
	for _, tool := range []string{"bash", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			t.Skipf("%s is not installed", tool)
		}
	}
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	for _, d := range []string{"scripts", "bin"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	script, err := os.ReadFile(filepath.Join(root, "scripts", "demo.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "scripts", "demo.sh"), script, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "testdata"), filepath.Join(dir, "testdata")); err != nil {
		t.Fatal(err)
	}
	build := exec.Command("go", "build", "-o", filepath.Join(dir, "bin", "benchseal"), "./cmd/benchseal")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}

	ctx, cancel := context.WithTimeout(context.Background(), 8*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", filepath.Join(dir, "scripts", "demo.sh"))
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DEMO_OUT="+filepath.Join(dir, "demo-out"), "NO_COLOR=1")
	// The demo's simulators run in the background; a killed bash would
	// leave them holding the output pipe, so the wait is bounded too.
	cmd.WaitDelay = 10 * time.Second
	start := time.Now()
	out, err := cmd.CombinedOutput()
	if err != nil {
		// The tail holds the demo's own reason (its checks print it
		// last); the program's error lines may come before it.
		t.Fatalf("scripts/demo.sh failed after %s: %v\nits error lines:\n%s\nits last lines:\n%s",
			time.Since(start).Round(time.Millisecond), err, errorLines(string(out)), tail(string(out), 60))
	}
	if !strings.Contains(string(out), "Demo finished") {
		t.Fatalf("scripts/demo.sh exited 0 without finishing:\n%s", tail(string(out), 60))
	}
	// Its output here is a pipe, as in a log file: no escape sequences
	// (bold step headers are for a terminal).
	if i := strings.IndexByte(string(out), 0x1b); i >= 0 {
		t.Errorf("scripts/demo.sh wrote an escape sequence to a pipe: %q", string(out)[max(0, i-40):min(len(out), i+40)])
	}
	checkOutput(t, string(out))
	checkDecideExample(t, string(out), filepath.Join(dir, "demo-out"), filepath.Join(root, "docs", "compare.md"))
	t.Logf("scripts/demo.sh ran in %s", time.Since(start).Round(time.Millisecond))
}

// checkOutput holds the demo's printed commands to what a reader can paste
// and its energy decision to bounds that close.
func checkOutput(t *testing.T, out string) {
	t.Helper()
	// The reader learns once what $OUT is and what opens the keys.
	for _, want := range []string{"\nOUT=", "\nexport BENCHSEAL_PASSWORD=demo-only-password "} {
		if !strings.Contains("\n"+out, want) {
			t.Errorf("the demo does not print %q", strings.TrimPrefix(want, "\n"))
		}
	}
	// An argument with spaces is printed quoted, so it pastes as one word.
	for _, want := range []string{"--title 'demo pre-registered sweep'", "--set 'engine.name=simulator preset a'"} {
		if !strings.Contains(out, want) {
			t.Errorf("the demo does not print %s quoted", want)
		}
	}
	// Every simulator it starts is printed with its flags: the first
	// server, the overload one, the publisher's preset, presets a and b,
	// and the reviewer's two.
	if n := strings.Count(out, "$ benchseal simulate --listen 127.0.0.1:0 "); n != 7 {
		t.Errorf("the demo prints %d simulate commands, want the 7 it starts", n)
	}
	// Step 11's scrapes are frequent enough that every point's energy
	// bounds can close.
	for _, bad := range []string{"shorter than two accelerator scrape intervals", "rests on central values"} {
		if strings.Contains(out, bad) {
			t.Errorf("the demo's energy decision prints %q", bad)
		}
	}
	if !strings.Contains(out, "excerpt of the claim rows") || !strings.Contains(out, "--margin 50%") {
		t.Errorf("step 12 does not label its claim rows an excerpt with their margin")
	}
}

// checkDecideExample holds docs/compare.md's example of the demo's decision
// to what the demo's decide commands print: each answer the docs show, from
// its decision table on, has the lines the demo prints for the same
// objective, and no other. Lines are compared by their shape (every number
// one digit, runs of spaces one space, config-a and config-b one name), as the
// figures move from run to run and a note about one configuration can come
// and go with them; a documented line with " … " stands for every line that
// starts and ends as it does (elided columns).
func checkDecideExample(t *testing.T, out, demoOut, doc string) {
	t.Helper()
	b, err := os.ReadFile(doc)
	if err != nil {
		t.Fatal(err)
	}
	_, ex, ok := strings.Cut(string(b), "## Example: the demo's decision")
	if ok {
		_, ex, ok = strings.Cut(ex, "```\n")
		ex, _, _ = strings.Cut(ex, "```")
	}
	if !ok {
		t.Fatalf("%s has no example of the demo's decision", doc)
	}
	documented := answers(ex, func(cmd string) bool { return true })
	if len(documented) == 0 {
		t.Fatalf("%s's example of the demo's decision shows no decide command", doc)
	}
	printed := answers(strings.ReplaceAll(out, demoOut+"/", ""), func(cmd string) bool {
		return strings.Contains(cmd, "--out $OUT/decision") && strings.HasSuffix(cmd, ".txt")
	})
	for obj, want := range documented {
		have, ok := printed[obj]
		if !ok {
			t.Errorf("%s shows decide --objective %s; the demo runs no such decision", doc, obj)
			continue
		}
		for _, w := range want {
			if overloadNote(w) {
				continue
			}
			if !slices.ContainsFunc(have, func(h string) bool { return sameShape(w, h) }) {
				t.Errorf("%s shows, for --objective %s, a line the demo does not print:\n%s", doc, obj, w)
			}
		}
		for _, h := range have {
			if overloadNote(h) {
				continue
			}
			if !slices.ContainsFunc(want, func(w string) bool { return sameShape(w, h) }) {
				t.Errorf("the demo prints, for --objective %s, a line %s does not show:\n%s", obj, doc, h)
			}
		}
	}
}

// overloadNote reports whether line is one of decide's notes on what the
// overload test decided at a point: that depends on how the simulated
// points kept up on this machine at its load (one run decided "kept up",
// another "could not decide in 5 of 5 repeats"), so neither the example
// nor the demo's output must hold it.
func overloadNote(line string) bool {
	return strings.Contains(line, "overload") || strings.Contains(line, "could not decide") || strings.Contains(line, "did not keep up")
}

// answers returns, per objective, the lines printed from "decision table" on
// after each "$ benchseal decide" line of text that keep accepts, up to the
// next command, step or the demo's closing line.
func answers(text string, keep func(cmd string) bool) map[string][]string {
	m := map[string][]string{}
	obj, in := "", false
	for _, l := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(l, "$ "), strings.HasPrefix(l, "== "), strings.HasPrefix(l, "HTML decision report"):
			obj, in = "", false
			if f := strings.Fields(l); len(f) > 2 && f[2] == "decide" && keep(l) {
				if i := slices.Index(f, "--objective"); i >= 0 && i+1 < len(f) {
					obj = f[i+1]
				}
			}
		case obj != "" && l == "decision table":
			in = true
			m[obj] = append(m[obj], l)
		case in && strings.TrimSpace(l) != "":
			m[obj] = append(m[obj], l)
		}
	}
	return m
}

var (
	digitRuns  = regexp.MustCompile(`[0-9]+`)
	spaceRuns  = regexp.MustCompile(` {2,}`)
	configName = regexp.MustCompile(`config-[ab]`)
)

// shape is line with every run of digits 0, every run of spaces one space
// and config-a and config-b one name.
func shape(line string) string {
	line = digitRuns.ReplaceAllString(line, "0")
	line = configName.ReplaceAllString(line, "config-x")
	return strings.TrimSpace(spaceRuns.ReplaceAllString(line, " "))
}

// sameShape reports whether the demo's line have is the documented line
// want: of the same shape, or, where want elides columns with " … ", of
// the shape of its start and of its end.
func sameShape(want, have string) bool {
	w, h := shape(want), shape(have)
	head, rest, elided := strings.Cut(w, " … ")
	if !elided {
		return w == h
	}
	return len(h) >= len(head)+len(rest) && strings.HasPrefix(h, head) && strings.HasSuffix(h, rest)
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}

// errorLines returns the lines of out that benchseal's commands print
// about an error or a failure (they start "benchseal: "), at most 40.
func errorLines(out string) string {
	var keep []string
	for _, l := range strings.Split(out, "\n") {
		if strings.HasPrefix(l, "benchseal: ") && len(keep) < 40 {
			keep = append(keep, l)
		}
	}
	return strings.Join(keep, "\n")
}
