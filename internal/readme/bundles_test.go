package readme

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestBundlesDocFirstBlockRuns runs the first sh block of docs/bundles.md,
// as written, with bin/benchseal on PATH, no BENCHSEAL_PASSWORD and no
// terminal: the block must state what it needs itself (the password, both
// keys), and the co-signature must leave the publisher's detached file.
func TestBundlesDocFirstBlockRuns(t *testing.T) {
	root, err := filepath.Abs(filepath.Join("..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	blocks := shBlocks(t, filepath.Join(root, "docs", "bundles.md"))
	if len(blocks) == 0 {
		t.Fatal("docs/bundles.md has no sh block")
	}
	dir := t.TempDir()
	bin := filepath.Join(dir, "bin")
	build := exec.Command("go", "build", "-o", filepath.Join(bin, "benchseal"), "./cmd/benchseal")
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build: %v\n%s", err, out)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-c", "set -euo pipefail\n"+blocks[0].text)
	cmd.Dir = dir
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, "BENCHSEAL_PASSWORD=") && !strings.HasPrefix(kv, "PATH=") {
			cmd.Env = append(cmd.Env, kv)
		}
	}
	cmd.Env = append(cmd.Env, "PATH="+bin+string(os.PathListSeparator)+os.Getenv("PATH"), "NO_COLOR=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("docs/bundles.md:%d failed: %v\n%s", blocks[0].line, err, tail(string(out), 40))
	}
	matches, _ := filepath.Glob(filepath.Join(dir, "run.tar.*.sigstore.json"))
	if _, err := os.Stat(filepath.Join(dir, "run.tar.sigstore.json")); err != nil || len(matches) != 1 {
		t.Fatalf("detached signatures: publisher's %v, co-signer's %v", err, matches)
	}
}
