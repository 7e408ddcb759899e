package attest_test

import (
	"os"
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
	rs := summary()
	rs.Levels = append(rs.Levels, attest.LevelReproduced)
	rs.Reproduction = reproduction(attest.VerdictReproduced)
	if b, err := attest.Statement(rs); err == nil {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		a, err := attest.Parse(b)
		if err != nil {
			return
		}
		if !strings.HasPrefix(a.ManifestDigest, "sha256:") || len(a.ManifestDigest) != 71 || a.VerifierID == "" || len(a.Levels) == 0 {
			t.Fatalf("%+v", a)
		}
		if a.Has(attest.LevelReproduced) && (a.Reproduction == nil || len(a.Reproduction.NotReproduced()) > 0) {
			t.Fatalf("level %s with %+v", attest.LevelReproduced, a.Reproduction)
		}
	})
}

func ptr(v float64) *float64 { return &v }

func reproduction(verdicts ...string) *attest.Reproduction {
	r := &attest.Reproduction{
		RunManifest: attest.Descriptor{URI: "repro/manifest.json", Digest: map[string]string{"sha256": strings.Repeat("c", 64)}},
		Margin:      0.1, Alpha: 0.05,
	}
	for i, v := range verdicts {
		c := attest.ReproducedClaim{Point: "c4", Metric: []string{"ttft_ns.p50", "e2e_ns.p50", "counts.ok"}[i%3], Verdict: v}
		if i%3 != 2 {
			c.Ratio, c.Lo, c.Hi = ptr(1.01), ptr(0.97), ptr(1.04)
		}
		r.Claims = append(r.Claims, c)
	}
	return r
}

