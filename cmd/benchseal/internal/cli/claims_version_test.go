package cli

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact/artifacttest"
)

// TestForgedImportClaimsUnderAnOldVersionAreRejected: a real vLLM import
// whose request_throughput and output_token_throughput are claimed ×10,
// with claims naming vllm/2026.11 (the first release's rules, kept) or no
// version, is never VERIFIED: import-rederive fails because the attached
// vLLM file gives the tool's own figures, whatever version the claims
// name. (A claims file naming a version whose rules are not kept is
// invalid: TestClaimsOfAVersionNotKeptAreInvalid in replay.)
func TestForgedImportClaimsUnderAnOldVersionAreRejected(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"BENCHSEAL_PASSWORD": "", "SOURCE_DATE_EPOCH": "1725697651"}
	fx := filepath.Join("..", "..", "..", "..", "testdata", "fixtures", "vllm", "lambdalabs_llama3_8b_h100_prompt10.json")
	if code, out, errOut := runArgs(t, env, "keygen", "--out", filepath.Join(dir, "k"), "--no-password"); code != ExitOK {
		t.Fatalf("keygen: exit %d\n%s%s", code, out, errOut)
	}
	for _, version := range []string{"vllm/2026.11", ""} {
		run := filepath.Join(dir, "run"+strings.ReplaceAll(version, "/", "-"))
		if code, out, errOut := runArgs(t, env, "import", "vllm", fx, "--out", run); code != ExitOK {
			t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
		}
		artifacttest.EditJSON(t, filepath.Join(run, "claims.json"), func(c map[string]any) {
			delete(c, "definitions_version")
			if version != "" {
				c["definitions_version"] = version
			}
			for _, p := range c["points"].([]any) {
				for _, m := range p.(map[string]any)["metrics"].([]any) {
					m := m.(map[string]any)
					if m["metric"] == "request_throughput" || m["metric"] == "output_token_throughput" {
						m["value"] = m["value"].(float64) * 10
					}
				}
			}
		})
		tar := run + ".tar"
		code, out, errOut := runArgs(t, env, "pack", run, "--out", tar, "--key", filepath.Join(dir, "k.key"))
		if code != ExitOK {
			t.Fatalf("pack: exit %d\n%s%s", code, out, errOut)
		}
		code, out, _ = runArgs(t, env, "verify", tar, "--key", filepath.Join(dir, "k.pub"))
		for _, want := range []string{"\nREJECTED", "FAIL    import-rederive  imported run does not re-derive from its source files: claims.json: point \"concurrency-10\" repeat 0 request_throughput: claimed 18.63"} {
			if code != ExitRejected || !strings.Contains(out, want) {
				t.Errorf("verify of claims naming %q: exit %d, want %d and %q in\n%s", version, code, ExitRejected, want, out)
				break
			}
		}
	}
}

// TestForgedPeerClaimsNamingNoVersionAreMismatched: a capture whose claims
// under vLLM's definitions name no version, request_throughput ×10, is
// REJECTED with the claim MISMATCHED under vllm/2026.12 (it was UNVERIFIED,
// the warning saying the records "cannot determine" a value they
// recomputed).
func TestForgedPeerClaimsNamingNoVersionAreMismatched(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"BENCHSEAL_PASSWORD": ""}
	run := filepath.Join(dir, "run")
	for _, args := range [][]string{
		{"capture", "--simulate", "--progress", "never", "--sim-time-scale", "0.01", "--concurrency", "2", "--requests", "20", "--seed", "7", "--out", run},
		{"replay", run, "--definitions", "vllm", "--write-claims", filepath.Join(run, "claims.json")},
		{"keygen", "--out", filepath.Join(dir, "k"), "--no-password"},
	} {
		if code, out, errOut := runArgs(t, env, args...); code != ExitOK {
			t.Fatalf("%s: exit %d\n%s%s", args[0], code, out, errOut)
		}
	}
	artifacttest.EditJSON(t, filepath.Join(run, "claims.json"), func(c map[string]any) {
		delete(c, "definitions_version")
		for _, p := range c["points"].([]any) {
			for _, m := range p.(map[string]any)["metrics"].([]any) {
				if m := m.(map[string]any); m["metric"] == "request_throughput" {
					m["value"] = m["value"].(float64) * 10
				}
			}
		}
	})
	tar := filepath.Join(dir, "run.tar")
	if code, out, errOut := runArgs(t, env, "pack", run, "--out", tar, "--key", filepath.Join(dir, "k.key")); code != ExitOK {
		t.Fatalf("pack: exit %d\n%s%s", code, out, errOut)
	}
	code, out, _ := runArgs(t, env, "verify", tar, "--key", filepath.Join(dir, "k.pub"))
	for _, want := range []string{"\nREJECTED", "FAIL    claims-recompute", "MISMATCHED", "request_throughput", "recomputed under vllm/2026.12"} {
		if code != ExitRejected || !strings.Contains(out, want) {
			t.Fatalf("verify: exit %d, want %d and %q in\n%s", code, ExitRejected, want, out)
		}
	}
	if strings.Contains(out, "cannot determine them") {
		t.Errorf("verify says the records cannot determine claims it recomputed:\n%s", out)
	}
}

