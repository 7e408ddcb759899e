package report

import (
	"strings"
	"testing"

	"github.com/benchseal/benchseal/replay"
)

// An overflowed sum prints null with its reason in text, CSV and JSON; a
// session run's sums name their basis.
func TestPrefixExpectedOverflowIsNull(t *testing.T) {
	p := &replay.PrefixExpected{Basis: replay.PrefixBasisSessions, Requests: 2, PromptTokens: 9, Overflow: replay.ReasonPrefixOverflow}
	if got := prefixText(p); !strings.Contains(got, NullText(replay.ReasonPrefixOverflow)) || strings.Contains(got, "expected 0") {
		t.Errorf("text: %q", got)
	}
	for _, kv := range prefixCSV(p) {
		if kv[0] == "prefix_expected.prompt_tokens" {
			t.Errorf("CSV prints prompt_tokens %s of an overflowed sum", kv[1])
		}
	}
	p.Overflow = ""
	if got := prefixText(p); !strings.Contains(got, "of 2 ok later turns after an ok turn: each turn's history") {
		t.Errorf("session text: %q", got)
	}
}
