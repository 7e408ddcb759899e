package cli

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact/artifacttest"
)

// readmeExitCodes reads the README's command table: for each command (the
// first word of its row) the exit codes its last column lists.
func readmeExitCodes(t *testing.T) map[string]map[int]bool {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\| `([a-z]+)[^|]*\\|.*\\| ([^|]*) \\|$")
	cmdName := regexp.MustCompile("(?:^|/ )`([a-z]+)")
	code := regexp.MustCompile(`(^|[ ;,(])([0-3])\b`)
	out := map[string]map[int]bool{}
	_, sec, _ := strings.Cut(string(b), "\n## Commands\n")
	sec, _, _ = strings.Cut(sec, "\n## ")
	for _, line := range strings.Split(sec, "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		codes := map[int]bool{}
		for _, c := range code.FindAllStringSubmatch(m[2], -1) {
			codes[int(c[2][0]-'0')] = true
		}
		out[m[1]] = codes
		// A row may name two commands ("`push BUNDLE REF` / `pull REF ...`").
		first, _, _ := strings.Cut(strings.TrimPrefix(line, "| "), " | ")
		for _, c := range cmdName.FindAllStringSubmatch(first, -1) {
			out[c[1]] = codes
		}
	}
	if len(out) < 10 {
		t.Fatalf("README command table not found (%d rows)", len(out))
	}
	return out
}