// TestDroppedDerivedImportClaimIsRejected: a real LLMPerf import made by
// today's importer (its manifest names the importing build, its claims
// their version) with one derived claim deleted is REJECTED by
// import-rederive; only a bundle of an older importer (no
// source.importer, claims naming no version) turns an absent derived
// claim into a note. Under either, a derived claim present with another
// value is REJECTED.
func TestDroppedDerivedImportClaimIsRejected(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"BENCHSEAL_PASSWORD": "", "SOURCE_DATE_EPOCH": "1725697651"}
	fx := filepath.Join("..", "..", "..", "..", "testdata", "fixtures", "llmperf")
	if code, out, errOut := runArgs(t, env, "keygen", "--out", filepath.Join(dir, "k"), "--no-password"); code != ExitOK {
		t.Fatalf("keygen: exit %d\n%s%s", code, out, errOut)
	}
	cases := []struct {
		name          string
		older, forged bool
		want          []string
	}{
		{"today-dropped", false, false, []string{"\nREJECTED", "FAIL    import-rederive", "number_input_tokens.max: absent, the importer derives 550"}},
		{"older-dropped", true, false, []string{"\nVERIFIED", "today's importer also derives 1 claim(s)", "concurrency-5 number_input_tokens.max = 550"}},
		{"today-forged", false, true, []string{"\nREJECTED", "FAIL    import-rederive", "number_input_tokens.max: claimed 5500, the tool's files give 550"}},
		{"older-forged", true, true, []string{"\nREJECTED", "FAIL    import-rederive", "number_input_tokens.max: claimed 5500, the tool's files give 550"}},
	}
	for _, c := range cases {
		run := filepath.Join(dir, c.name)
		if code, out, errOut := runArgs(t, env, "import", "llmperf", filepath.Join(fx, "groq_70b_individual_responses.json"), filepath.Join(fx, "groq_70b_summary.json"), "--out", run); code != ExitOK {
			t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
		}
		artifacttest.EditJSON(t, filepath.Join(run, "claims.json"), func(cl map[string]any) {
			if c.older {
				delete(cl, "definitions_version")
			}
			for _, p := range cl["points"].([]any) {
				p := p.(map[string]any)
				var kept []any
				for _, m := range p["metrics"].([]any) {
					if m := m.(map[string]any); m["metric"] == "number_input_tokens.max" {
						if !c.forged {
							continue
						}
						m["value"] = 5500.0
					}
					kept = append(kept, m)
				}
				p["metrics"] = kept
			}
		})
		if c.older {
			artifacttest.EditJSON(t, filepath.Join(run, "manifest.json"), func(m map[string]any) {
				delete(m["source"].(map[string]any), "importer")
			})
		}
		tar := run + ".tar"
		if code, out, errOut := runArgs(t, env, "pack", run, "--out", tar, "--key", filepath.Join(dir, "k.key")); code != ExitOK {
			t.Fatalf("%s: pack: exit %d\n%s%s", c.name, code, out, errOut)
		}
		_, out, _ := runArgs(t, env, "verify", tar, "--key", filepath.Join(dir, "k.pub"))
		for _, want := range c.want {
			if !strings.Contains(out, want) {
				t.Errorf("%s: verify lacks %q:\n%s", c.name, want, out)
				break
			}
		}
	}
}
