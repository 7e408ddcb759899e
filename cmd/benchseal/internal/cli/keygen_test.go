package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestEmptyPasswordNoteNamesWhy: an empty password typed at the prompt is
// warned about as typed (the warning used to blame a missing terminal the
// user had just typed at), a missing one as missing, an intended one noted.
func TestEmptyPasswordNoteNamesWhy(t *testing.T) {
	for _, c := range []struct {
		src      passwordSource
		intended bool
		want     string
	}{
		{fromPrompt, false, "WARNING: k.key is encrypted with an EMPTY password (nothing was typed at the prompt)"},
		{fromNoPrompt, false, "WARNING: k.key is encrypted with an EMPTY password (BENCHSEAL_PASSWORD is unset and there is no terminal to ask on)"},
		{fromNoPrompt, true, "k.key is encrypted with an empty password (--no-password)"},
	} {
		got := emptyPasswordNote("k.key", c.src, c.intended)
		if !strings.Contains(got, c.want) || c.intended == strings.Contains(got, "WARNING") {
			t.Errorf("source %d, intended %v:\n got %s\nwant %s", c.src, c.intended, got, c.want)
		}
	}
}

// TestKeygenRefusesAnUnchosenEmptyPassword: with BENCHSEAL_PASSWORD unset
// and no terminal, keygen exits 2 and writes nothing (it used to write a
// key with an empty password and exit 0); --no-password makes the key.
func TestKeygenRefusesAnUnchosenEmptyPassword(t *testing.T) {
	dir := t.TempDir()
	prefix := filepath.Join(dir, "k")
	code, _, errOut := runArgs(t, map[string]string{}, "keygen", "--out", prefix)
	if code != ExitUsage || !strings.Contains(errOut, "--no-password") {
		t.Fatalf("keygen without a password: exit %d, want %d naming --no-password\n%s", code, ExitUsage, errOut)
	}
	for _, f := range []string{prefix + ".key", prefix + ".pub"} {
		if _, err := os.Lstat(f); err == nil {
			t.Errorf("%s was written", f)
		}
	}
	if code, _, errOut := runArgs(t, map[string]string{}, "keygen", "--out", prefix, "--no-password"); code != ExitOK {
		t.Fatalf("keygen --no-password: exit %d\n%s", code, errOut)
	}
}
