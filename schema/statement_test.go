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
		Reproductions: []ReviewerReproduction{{Reviewer: "key sha256:bb", ManifestJSON: "sha256:cc", Limits: []string{"model differs: a; b"}}}})
	for _, want := range []string{
		"attested by reviewer key sha256:aa (the same checks on the same bundle, not a reproduction)",
		"reviewer key sha256:bb states a reproduction, manifest.json sha256:cc, on a setup the reviewer states differs (model differs) (the reviewer's word: the reproduction is not carried as a referrer)",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("statement lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "sha256:bb (the same checks") {
		t.Errorf("the reproducing reviewer is said to have only checked:\n%s", s)
	}
}

// TestSignerStatementSaysDiffersOnlyWhenAValueDiffers: limits that are
// only unknown are not a different setup; a carried reproduction is said
// to be carried, not "the reviewer's word"; a reviewer who signed twice
// is named once.
func TestSignerStatementSaysDiffersOnlyWhenAValueDiffers(t *testing.T) {
	unknownOnly := []string{"model_revision unknown: declared unknown on a, b", "tokenizer unknown: not stated on a, b"}
	for _, tc := range []struct {
		name    string
		v       Vouch
		want    []string
		notWant []string
	}{
		{"unknown only, carried", Vouch{Reproductions: []ReviewerReproduction{{Reviewer: "key K", ManifestJSON: "sha256:cc", Limits: unknownOnly, Carried: true}}},
			[]string{"manifest.json sha256:cc, on the same stated setup (unknown: model_revision, tokenizer) (carried as a reproduction referrer; its manifest.json digest matches the attestation; its verdicts are as the reviewer states them)"},
			[]string{"differs", "the reviewer's word"}},
		{"one differs", Vouch{Reproductions: []ReviewerReproduction{{Reviewer: "key K", ManifestJSON: "sha256:cc", Limits: append([]string{"hardware differs: a: x; b: y"}, unknownOnly...)}}},
			[]string{"on a setup the reviewer states differs (hardware differs; unknown: model_revision, tokenizer)"}, nil},
		{"same reviewer twice", Vouch{Reviewers: []string{"key K", "key K"}},
			[]string{"attested by reviewer key K (the same"}, []string{"key K, key K"}},
	} {
		s := SignerStatement("", tc.v)
		for _, w := range tc.want {
			if !strings.Contains(s, w) {
				t.Errorf("%s: statement lacks %q:\n%s", tc.name, w, s)
			}
		}
		for _, w := range tc.notWant {
			if strings.Contains(s, w) {
				t.Errorf("%s: statement says %q:\n%s", tc.name, w, s)
			}
		}
	}
}
