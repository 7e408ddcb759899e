package cli

import (
	debugbuildinfo "debug/buildinfo"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/rogpeppe/go-internal/testscript"

	"github.com/benchseal/benchseal/internal/buildinfo"
)

// TestBuiltBinaryScripts runs testdata/built/*.txtar against a benchseal
// binary built by go build from this checkout, with VCS stamping: a test
// binary (what TestScripts runs) carries no revision, so only a real
// build shows that a run names the commit it was built from and the
// executable's digest. It needs git and a checkout; the link reuses the
// build cache of this test's own compile. Go stamps no VCS state in a git
// worktree (.git a file, not a directory: cmd/go looks for the
// directory); there the scripts check the unstamped lines instead
// ([!stamped]), and a clone checks the revision.
func TestBuiltBinaryScripts(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: builds the benchseal binary")
	}
	root, err := filepath.Abs(filepath.Join("..", "..", "..", ".."))
	if err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("git", args...)
		cmd.Dir = root
		out, err := cmd.Output()
		if err != nil {
			t.Skipf("git %s: %v (the test needs a git checkout)", strings.Join(args, " "), err)
		}
		return string(out)
	}
	rev := strings.TrimSpace(git("rev-parse", "HEAD"))
	bin := t.TempDir()
	exe := filepath.Join(bin, "benchseal")
	build := exec.Command("go", "build", "-trimpath", "-buildvcs=true", "-o", exe, "./cmd/benchseal")
	build.Dir = root
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	// Go's rule for vcs.modified: git status --porcelain prints anything
	// (untracked files included). Read after the build, as Go read it.
	modified := strings.TrimSpace(git("status", "--porcelain")) != ""
	sum, err := buildinfo.FileSHA256(exe)
	if err != nil {
		t.Fatal(err)
	}
	bi, err := debugbuildinfo.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	stamped := buildinfo.FromInfo(bi).Revision != ""
	if st, err := os.Stat(filepath.Join(root, ".git")); !stamped && (err != nil || st.IsDir()) {
		t.Fatalf("go build -buildvcs=true stamped no revision in %s, which is no git worktree", root)
	}
	fx := filepath.Join(root, "testdata", "fixtures")
	testscript.Run(t, testscript.Params{
		Dir: "testdata/built",
		Condition: func(cond string) (bool, error) {
			if cond == "stamped" {
				return stamped, nil
			}
			return false, fmt.Errorf("unknown condition %q", cond)
		},
		Setup: func(env *testscript.Env) error {
			env.Setenv("PATH", bin+string(os.PathListSeparator)+env.Getenv("PATH"))
			env.Setenv("REV", rev)
			env.Setenv("MODIFIED", strconv.FormatBool(modified))
			env.Setenv("EXE_SHA256", sum)
			env.Setenv("FIXTURES", fx)
			env.Setenv("SOURCE_DATE_EPOCH", "")
			env.Setenv("NO_COLOR", "1")
			// No phase lines: a slow machine must not add one to a
			// script's stderr (docs/format.md, progress).
			env.Setenv("BENCHSEAL_PROGRESS", "off")
			return nil
		},
	})
}
