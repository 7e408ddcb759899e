package schema

import (
	"strings"
	"testing"
)

// TestSignerStatementNamesAReproductionAsTheReviewersWord: a reviewer at
// the reproduced level is not said to have done "the same checks, not a
// reproduction"; its reproduction run and stated differences are printed
// as its word.
func TestSignerStatementNamesAReproductionAsTheReviewersWord(t *testing.T) {
	s := SignerStatement("", Vouch{Reviewers: []string{"key sha256:aa"},
		Reproductions: []ReviewerReproduction{{Reviewer: "key sha256:bb", RunManifest: "sha256:cc", Limits: []string{"model differs"}}}})
	for _, want := range []string{
		"attested by reviewer key sha256:aa (the same checks on the same bundle, not a reproduction)",
		"reviewer key sha256:bb states a reproduction, run manifest sha256:cc, on a setup the reviewer states differs (model differs) (the reviewer's word unless the reproduction is present as a referrer)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("statement lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "sha256:bb (the same checks") {
		t.Errorf("the reproducing reviewer is said to have only checked:\n%s", s)
	}
}
