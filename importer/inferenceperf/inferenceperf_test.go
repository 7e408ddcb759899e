package inferenceperf

import (
	"testing"

	"github.com/benchseal/benchseal/importer/internal/importtest"
)

// fixture is hand-written from the documented format (see
// testdata/README.md and testdata/fixtures/handwritten.py).
var fixture = []string{"per_request_lifecycle_metrics.json", "stage_0_lifecycle_metrics.json"}

func TestExternalCheck(t *testing.T) {
	files := importtest.Load(t, "inference-perf", fixture...)
	checks := importtest.ExternalCheck(t, Tool, files, Parse, knownMismatch)
	importtest.WantOutcomes(t, checks, importtest.Outcomes{Matched: 75, Mismatched: 0, NotRecomputable: 0, NotRecomputableMetrics: nil})
}

// knownMismatch lists claims whose recomputation differs because of the
// replay engine's peer formulas, by metric.
var knownMismatch = map[string]string{}

func TestBadInputFails(t *testing.T) {
	good := importtest.Load(t, "inference-perf", fixture...)
	name := fixture[0]
	cases := append(importtest.CommonBad(t, Tool, good),
		importtest.BadInput{Name: "NaN", Files: importtest.Replace(t, good, 0, `"start_time": 1000.004108`, `"start_time": NaN`), Want: []string{name, "NaN"}},
		importtest.BadInput{Name: "negative duration", Files: importtest.Replace(t, good, 0, `"end_time": 1000.191162`, `"end_time": 999.191162`), Want: []string{name, "record 0", "negative"}},
		importtest.BadInput{Name: "missing start", Files: importtest.Replace(t, good, 0, `"start_time": 1000.004108`, `"x": 1`), Want: []string{name, "record 0", "start_time"}},
		importtest.BadInput{Name: "mixed units", Files: importtest.Replace(t, good, 0, `1000.044213`, `1000044.213`), Want: []string{name, "record 0", "mixed units"}},
		importtest.BadInput{Name: "summary only", Files: good[1:], Want: []string{"per_request_lifecycle_metrics.json"}},
	)
	importtest.CheckBad(t, Parse, cases)
}

func FuzzParse(f *testing.F) {
	importtest.FuzzParse(f, Tool, importtest.Load(f, "inference-perf", fixture...), 0, Parse)
}

func FuzzStream(f *testing.F) {
	importtest.FuzzStream(f, importtest.Load(f, "inference-perf", fixture...), 0, Stream)
}
