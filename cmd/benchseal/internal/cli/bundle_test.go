package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact/artifacttest"
)

func runArgs(t *testing.T, env map[string]string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	io := &IO{In: strings.NewReader(""), Out: &out, ErrOut: &errOut, Getenv: func(k string) string { return env[k] }}
	code := run(context.Background(), args, DefaultDeps(io))
	return code, out.String(), errOut.String()
}

// TestBundleExitCodes checks the exit codes of verify: 0 verified, 3
// rejected, 1 error, 2 usage.
func TestBundleExitCodes(t *testing.T) {
	dir := t.TempDir()
	p, pub := artifacttest.SignedBundle(t, filepath.Join(dir, "b.tar"))
	pubPath := filepath.Join(dir, "pub.pem")
	os.WriteFile(pubPath, pub.PEM(), 0o644)
	other := filepath.Join(dir, "other.pem")
	os.WriteFile(other, artifacttest.Reviewer(t).Public().PEM(), 0o644)

	cases := []struct {
		name string
		args []string
		code int
		out  string
	}{
		{"verified", []string{"verify", p, "--key", pubPath}, ExitOK, "VERIFIED"},
		{"wrong key", []string{"verify", p, "--key", other}, ExitRejected, "REJECTED"},
		{"missing bundle", []string{"verify", filepath.Join(dir, "nope.tar"), "--key", pubPath}, ExitError, ""},
		{"missing key file", []string{"verify", p, "--key", filepath.Join(dir, "nope.pem")}, ExitError, ""},
		{"no key", []string{"verify", p}, ExitUsage, ""},
		{"bad output", []string{"verify", p, "--key", pubPath, "--output", "xml"}, ExitUsage, ""},
		{"inspect", []string{"inspect", p}, ExitOK, "signatures (1, NOT verified here)"},
		{"pack no out", []string{"pack", dir}, ExitUsage, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runArgs(t, nil, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, out, errOut)
			}
			if c.out != "" && !strings.Contains(out, c.out) {
				t.Fatalf("stdout lacks %q:\n%s", c.out, out)
			}
		})
	}
	// A corrupted bundle is rejected (3), and so is inspect of garbage.
	data, _ := os.ReadFile(p)
	data[len(data)/2] ^= 1
	bad := filepath.Join(dir, "bad.tar")
	os.WriteFile(bad, data, 0o644)
	if code, out, _ := runArgs(t, nil, "verify", bad, "--key", pubPath); code != ExitRejected {
		t.Fatalf("tampered: exit %d\n%s", code, out)
	}
	os.WriteFile(filepath.Join(dir, "junk.tar"), []byte("not a tar"), 0o644)
	if code, _, _ := runArgs(t, nil, "inspect", filepath.Join(dir, "junk.tar")); code != ExitUsage {
		t.Fatalf("inspect junk: exit %d", code)
	}
	// SOURCE_DATE_EPOCH must be an integer.
	run := artifacttest.WriteRun(t, filepath.Join(dir, "run"), artifacttest.RunOptions{})
	if code, _, _ := runArgs(t, map[string]string{"SOURCE_DATE_EPOCH": "soon"}, "pack", run, "--out", filepath.Join(dir, "x")); code != ExitUsage {
		t.Fatalf("bad SOURCE_DATE_EPOCH: exit %d", code)
	}
	code, out, _ := runArgs(t, map[string]string{"SOURCE_DATE_EPOCH": "1767225600"}, "pack", run, "--out", filepath.Join(dir, "y"))
	if code != ExitOK || !strings.Contains(out, "created    2026-01-01T00:00:00Z") {
		t.Fatalf("exit %d\n%s", code, out)
	}
}
