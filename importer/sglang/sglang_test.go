package sglang

import (
	"testing"

	"github.com/benchseal/benchseal/importer/internal/importtest"
)

// fixture is hand-written from the documented format (see
// testdata/README.md and testdata/fixtures/handwritten.py).
var fixture = []string{"sglang_0101_12_256_64.jsonl"}

func TestExternalCheck(t *testing.T) {
	files := importtest.Load(t, "sglang", fixture...)
	importtest.ExternalCheck(t, Tool, files, Parse, knownMismatch)
}

// knownMismatch lists claims whose recomputation differs because of the
// replay engine's peer formulas (reported to the lead), by metric.
var knownMismatch = map[string]string{}

func TestBadInputFails(t *testing.T) {
	good := importtest.Load(t, Tool, fixture...)
	name := fixture[0]
	cases := append(importtest.CommonBad(t, Tool, good),
		importtest.BadInput{Name: "NaN", Files: importtest.Replace(t, good, 0, `"ttfts": [0.062025871`, `"ttfts": [NaN`), Want: []string{name + ":1", "NaN"}},
		importtest.BadInput{Name: "negative duration", Files: importtest.Replace(t, good, 0, `"ttfts": [0.062025871`, `"ttfts": [-0.062025871`), Want: []string{name + ":1", "record 0", "negative"}},
		importtest.BadInput{Name: "missing details", Files: importtest.Replace(t, good, 0, `"itls":`, `"x_itls":`), Want: []string{name + ":1", "itls", "--output-details"}},
		importtest.BadInput{Name: "negative run duration", Files: importtest.Replace(t, good, 0, `"duration": 0.9`, `"duration": -0.9`), Want: []string{name + ":1", "duration"}},
	)
	importtest.CheckBad(t, Parse, cases)
}

func FuzzParse(f *testing.F) {
	importtest.FuzzParse(f, Tool, importtest.Load(f, Tool, fixture...), 0, Parse)
}
