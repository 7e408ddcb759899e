package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact/artifacttest"
)

// TestPushPullUsage checks the exit codes of push and pull that need no
// registry (the round trip is scripts/registry.sh and the
// artifact/registry tests).
func TestPushPullUsage(t *testing.T) {
	dir := t.TempDir()
	p, _ := artifacttest.SignedBundle(t, filepath.Join(dir, "b.tar"))
	cases := []struct {
		name string
		env  map[string]string
		args []string
		code int
		err  string
	}{
		{"push without tag", nil, []string{"push", p, "127.0.0.1:1/bench/run", "--plain-http"}, ExitUsage, "needs a :tag"},
		{"push bad reference", nil, []string{"push", p, "not a ref", "--plain-http"}, ExitUsage, "invalid registry reference"},
		{"push missing bundle", nil, []string{"push", filepath.Join(dir, "nope"), "127.0.0.1:1/bench/run:v1"}, ExitError, "no such file"},
		{"push one argument", nil, []string{"push", p}, ExitUsage, ""},
		{"pull without --out", nil, []string{"pull", "127.0.0.1:1/bench/run:v1"}, ExitUsage, ""},
		{"pull without password", nil, []string{"pull", "127.0.0.1:1/bench/run:v1", "--out", filepath.Join(dir, "x"), "--username", "me"}, ExitUsage, "BENCHSEAL_REGISTRY_PASSWORD"},
		{"pull unreachable", map[string]string{"BENCHSEAL_REGISTRY_PASSWORD": "pw"}, []string{"pull", "127.0.0.1:1/bench/run:v1", "--out", filepath.Join(dir, "x"), "--username", "me", "--plain-http"}, ExitError, "resolve"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runArgs(t, c.env, c.args...)
			if code != c.code || !strings.Contains(errOut, c.err) {
				t.Fatalf("exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", code, c.code, c.err, out, errOut)
			}
		})
	}
}