// TestExitCodesMatchREADME runs every command with a typical mistake and
// checks the exit code, that the README's command table lists that code
// for the command, and that the message says what is wrong in plain words
// (no raw Go or library error text).
func TestExitCodesMatchREADME(t *testing.T) {
	dir := t.TempDir()
	bundle, pub := artifacttest.SignedBundle(t, filepath.Join(dir, "b.tar"))
	pubPath := filepath.Join(dir, "pub.pem")
	os.WriteFile(pubPath, pub.PEM(), 0o644)
	other := filepath.Join(dir, "other.pem")
	os.WriteFile(other, artifacttest.Reviewer(t).Public().PEM(), 0o644)
	run := artifacttest.WriteRun(t, filepath.Join(dir, "run"), artifacttest.RunOptions{})
	text := filepath.Join(dir, "notes.md")
	os.WriteFile(text, []byte("# notes\n"), 0o644)
	sig := bundle + ".sigstore.json"
	os.WriteFile(sig, []byte(`{"mediaType":"x"}`), 0o644)
	missing := filepath.Join(dir, "nosuch.tar")
	// A run whose manifest declares a load beyond the limits: invalid input.
	huge := artifacttest.WriteRun(t, filepath.Join(dir, "huge"), artifacttest.RunOptions{})
	mf := filepath.Join(huge, "manifest.json")
	mb, err := os.ReadFile(mf)
	if err != nil {
		t.Fatal(err)
	}
	mb = regexp.MustCompile(`"repeats": *[0-9]+`).ReplaceAll(mb, []byte(`"repeats":9000000000000000000`))
	os.WriteFile(mf, mb, 0o644)

	cases := []struct {
		name, want string
		args       []string
		code       int
	}{
		{"verify a run directory", "is a run directory, not a bundle: pack it first (benchseal pack", []string{"verify", run, "--key", pubPath}, ExitUsage},
		{"inspect a run directory", "is a run directory, not a bundle", []string{"inspect", run}, ExitUsage},
		{"push a run directory", "is a run directory, not a bundle", []string{"push", run, "127.0.0.1:1/x:y"}, ExitUsage},
		{"sign a run directory", "is a run directory, not a bundle", []string{"sign", run, "--key", pubPath}, ExitUsage},
		{"verify a text file", "is not a bundle", []string{"verify", text, "--key", pubPath}, ExitUsage},
		{"inspect a text file", "is not a bundle", []string{"inspect", text}, ExitUsage},
		{"replay a signature file", "it is a signature file", []string{"replay", sig}, ExitUsage},
		{"replay under an unknown definitions version", "unknown definitions version", []string{"replay", run, "--definitions-version", "benchseal/2025.01"}, ExitUsage},
		{"verify a missing file", "no such file or directory", []string{"verify", missing, "--key", pubPath}, ExitError},
		{"inspect a missing file", "no such file or directory", []string{"inspect", missing}, ExitError},
		{"verify with the wrong key", "", []string{"verify", bundle, "--key", other}, ExitRejected},
		{"schema unknown", "unknown schema", []string{"schema", "nosuch"}, ExitUsage},
		{"validate a file", "not a run directory", []string{"validate", text}, ExitUsage},
		{"validate a missing path", "no such file or directory", []string{"validate", missing}, ExitError},
		{"merge a run that is no shard", "is not a shard run", []string{"merge", run, "--out", filepath.Join(dir, "m1")}, ExitRejected},
		{"merge without shards", "give the shard run directories", []string{"merge", "--out", filepath.Join(dir, "m2")}, ExitUsage},
		{"merge into an existing --out", "exists and is not empty", []string{"merge", run, "--out", dir}, ExitError},
		{"merge onto its input", "is the command's input", []string{"merge", run, "--out", run}, ExitUsage},
		{"merge a missing path", "no such file or directory", []string{"merge", missing, "--out", filepath.Join(dir, "m3")}, ExitError},
		{"capture a bad shard", "want 0 ≤ index < count", []string{"capture", "--simulate", "--out", filepath.Join(dir, "c4"), "--concurrency", "1", "--requests", "1", "--shard", "3/2"}, ExitUsage},
		{"capture zero repeats", "--repeats 0: want at least 1", []string{"capture", "--simulate", "--out", filepath.Join(dir, "c6"), "--concurrency", "1", "--requests", "1", "--repeats", "0"}, ExitUsage},
		{"capture bad concurrency", `"x" is not a whole number`, []string{"capture", "--simulate", "--out", filepath.Join(dir, "c1"), "--concurrency", "1,x"}, ExitUsage},
		{"capture bad SLO value", "duration", []string{"capture", "--simulate", "--out", filepath.Join(dir, "c2"), "--concurrency", "1", "--requests", "1", "--set", "slo.ttft=300"}, ExitUsage},
		{"capture endpoint without scheme", "http://", []string{"capture", "--endpoint", "localhost:8000", "--model", "m", "--out", filepath.Join(dir, "c3"), "--concurrency", "1", "--requests", "1"}, ExitUsage},
		{"compare bundles without a key", "--allow-unsigned", []string{"compare", bundle, bundle}, ExitUsage},
		{"pack to a zip", "a .tar file", []string{"pack", run, "--out", filepath.Join(dir, "x.zip")}, ExitUsage},
		{"pull to a zip", "a .tar file", []string{"pull", "127.0.0.1:1/x:y", "--out", filepath.Join(dir, "x.zip")}, ExitUsage},
		{"pack with a public key", "is a public key: signing takes the private key", []string{"pack", run, "--out", filepath.Join(dir, "p.tar"), "--key", pubPath}, ExitUsage},
		{"sign with a public key", "is a public key: signing takes the private key", []string{"sign", bundle, "--key", pubPath}, ExitUsage},
		{"replay an invalid run", "load.repeats", []string{"replay", huge}, ExitRejected},
		{"import with a mistyped --set value", "hardware.accelerator_count must be a whole number", []string{"import", "vllm", fixture("vllm", "lambdalabs_llama3_8b_h100_prompt10.json"), "--out", filepath.Join(dir, "i1"), "--set", "hardware.accelerator_count=abc"}, ExitUsage},
		{"import with a misspelt --set field", `unknown manifest field "hardwre"`, []string{"import", "vllm", fixture("vllm", "lambdalabs_llama3_8b_h100_prompt10.json"), "--out", filepath.Join(dir, "i2"), "--set", "hardwre.x=1"}, ExitUsage},
		{"import a trimmed run marked incomplete", `warmup was declared but no record has phase "warmup"`, []string{"import", "aiperf", fixture("aiperf", "aiperf010_c2_profile_export.jsonl"), fixture("aiperf", "aiperf010_c2_profile_export_aiperf.json"), "--out", filepath.Join(dir, "i3"), "--set", "incomplete=true", "--set", "incomplete_reason=trimmed"}, ExitRejected},
		{"capture a tpot limit without one_token", `field "slo.one_token": must say whether one-token answers pass or fail`, []string{"capture", "--simulate", "--out", filepath.Join(dir, "c5"), "--concurrency", "1", "--requests", "1", "--set", "slo.tpot=5ms"}, ExitUsage},
		{"reproduce with a margin of 150%", `--margin "150%": want more than 0% and less than 100%`, []string{"reproduce", bundle, "--key", pubPath, "--endpoint", "http://127.0.0.1:1", "--model", "m", "--out", filepath.Join(dir, "r1"), "--margin", "150%"}, ExitUsage},
		{"reproduce a bundle under the wrong key", "did not verify, so nothing is reproduced", []string{"reproduce", bundle, "--key", other, "--endpoint", "http://127.0.0.1:1", "--model", "m", "--out", filepath.Join(dir, "r2")}, ExitRejected},
		{"capture a missing --sharegpt file", "--sharegpt: open", []string{"capture", "--simulate", "--out", filepath.Join(dir, "c7"), "--concurrency", "1", "--requests", "1", "--sharegpt", missing}, ExitError},
		{"capture a missing --trace file", "--trace: open", []string{"capture", "--simulate", "--out", filepath.Join(dir, "c8"), "--trace", missing}, ExitError},
		{"capture a missing --prompts file", "--prompts: open", []string{"capture", "--simulate", "--out", filepath.Join(dir, "c9"), "--concurrency", "1", "--requests", "1", "--prompts", missing}, ExitError},
		{"capture a missing --manifest file", "--manifest: open", []string{"capture", "--simulate", "--out", filepath.Join(dir, "c10"), "--concurrency", "1", "--requests", "1", "--manifest", missing}, ExitError},
		{"import a missing --manifest file", "--manifest: open", []string{"import", "vllm", fixture("vllm", "lambdalabs_llama3_8b_h100_prompt10.json"), "--out", filepath.Join(dir, "i4"), "--manifest", missing}, ExitError},
		{"capture zero sessions", "--sessions 0: want at least 1 session", []string{"capture", "--simulate", "--out", filepath.Join(dir, "c11"), "--concurrency", "1", "--sharegpt", missing, "--sessions", "0"}, ExitUsage},
		{"replay unknown definitions", `invalid argument "vlm" for "--definitions" flag: want one of benchseal,`, []string{"replay", run, "--definitions", "vlm"}, ExitUsage},
	}
	table := readmeExitCodes(t)
	raw := regexp.MustCompile(`strconv\.|archive/tar|lstat |threshold|: (replay|compare|capture|stats)$`)
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runArgs(t, map[string]string{"BENCHSEAL_PASSWORD": ""}, c.args...)
			if code != c.code {
				t.Fatalf("exit %d, want %d\nstdout:\n%s\nstderr:\n%s", code, c.code, out, errOut)
			}
			if !table[c.args[0]][code] {
				t.Errorf("README's command table does not list exit %d for %s (lists %v)", code, c.args[0], table[c.args[0]])
			}
			if !strings.Contains(errOut, c.want) {
				t.Errorf("stderr lacks %q:\n%s", c.want, errOut)
			}
			for _, line := range strings.Split(errOut+out, "\n") {
				if raw.MatchString(line) {
					t.Errorf("raw library text: %s", line)
				}
			}
		})
	}
}
