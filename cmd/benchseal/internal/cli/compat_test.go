package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// compatDir holds a bundle made by each landed release of benchseal
// (testdata/compat/README.md, generate.sh).
const compatDir = "../../../../testdata/compat"

// compatExpect is what verify must say of one corpus bundle, written by
// hand from what its release made (expected.json): the verdict and exit
// code, the definitions version its claims are judged under, whether it
// was inferred (claims made before versions were named), whether that
// version's known defect is printed, the claim outcomes, how many claims
// the current version gives otherwise, and lines the text must hold.
type compatExpect struct {
	Bundle, Key, Commit string
	Exit                int
	Verdict             string
	Version             string
	VersionInferred     bool `json:"version_inferred"`
	KnownDefect         bool `json:"known_defect"`
	Matched             int
	Mismatched          int
	NotRecomputable     int `json:"not_recomputable"`
	DifferUnderCurrent  int `json:"differ_under_current"`
	Text                []string
}

// TestCompatCorpus: every bundle a landed release made still verifies with
// today's code, with the verdict, definitions version and notes expected
// of it; its warnings match the golden testdata/compat/warnings.golden
// (rewritten by -update, which never touches expected.json). A bundle
// without an expectation, or an expectation without its bundle, fails.
func TestCompatCorpus(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(compatDir, "expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var want []compatExpect
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&want); err != nil {
		t.Fatal(err)
	}
	tars, _ := filepath.Glob(filepath.Join(compatDir, "*.tar"))
	var have []string
	for _, p := range tars {
		have = append(have, filepath.Base(p))
	}
	var listed []string
	for _, w := range want {
		listed = append(listed, w.Bundle)
	}
	slices.Sort(listed)
	if !slices.Equal(have, listed) {
		t.Fatalf("corpus bundles %v, expected.json lists %v", have, listed)
	}
	var golden strings.Builder
	for _, w := range want {
		t.Run(w.Bundle, func(t *testing.T) {
			args := []string{"verify", filepath.Join(compatDir, w.Bundle), "--key", filepath.Join(compatDir, w.Key)}
			var jout, text, errOut bytes.Buffer
			if code := Main(append(args, "--output", "json"), strings.NewReader(""), &jout, &errOut); code != w.Exit {
				t.Fatalf("exit %d, want %d\n%s%s", code, w.Exit, jout.String(), errOut.String())
			}
			if code := Main(append(args, "--show-claims"), strings.NewReader(""), &text, &errOut); code != w.Exit {
				t.Fatalf("text: exit %d, want %d", code, w.Exit)
			}
			var res struct {
				Verified bool
				Claims   []struct {
					Outcome            string
					DefinitionsVersion string `json:"definitions_version"`
					VersionInferred    bool   `json:"version_inferred"`
					KnownDefect        string `json:"known_defect"`
					Current            *struct{ Version string }
				}
				Warnings []string
			}
			if err := json.Unmarshal(jout.Bytes(), &res); err != nil {
				t.Fatal(err)
			}
			lines := strings.Split(strings.TrimSpace(text.String()), "\n")
			if got := lines[len(lines)-1]; got != w.Verdict || res.Verified != strings.HasPrefix(w.Verdict, "VERIFIED") {
				t.Errorf("verdict %q (verified %v), want %q", got, res.Verified, w.Verdict)
			}
			count := map[string]int{}
			differ := 0
			for _, c := range res.Claims {
				count[c.Outcome]++
				if c.Current != nil {
					differ++
				}
				if c.DefinitionsVersion != w.Version || c.VersionInferred != w.VersionInferred || (c.KnownDefect != "") != w.KnownDefect {
					t.Errorf("claim judged under %q (inferred %v, defect %q), want %q (inferred %v, defect %v)",
						c.DefinitionsVersion, c.VersionInferred, c.KnownDefect, w.Version, w.VersionInferred, w.KnownDefect)
					break
				}
			}
			if count["matched"] != w.Matched || count["mismatched"] != w.Mismatched || count["not-recomputable"] != w.NotRecomputable || differ != w.DifferUnderCurrent {
				t.Errorf("claims %v, %d differ under the current version; want %d matched, %d mismatched, %d not recomputable, %d differ",
					count, differ, w.Matched, w.Mismatched, w.NotRecomputable, w.DifferUnderCurrent)
			}
			for _, s := range w.Text {
				if !strings.Contains(text.String(), s) {
					t.Errorf("text lacks %q:\n%s", s, text.String())
				}
			}
			golden.WriteString("== " + w.Bundle + "\n")
			for _, x := range res.Warnings {
				golden.WriteString(x + "\n")
			}
		})
	}
	gp := filepath.Join(compatDir, "warnings.golden")
	if *update {
		if err := os.WriteFile(gp, []byte(golden.String()), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	g, err := os.ReadFile(gp)
	if err != nil {
		t.Fatal(err)
	}
	if string(g) != golden.String() {
		t.Errorf("verify's warnings over the corpus differ from %s (rerun with -update after reviewing):\n--- golden\n%s\n--- now\n%s", gp, g, golden.String())
	}
}
