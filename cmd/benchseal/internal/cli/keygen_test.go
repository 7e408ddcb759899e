package cli

import (
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
