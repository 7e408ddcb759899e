package genaiperf

import (
	"testing"

	"github.com/benchseal/benchseal/importer/internal/importtest"
)

// fixture is hand-written from the documented format (see
// testdata/README.md and testdata/fixtures/handwritten.py).
var fixture = []string{"profile_export.json", "profile_export_genai_perf.json"}

func TestExternalCheck(t *testing.T) {
	files := importtest.Load(t, "genai-perf", fixture...)
	checks := importtest.ExternalCheck(t, Tool, files, Parse, knownMismatch)
	importtest.WantOutcomes(t, checks, importtest.Outcomes{Matched: 27, Mismatched: 0, NotRecomputable: 14, NotRecomputableMetrics: []string{"output_token_throughput", "tpot_ns.max", "tpot_ns.mean", "tpot_ns.min", "tpot_ns.p1", "tpot_ns.p10", "tpot_ns.p25", "tpot_ns.p5", "tpot_ns.p50", "tpot_ns.p75", "tpot_ns.p90", "tpot_ns.p95", "tpot_ns.p99", "tpot_ns.stddev"}})
}

// knownMismatch lists claims whose recomputation differs because of the
// replay engine's peer formulas (reported to the lead), by metric.
var knownMismatch = map[string]string{}

func TestBadInputFails(t *testing.T) {
	good := importtest.Load(t, "genai-perf", fixture...)
	name := fixture[0]
	cases := append(importtest.CommonBad(t, Tool, good),
		importtest.BadInput{Name: "NaN", Files: importtest.Replace(t, good, 0, `"timestamp": 1735689600000000334`, `"timestamp": NaN`), Want: []string{name, "NaN"}},
		importtest.BadInput{Name: "negative duration", Files: importtest.Replace(t, good, 0, `1735689600048219346`, `1735689500048219346`), Want: []string{name, "record 0", "negative"}},
		importtest.BadInput{Name: "missing timestamp", Files: importtest.Replace(t, good, 0, `"timestamp": 1735689600000000334`, `"x": 1`), Want: []string{name, "record 0", "timestamp"}},
		importtest.BadInput{Name: "mixed units", Files: importtest.Replace(t, good, 0, `"timestamp": 1735689600000000334`, `"timestamp": 1735689600.000000334`), Want: []string{name, "record 0", "timestamp"}},
	)
	importtest.CheckBad(t, Parse, cases)
}

func FuzzParse(f *testing.F) {
	importtest.FuzzParse(f, Tool, importtest.Load(f, "genai-perf", fixture...), 0, Parse)
}
