package report

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/benchseal/benchseal/compare"
	"github.com/benchseal/benchseal/schema"
)

// The compare and decide JSON stay byte for byte: a comparison with a
// check allowed, a refused one, and a decision under each objective, the
// inputs carrying strings each JSON writer escapes its own way and a
// published external result.
func TestGoldenCompareDecideJSON(t *testing.T) {
	ins := compareInputs(t)
	ins[1].Name = oddText
	ins[1].Manifest.Unknown = []string{oddText}
	ins[1].Verification.Warnings = []string{oddText}
	ref := *ins[0]
	m := *ref.Manifest
	m.Evidence, m.External = schema.EvidenceImported, []schema.ExternalRef{{Kind: "mlperf", Version: "v5.0", Status: oddText, URL: "https://example.org/?a=1&b=<2>",
		AcceleratorCount: 8, Results: map[string]string{"b": oddText, "a": "1"}}}
	ref.Manifest, ref.Name = &m, "ref"
	var b bytes.Buffer
	write := func(what string, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
	}
	r, err := compare.Compare(append(ins, &ref), compare.Options{Guard: compare.GuardOptions{Allow: []string{compare.CheckWorkload}}, Correction: compare.CorrectionHolm})
	write("compare", err)
	write("compare JSON", CompareJSON(&b, r))
	for _, o := range compare.Objectives {
		d, err := compare.Decide(append(ins, &ref), compare.DecideOptions{Objective: o, Guard: compare.GuardOptions{Allow: []string{compare.CheckWorkload}}})
		write("decide "+o, err)
		write("decide JSON "+o, DecideJSON(&b, d))
	}
	ins[0].Manifest.Workload.SHA256, ins[1].Manifest.Workload.SHA256 = "11", "00"
	r, _ = compare.Compare(ins, compare.Options{})
	write("refused compare JSON", CompareJSON(&b, r))
	checkGolden(t, filepath.Join("testdata", "compare_decide.json"), b.Bytes())
}
