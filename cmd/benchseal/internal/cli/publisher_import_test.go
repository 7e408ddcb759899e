package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact/artifacttest"
)

func fixture(tool, name string) string {
	return filepath.Join("..", "..", "..", "..", "testdata", "fixtures", tool, name)
}

// TestPackOfAnUndatedImportPrintsTheCommand: importing the README's vLLM
// file (a local date without a zone) or an SGLang file (no date) leaves
// the run's finish time unknown; pack refuses before opening the key
// (exit 1, listed in the README's table) and prints the command that
// states the creation time, then packs and verifies with it.
func TestPackOfAnUndatedImportPrintsTheCommand(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"BENCHSEAL_PASSWORD": ""}
	if code, out, errOut := runArgs(t, env, "keygen", "--out", filepath.Join(dir, "k"), "--no-password"); code != ExitOK {
		t.Fatalf("keygen: exit %d\n%s%s", code, out, errOut)
	}
	cases := []struct {
		tool, file, hint, notHint string
	}{
		{"vllm", "lambdalabs_llama3_8b_h100_prompt10.json", "SOURCE_DATE_EPOCH=$(date -ud '2024-09-07 08:27:31' +%s) benchseal pack", ""},
		{"sglang", "sglang_0101_12_256_64.jsonl", "SOURCE_DATE_EPOCH=$(date +%s) benchseal pack", "date -ud"},
	}
	for _, c := range cases {
		t.Run(c.tool, func(t *testing.T) {
			run := filepath.Join(dir, c.tool+"-run")
			if code, out, errOut := runArgs(t, env, "import", c.tool, fixture(c.tool, c.file), "--out", run); code != ExitOK {
				t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
			}
			tar := filepath.Join(dir, c.tool+".tar")
			// A key that does not exist: the refusal comes first.
			code, out, errOut := runArgs(t, env, "pack", run, "--out", tar, "--key", filepath.Join(dir, "nokey.key"))
			if code != ExitError || !strings.Contains(errOut, "finish_time is unknown") || !strings.Contains(errOut, c.hint) ||
				(c.notHint != "" && strings.Contains(errOut, c.notHint)) {
				t.Fatalf("pack: exit %d, want %d and the hint %q\n%s%s", code, ExitError, c.hint, out, errOut)
			}
			if !readmeExitCodes(t)["pack"][code] {
				t.Errorf("README's command table does not list exit %d for pack", code)
			}
			if _, err := os.Stat(tar); err == nil {
				t.Fatal("a refused pack wrote its output")
			}
			env := map[string]string{"BENCHSEAL_PASSWORD": "", "SOURCE_DATE_EPOCH": "1725697651"}
			if code, out, errOut := runArgs(t, env, "pack", run, "--out", tar, "--key", filepath.Join(dir, "k.key")); code != ExitOK || !strings.Contains(out, "created    2024-09-07T08:27:31Z") {
				t.Fatalf("pack with SOURCE_DATE_EPOCH: exit %d\n%s%s", code, out, errOut)
			}
			code, out, errOut = runArgs(t, env, "verify", tar, "--key", filepath.Join(dir, "k.pub"), "--show-claims")
			if code != ExitOK || !strings.Contains(out, "recomputed") {
				t.Fatalf("verify --show-claims: exit %d\n%s%s", code, out, errOut)
			}
		})
	}
}