// TestReproducedLevelNeedsEveryClaimReproduced: the level is written, and
// read back, only with a reproduction whose every claim is REPRODUCED.
func TestReproducedLevelNeedsEveryClaimReproduced(t *testing.T) {
	s := summary()
	s.Levels = append(s.Levels, attest.LevelReproduced)
	s.Reproduction = reproduction(attest.VerdictReproduced, attest.VerdictReproduced, attest.VerdictReproduced)
	b, err := attest.Statement(s)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"benchsealReproduction":{"runManifest":{"uri":"repro/manifest.json","digest":{"sha256":"cccc`) {
		t.Errorf("statement lacks the reproduction:\n%s", b)
	}
	a, err := attest.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if !a.Has(attest.LevelReproduced) || a.Reproduction == nil || len(a.Reproduction.Claims) != 3 || a.Reproduction.Margin != 0.1 || *a.Reproduction.Claims[0].Hi != 1.04 {
		t.Fatalf("%+v", a)
	}
	again, _ := attest.Statement(s)
	if string(again) != string(b) {
		t.Fatal("the same summary gives different bytes")
	}
	for name, r := range map[string]*attest.Reproduction{
		"one inconclusive":   reproduction(attest.VerdictReproduced, attest.VerdictInconclusive),
		"one not reproduced": reproduction(attest.VerdictNotReproduced, attest.VerdictReproduced),
		"no claims":          reproduction(),
		"no reproduction":    nil,
		"counts only": {RunManifest: attest.Descriptor{Digest: map[string]string{"sha256": strings.Repeat("c", 64)}}, Margin: 0.1, Alpha: 0.05,
			Claims: []attest.ReproducedClaim{{Point: "c4", Metric: "counts.sent", Verdict: attest.VerdictReproduced}, {Point: "c4", Metric: "counts.ok", Verdict: attest.VerdictReproduced}}},
		"a claim twice": func() *attest.Reproduction {
			r := reproduction(attest.VerdictReproduced, attest.VerdictReproduced)
			r.Claims = append(r.Claims, r.Claims[0])
			return r
		}(),
	} {
		s.Reproduction = r
		if _, err := attest.Statement(s); err == nil {
			t.Errorf("%s: level %s written", name, attest.LevelReproduced)
		}
	}
	// Partial results without the level are a valid record.
	s.Levels = s.Levels[:2]
	s.Reproduction = reproduction(attest.VerdictReproduced, attest.VerdictInconclusive)
	if _, err := attest.Statement(s); err != nil {
		t.Errorf("partial reproduction without the level: %v", err)
	}
}

// TestParseRejectsTamperedReproduction: a predicate that claims the level
// beside a verdict that is not REPRODUCED, or a malformed reproduction, is
// not an attestation (the signature over it would verify if the reviewer's
// own tool wrote it: the parser is the check).
func TestParseRejectsTamperedReproduction(t *testing.T) {
	s := summary()
	s.Levels = append(s.Levels, attest.LevelReproduced)
	s.Reproduction = reproduction(attest.VerdictReproduced, attest.VerdictReproduced)
	good, err := attest.Statement(s)
	if err != nil {
		t.Fatal(err)
	}
	g := string(good)
	for name, b := range map[string]string{
		"verdict changed":  strings.Replace(g, `"verdict":"REPRODUCED"`, `"verdict":"NOT REPRODUCED"`, 1),
		"unknown verdict":  strings.Replace(g, `"verdict":"REPRODUCED"`, `"verdict":"MOSTLY"`, 1),
		"reproduction cut": strings.Replace(g, `"benchsealReproduction":`, `"benchsealReproductionX":`, 1),
		"null":             strings.Replace(g, `"benchsealReproduction":{`, `"benchsealReproduction":null,"x":{`, 1),
		"unknown field":    strings.Replace(g, `"margin":0.1`, `"margin":0.1,"marginPercent":10`, 1),
		"margin zero":      strings.Replace(g, `"margin":0.1`, `"margin":0`, 1),
		"alpha too big":    strings.Replace(g, `"alpha":0.05`, `"alpha":0.5`, 1),
		"weak digest":      strings.Replace(g, `"sha256":"cccc`, `"md5":"cccc`, 1),
		"negative ratio":   strings.Replace(g, `"ratio":1.01`, `"ratio":-1.01`, 1),
		"no claims":        strings.Replace(g, `"claims":[`, `"claims":[],"x":[`, 1),
		"duplicate key":    strings.Replace(g, `"margin":0.1`, `"margin":0.1,"margin":0.2`, 1),
		// The level beside an interval outside the predicate's own margin.
		"interval outside the margin": strings.Replace(g, `"hi":1.04`, `"hi":3.13`, 1),
		"ratio without an interval":   strings.Replace(g, `,"lo":0.97,"hi":1.04`, ``, 1),
	} {
		if b == g {
			t.Fatalf("%s: the replacement did not apply", name)
		}
		if _, err := attest.Parse([]byte(b)); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	// The level listed twice in an old-shaped statement, with no field.
	old, _ := attest.Statement(summary())
	bad := strings.Replace(string(old), `"BENCHSEAL_RECOMPUTED"`, `"BENCHSEAL_RECOMPUTED","BENCHSEAL_REPRODUCED"`, 1)
	if _, err := attest.Parse([]byte(bad)); err == nil || !strings.Contains(err.Error(), "without benchsealReproduction") {
		t.Errorf("level without the reproduction: %v", err)
	}
}

// TestParseReadsAttestationsMadeBeforeReproduction: the statement bytes
// benchseal wrote before the reproduction level (testdata, written by
// attest.Statement at commit c648605) still parse, with no reproduction.
func TestParseReadsAttestationsMadeBeforeReproduction(t *testing.T) {
	b, err := os.ReadFile("testdata/vsa-before-reproduction.json")
	if err != nil {
		t.Fatal(err)
	}
	a, err := attest.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	if a.Reproduction != nil || !a.Has(attest.LevelPlanMatched) || a.Has(attest.LevelReproduced) || a.ManifestDigest != md {
		t.Fatalf("%+v", a)
	}
	// And the same summary still gives the same bytes.
	s := summary()
	s.Levels = append(s.Levels, attest.LevelPlanMatched)
	now, _ := attest.Statement(s)
	if string(now) != strings.TrimSpace(string(b)) {
		t.Errorf("statement bytes changed:\n%s\nwas\n%s", now, b)
	}
}
