package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestOutNamingAnInputIsAUsageError: validate --out naming a file of the
// run it validates, and replay --out naming the run's records, exit 2 and
// leave the run's bytes as they were (validate replaced its manifest with
// the report, exit 0).
func TestOutNamingAnInputIsAUsageError(t *testing.T) {
	run := filepath.Join(t.TempDir(), "run")
	var out, errOut bytes.Buffer
	if code := Main([]string{"synth", "--out", run, "--requests", "4", "--points", "1", "--repeats", "1", "--items", "4"}, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("synth: exit %d: %s", code, errOut.String())
	}
	for _, args := range [][]string{
		{"validate", run, "--out", filepath.Join(run, "manifest.json")},
		{"replay", run, "--out", filepath.Join(run, "records.jsonl")},
	} {
		p := args[len(args)-1]
		want, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		errOut.Reset()
		code := Main(args, strings.NewReader(""), &out, &errOut)
		if code != 2 || !strings.Contains(errOut.String(), "is inside the command's input directory") {
			t.Fatalf("%s: exit %d, stderr %q: want 2 and the input named", args[0], code, errOut.String())
		}
		if got, _ := os.ReadFile(p); !bytes.Equal(got, want) {
			t.Fatalf("%s changed its input %s", args[0], p)
		}
	}
}

// TestOutputFlagsNamingAnInputAreUsageErrors: every output-file flag that
// names one of the command's inputs, or a file inside an input directory,
// exits 2 even with --force and leaves the input's bytes as they were
// (replay --write-claims --force replaced the run's records.jsonl with
// claims and exited 0).
func TestOutputFlagsNamingAnInputAreUsageErrors(t *testing.T) {
	dir := t.TempDir()
	run := filepath.Join(dir, "run")
	var out, errOut bytes.Buffer
	if code := Main([]string{"synth", "--out", run, "--requests", "4", "--points", "1", "--repeats", "1", "--items", "4"}, strings.NewReader(""), &out, &errOut); code != 0 {
		t.Fatalf("synth: exit %d: %s", code, errOut.String())
	}
	overlay := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(overlay, []byte(`{"title":"x"}`), 0o644); err != nil {
		t.Fatal(err)
	}
	records, manifest := filepath.Join(run, "records.jsonl"), filepath.Join(run, "manifest.json")
	for _, c := range []struct {
		args  []string
		input string
	}{
		{[]string{"replay", run, "--write-claims", records, "--force"}, records},
		{[]string{"replay", run, "--write-claims", manifest, "--force"}, manifest},
		{[]string{"replay", run, "--write-claims", manifest}, manifest},
		{[]string{"pack", run, "--out", filepath.Join(run, "b.oci.tar")}, manifest},
		{[]string{"capture", "--simulate", "--rate", "5", "--requests", "5", "--manifest", overlay, "--out", overlay}, overlay},
		{[]string{"import", "vllm", overlay, "--out", overlay}, overlay},
		{[]string{"merge", run, "--out", run}, manifest},
	} {
		want, err := os.ReadFile(c.input)
		if err != nil {
			t.Fatal(err)
		}
		errOut.Reset()
		code := Main(c.args, strings.NewReader(""), &out, &errOut)
		if code != 2 || !strings.Contains(errOut.String(), "the command's input") || strings.Contains(errOut.String(), "pass --force") {
			t.Errorf("%v: exit %d, stderr %q: want 2 and the input named", c.args, code, errOut.String())
		}
		if got, _ := os.ReadFile(c.input); !bytes.Equal(got, want) {
			t.Errorf("%v changed its input %s", c.args, c.input)
		}
	}
}