// TestWriteClaimsRefusesToReplace: replay --write-claims onto an
// importer's claims.json (LLMPerf's 35 figures) exits 1 and leaves the
// file as it was; --force replaces it.
func TestWriteClaimsRefusesToReplace(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	if code, out, errOut := runArgs(t, nil, "import", "llmperf", fixture("llmperf", "groq_70b_individual_responses.json"),
		fixture("llmperf", "groq_70b_summary.json"), "--out", run); code != ExitOK {
		t.Fatalf("import: exit %d\n%s%s", code, out, errOut)
	}
	claims := filepath.Join(run, "claims.json")
	before, err := os.ReadFile(claims)
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runArgs(t, nil, "replay", run, "--write-claims", claims)
	if code != ExitError || !strings.Contains(errOut, "the file exists") || !strings.Contains(errOut, "--force") {
		t.Fatalf("replay --write-claims onto claims.json: exit %d\n%s%s", code, out, errOut)
	}
	if !readmeExitCodes(t)["replay"][code] {
		t.Errorf("README's command table does not list exit %d for replay", code)
	}
	if after, _ := os.ReadFile(claims); !bytes.Equal(before, after) {
		t.Fatal("the refused write changed claims.json")
	}
	if code, out, errOut := runArgs(t, nil, "replay", run, "--write-claims", claims, "--force"); code != ExitOK {
		t.Fatalf("--force: exit %d\n%s%s", code, out, errOut)
	}
	if after, _ := os.ReadFile(claims); bytes.Equal(before, after) || !bytes.Contains(after, []byte(`"definitions": "benchseal"`)) {
		t.Fatalf("--force did not replace claims.json:\n%s", after)
	}
}

// TestSecondReviewerKeepsTheFirstDetachedAttestation: two reviewers attest
// one bundle; each detached attestation keeps its own file, and a second
// signer's sign says which file it kept.
func TestSecondReviewerKeepsTheFirstDetachedAttestation(t *testing.T) {
	dir := t.TempDir()
	env := map[string]string{"BENCHSEAL_PASSWORD": ""}
	p, pub := artifacttest.SignedBundle(t, filepath.Join(dir, "b.tar"))
	pubPath := filepath.Join(dir, "pub.pem")
	os.WriteFile(pubPath, pub.PEM(), 0o644)
	for _, k := range []string{"r1", "r2"} {
		if code, out, errOut := runArgs(t, env, "keygen", "--out", filepath.Join(dir, k), "--no-password"); code != ExitOK {
			t.Fatalf("keygen: exit %d\n%s%s", code, out, errOut)
		}
	}
	base := p + ".attestation.sigstore.json"
	if code, out, errOut := runArgs(t, env, "attest", p, "--key", filepath.Join(dir, "r1.key"), "--publisher-key", pubPath); code != ExitOK || !strings.Contains(out, "detached   "+base) {
		t.Fatalf("attest r1: exit %d\n%s%s", code, out, errOut)
	}
	first, _ := os.ReadFile(base)
	code, out, errOut := runArgs(t, env, "attest", p, "--key", filepath.Join(dir, "r2.key"), "--publisher-key", pubPath)
	if code != ExitOK || !strings.Contains(out, "kept       "+base) {
		t.Fatalf("attest r2: exit %d\n%s%s", code, out, errOut)
	}
	if again, _ := os.ReadFile(base); !bytes.Equal(first, again) {
		t.Fatal("the second reviewer replaced the first one's detached attestation")
	}
	if m, _ := filepath.Glob(p + ".*.attestation.sigstore.json"); len(m) != 1 {
		t.Fatalf("second reviewer's detached attestation: %v", m)
	}
	code, out, errOut = runArgs(t, env, "sign", p, "--key", filepath.Join(dir, "r1.key"))
	if code != ExitOK || !strings.Contains(out, "kept       "+p+".sigstore.json") {
		t.Fatalf("co-sign: exit %d\n%s%s", code, out, errOut)
	}
	// A detached file given as the bundle names the bundle it belongs to.
	m, _ := filepath.Glob(p + ".*.sigstore.json")
	for _, f := range m {
		if code, _, errOut := runArgs(t, env, "verify", f, "--key", pubPath); code != ExitUsage || !strings.Contains(errOut, "give the bundle it belongs to ("+p+")") {
			t.Errorf("verify %s: exit %d\n%s", f, code, errOut)
		}
	}
}
