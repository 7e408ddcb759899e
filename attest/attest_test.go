package attest_test

import (
	"strings"
	"testing"
	"time"

	"github.com/benchseal/benchseal/attest"
)

const md = "sha256:1b10cfaaa000c804b18c0f6e264b193c9f0044b522dade265aa6c69de9f8a41e"

func summary() attest.Summary {
	return attest.Summary{
		RunID: "run-1", ManifestDigest: md, VerifierID: "sha256:abc",
		TimeVerified: time.Date(2026, 3, 4, 5, 6, 7, 0, time.UTC),
		ResourceURI:  attest.ResourceURI("run-1", md),
		Policy:       attest.Descriptor{URI: attest.PolicyURI},
		Inputs:       []attest.Descriptor{{URI: "referrer x", Digest: map[string]string{"sha256": strings.Repeat("a", 64)}}},
		Levels:       []string{attest.LevelIntegrity, attest.LevelRecomputed},
	}
}

func TestStatementRoundTrips(t *testing.T) {
	b, err := attest.Statement(summary())
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"predicateType":"https://slsa.dev/verification_summary/v1"`, `"verificationResult":"PASSED"`, `"timeVerified":"2026-03-04T05:06:07Z"`, `"verifiedLevels":["BENCHSEAL_INTEGRITY","BENCHSEAL_RECOMPUTED"]`} {
		if !strings.Contains(string(b), want) {
			t.Errorf("statement lacks %s:\n%s", want, b)
		}
	}
	again, _ := attest.Statement(summary())
	if string(again) != string(b) {
		t.Fatal("the same summary gives different bytes")
	}
	a, err := attest.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if a.ManifestDigest != md || a.Subject != "run-1" || !a.Has(attest.LevelRecomputed) || a.Has(attest.LevelPlanMatched) || len(a.Inputs) != 1 {
		t.Fatalf("%+v", a)
	}
}

func TestStatementRefusesIncompleteSummary(t *testing.T) {
	for name, mut := range map[string]func(*attest.Summary){
		"digest":    func(s *attest.Summary) { s.ManifestDigest = "sha256:xyz" },
		"verifier":  func(s *attest.Summary) { s.VerifierID = "" },
		"time":      func(s *attest.Summary) { s.TimeVerified = time.Time{} },
		"resource":  func(s *attest.Summary) { s.ResourceURI = "oci://x@sha256:other" },
		"policy":    func(s *attest.Summary) { s.Policy.URI = "" },
		"no levels": func(s *attest.Summary) { s.Levels = nil },
		"slsa":      func(s *attest.Summary) { s.Levels = []string{"SLSA_BUILD_LEVEL_3"} },
	} {
		s := summary()
		mut(&s)
		if _, err := attest.Statement(s); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestParseRejectsBadStatements(t *testing.T) {
	good, _ := attest.Statement(summary())
	for name, b := range map[string]string{
		"not json":        "{",
		"duplicate key":   `{"_type":"https://in-toto.io/Statement/v1","_type":"x"}`,
		"wrong type":      strings.Replace(string(good), "https://in-toto.io/Statement/v1", "https://in-toto.io/Statement/v0.1", 1),
		"wrong predicate": strings.Replace(string(good), "verification_summary/v1", "verification_summary/v0.2", 1),
		"no result":       strings.Replace(string(good), `"verificationResult":"PASSED"`, `"verificationResult":"MAYBE"`, 1),
		"no verifier":     strings.Replace(string(good), `"id":"sha256:abc"`, `"id":""`, 1),
		"two subjects":    strings.Replace(string(good), `"subject":[`, `"subject":[{"name":"x","digest":{"sha256":"`+strings.Repeat("b", 64)+`"}},`, 1),
		"weak digest":     strings.Replace(string(good), `"sha256":"1b10`, `"md5":"1b10`, 1),
	} {
		if _, err := attest.Parse([]byte(b)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// FuzzParse feeds arbitrary payloads to Parse: nothing may panic, and
// whatever parses names a sha256 manifest digest and a verifier.
func FuzzParse(f *testing.F) {
	good, _ := attest.Statement(summary())
	f.Add(good)
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := attest.Parse(b)
		if err != nil {
			return
		}
		if !strings.HasPrefix(a.ManifestDigest, "sha256:") || len(a.ManifestDigest) != 71 || a.VerifierID == "" || len(a.Levels) == 0 {
			t.Fatalf("%+v", a)
		}
	})
}
