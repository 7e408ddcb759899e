package sglang

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/importer/internal/importtest"
)

// fixture is hand-written from the documented format (see
// testdata/README.md and testdata/fixtures/handwritten.py).
var fixture = []string{"sglang_0101_12_256_64.jsonl"}

func TestExternalCheck(t *testing.T) {
	files := importtest.Load(t, "sglang", fixture...)
	checks := importtest.ExternalCheck(t, Tool, files, Parse, knownMismatch)
	importtest.WantOutcomes(t, checks, importtest.Outcomes{Matched: 34, Mismatched: 0, NotRecomputable: 24, NotRecomputableMetrics: []string{"e2e_ns.mean", "e2e_ns.p50", "e2e_ns.p90", "e2e_ns.p95", "e2e_ns.p99", "e2e_ns.stddev", "tpot_ns.mean", "tpot_ns.p50", "tpot_ns.p90", "tpot_ns.p95", "tpot_ns.p99", "tpot_ns.stddev"}})
	importtest.WantDocRow(t, "SGLang 2 points", checks)
}

// knownMismatch lists claims whose recomputation differs because of the
// replay engine's peer formulas, by metric.
var knownMismatch = map[string]string{}

// TestUndatedRunDeclaresTimesUnknown: bench_serving stores no date, so
// the run's times are declared unknown rather than invented.
func TestUndatedRunDeclaresTimesUnknown(t *testing.T) {
	files := importtest.Load(t, "sglang", fixture...)
	res, err := Parse(files)
	if err != nil {
		t.Fatal(err)
	}
	if err := ingest.Finish(res, Tool, files, ingest.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	m := res.Manifest
	if m.EpochUnixNS != 0 || m.StartTime != "" || m.FinishTime != "" || !m.Declared("epoch_unix_ns") || !m.Declared("start_time") || !m.Declared("finish_time") {
		t.Errorf("times %d %q %q, unknown %v: want all three declared unknown", m.EpochUnixNS, m.StartTime, m.FinishTime, m.Unknown)
	}
	// The publisher can state them; they then leave unknown.
	res, _ = Parse(files)
	if err := ingest.Finish(res, Tool, files, ingest.WriteOptions{Set: []string{"epoch_unix_ns=1767225600000000000", "start_time=2026-01-01T00:00:00Z", "finish_time=2026-01-01T00:00:05Z"}}); err != nil {
		t.Fatal(err)
	}
	if m := res.Manifest; m.Declared("epoch_unix_ns") || m.Declared("start_time") || m.Declared("finish_time") {
		t.Errorf("unknown %v still lists a time that was set", m.Unknown)
	}
}

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

// bench_serving's default --request-rate inf is written by json.dumps as a
// bare Infinity (not JSON): the file must import, as a concurrency point.
func TestDefaultRateInfinityImports(t *testing.T) {
	files := replaceAll(replaceAll(importtest.Load(t, Tool, fixture...), `"request_rate": 4.0`, `"request_rate": Infinity`), `"request_rate": 8.0`, `"request_rate": Infinity`)
	res, err := Parse(files)
	if err != nil {
		t.Fatal(err)
	}
	if pt := res.Manifest.Load.Points[0]; pt.Name != "concurrency-8" || pt.Rate != 0 || pt.Concurrency != 8 {
		t.Errorf("point %+v, want concurrency-8 with no rate", pt)
	}
	importtest.WantDocRow(t, "SGLang `Infinity` rate", importtest.ExternalCheck(t, Tool, files, Parse, knownMismatch))
}

func TestPythonUndefinedNumbersFail(t *testing.T) {
	good := importtest.Load(t, Tool, fixture...)
	importtest.CheckBad(t, Parse, []importtest.BadInput{
		{Name: "NaN claim", Files: importtest.Replace(t, good, 0, `"mean_ttft_ms": 54.157367818181825`, `"mean_ttft_ms": NaN`), Want: []string{fixture[0], "mean_ttft_ms", "not a finite number"}},
		{Name: "inf beside a finite rate", Files: importtest.Replace(t, good, 0, `"request_rate": 4.0`, `"request_rate": Infinity`), Want: []string{fixture[0] + ":1", "request_rate", "unlimited"}},
		{Name: "-Infinity rate", Files: importtest.Replace(t, good, 0, `"request_rate": 4.0`, `"request_rate": -Infinity`), Want: []string{fixture[0] + ":1", "request_rate"}},
		{Name: "Infinity in a list", Files: importtest.Replace(t, good, 0, `"ttfts": [0.062025871`, `"ttfts": [Infinity`), Want: []string{fixture[0] + ":1", "ttfts", "Infinity"}},
	})
}

func TestDataParallelismRecorded(t *testing.T) {
	files := replaceAll(importtest.Load(t, Tool, fixture...), `"tp_size": 1}`, `"tp_size": 4, "dp_size": 2}`)
	res, err := Parse(files)
	if err != nil {
		t.Fatal(err)
	}
	if p := res.Manifest.Engine.Parallelism; p.Tensor != 4 || p.Data != 2 {
		t.Errorf("parallelism %+v, want tensor 4 data 2", p)
	}
}

func TestWithoutOutputDetailsNamesTheFlag(t *testing.T) {
	good := importtest.Load(t, Tool, fixture...)
	line := strings.SplitN(string(good[0].Data), "\n", 2)[0]
	var o map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &o); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"input_lens", "output_lens", "ttfts", "itls", "generated_texts", "errors"} {
		delete(o, k)
	}
	b, _ := json.Marshal(o)
	_, err := Parse([]ingest.File{{Name: "summary_only.jsonl", Data: append(b, '\n')}})
	if err == nil || !strings.Contains(err.Error(), "--output-details") || strings.Contains(err.Error(), "duration") {
		t.Fatalf("error %v, want one naming --output-details", err)
	}
}

func replaceAll(files []ingest.File, old, new string) []ingest.File {
	return []ingest.File{{Name: files[0].Name, Data: []byte(strings.ReplaceAll(string(files[0].Data), old, new))}}
}
