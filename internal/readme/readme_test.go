package readme

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// notRun marks a block the test leaves out; the comment must say why.
const notRun = "<!-- not run by the README test:"

// block is one sh block of the README.
type block struct {
	line int // of the opening fence
	text string
	run  bool
}

// shBlocks returns the README's sh blocks, each marked run unless the line
// before its fence is a notRun comment.
func shBlocks(t *testing.T, path string) []block {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []block
	var cur *block
	prev := ""
	sc := bufio.NewScanner(f)
	for n := 1; sc.Scan(); n++ {
		l := sc.Text()
		switch {
		case cur == nil && l == "```sh":
			cur = &block{line: n, run: !strings.HasPrefix(prev, notRun)}
		case cur != nil && l == "```":
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			cur.text += l + "\n"
		}
		prev = l
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if cur != nil {
		t.Fatalf("README.md:%d: sh block never closed", cur.line)
	}
	return out
}

// tourDocs are the files whose runnable sh blocks make up the tour, in the
// order they run: the README's quick start, then the docs pages whose
// examples continue from it in the same directory.
var tourDocs = []string{"README.md", filepath.Join("docs", "trust.md"), filepath.Join("docs", "sharding.md")}

// TestREADMECommandsRun runs the sh blocks of tourDocs in order, as one
// bash script with -e, in a fresh directory where "make build" builds
// bin/benchseal from this repository as the repository's Makefile does
// (without -trimpath, so the build reuses what go test compiled) and
// testdata/ is the repository's. Nothing the user would paste
// may be elided with "...".
func TestREADMECommandsRun(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	var script strings.Builder
	script.WriteString("set -euo pipefail\n")
	for _, doc := range tourDocs {
		ran := 0
		for _, b := range shBlocks(t, filepath.Join(root, doc)) {
			if strings.Contains(b.text, "...") || strings.Contains(b.text, "…") {
				t.Errorf("%s:%d: a command block elides something with an ellipsis; write it out", doc, b.line)
			}
			if !b.run {
				continue
			}
			ran++
			script.WriteString("# " + doc + ":" + strconv.Itoa(b.line) + "\n" + b.text)
		}
		if doc == "README.md" && ran < 4 {
			t.Fatalf("only %d runnable sh blocks in README.md; the tour is missing", ran)
		}
	}
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}

	dir := t.TempDir()
	mk := "build:\n\tcd " + root + " && go build -o " + filepath.Join(dir, "bin", "benchseal") + " ./cmd/benchseal\n"
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte(mk), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(filepath.Join(root, "testdata"), filepath.Join(dir, "testdata")); err != nil {
		t.Fatal(err)
	}
	// The tour runs twice in one directory, with the README's own clean-up
	// line between: a user who runs it again after that line must not meet
	// a refusal to overwrite or a stale bundle.
	cleanup := cleanupLine(t, filepath.Join(root, "README.md"))
	for i, s := range []string{script.String(), cleanup + "\n" + script.String()} {
		ctx, cancel := context.WithTimeout(context.Background(), 6*time.Minute)
		cmd := exec.CommandContext(ctx, "bash", "-c", s)
		cmd.Dir = dir
		// The keys' password comes from the variable: a user at a terminal
		// types one at keygen's prompt, and the test has no terminal.
		cmd.Env = append(os.Environ(), "BENCHSEAL_PASSWORD=readme-tour", "NO_COLOR=1")
		start := time.Now()
		out, err := cmd.CombinedOutput()
		cancel()
		if err != nil {
			t.Fatalf("README commands (run %d of 2) failed after %s: %v\n%s", i+1, time.Since(start).Round(time.Millisecond), err, tail(string(out), 60))
		}
		t.Logf("README commands (run %d of 2) ran in %s", i+1, time.Since(start).Round(time.Millisecond))
	}
	for _, f := range []string{"run.oci.tar", "report.html", "decision.html", "vllm-run/manifest.json", "sharded-run/manifest.json"} {
		if _, err := os.Stat(filepath.Join(dir, f)); err != nil {
			t.Errorf("the tour did not write %s: %v", f, err)
		}
	}
}

// cleanupLine returns the README's clean-up command for running the tour
// again: the backquoted "rm -rf run …" in its prose.
func cleanupLine(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "`rm -rf run ")
	if i < 0 {
		t.Fatal("README.md has no clean-up line (`rm -rf run …`) for running the tour again")
	}
	j := strings.IndexByte(s[i+1:], '`')
	if j < 0 {
		t.Fatal("README.md: the clean-up line is not closed by a backquote")
	}
	return s[i+1 : i+1+j]
}

func tail(s string, n int) string {
	lines := strings.Split(s, "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
