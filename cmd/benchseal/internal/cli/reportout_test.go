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
