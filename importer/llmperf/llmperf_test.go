package llmperf

import (
	"testing"

	"github.com/benchseal/benchseal/importer/internal/importtest"
)

var fixture = []string{"groq_70b_individual_responses.json", "groq_70b_summary.json"}

func TestParseFixture(t *testing.T) {
	files := importtest.Load(t, Tool, fixture...)
	res, err := Parse(files)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 150 {
		t.Fatalf("records = %d, want 150", len(res.Records))
	}
	importtest.Write(t, Tool, files, res)
}

func TestExternalCheck(t *testing.T) {
	files := importtest.Load(t, Tool, fixture...)
	checks := importtest.ExternalCheck(t, Tool, files, Parse, knownMismatch)
	importtest.WantOutcomes(t, checks, importtest.Outcomes{Matched: 35, Mismatched: 0, NotRecomputable: 0})
}

// knownMismatch lists claims whose recomputation differs because of the
// replay engine's peer formulas, by metric.
var knownMismatch = map[string]string{}

func TestBadInputFails(t *testing.T) {
	good := importtest.Load(t, Tool, fixture...)
	name := fixture[0]
	cases := append(importtest.CommonBad(t, Tool, good),
		importtest.BadInput{Name: "NaN", Files: importtest.Replace(t, good, 0, `"ttft_s": 0.297977801412344`, `"ttft_s": NaN`), Want: []string{name, "NaN"}},
		importtest.BadInput{Name: "negative duration", Files: importtest.Replace(t, good, 0, `"ttft_s": 0.297977801412344`, `"ttft_s": -0.297977801412344`), Want: []string{name, "record 0", "negative"}},
		importtest.BadInput{Name: "missing field", Files: importtest.Replace(t, good, 0, `"end_to_end_latency_s": 0.8900090400129557`, `"x": 1`), Want: []string{name, "record 0", "end_to_end_latency_s"}},
		importtest.BadInput{Name: "mixed units", Files: importtest.Replace(t, good, 0, `"ttft_s": 0.297977801412344`, `"ttft_s": 297.977801412344`), Want: []string{name, "record 0", "mixed units"}},
		importtest.BadInput{Name: "summary only", Files: good[1:], Want: []string{"individual"}},
	)
	importtest.CheckBad(t, Parse, cases)
}

func FuzzParseIndividual(f *testing.F) {
	importtest.FuzzParse(f, Tool, importtest.Load(f, Tool, fixture...), 0, Parse)
}

func FuzzParseSummary(f *testing.F) {
	importtest.FuzzParse(f, Tool, importtest.Load(f, Tool, fixture...), 1, Parse)
}
