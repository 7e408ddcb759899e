package vllm

import (
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/importer/internal/importtest"
	"github.com/benchseal/benchseal/schema"
)

var fixture = []string{"lambdalabs_llama3_8b_h100_prompt10.json"}

func TestParseFixture(t *testing.T) {
	files := importtest.Load(t, Tool, fixture...)
	res, err := Parse(files)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 10 {
		t.Fatalf("records = %d", len(res.Records))
	}
	importtest.Write(t, Tool, files, res)
}

func TestExternalCheck(t *testing.T) {
	files := importtest.Load(t, Tool, fixture...)
	checks := importtest.ExternalCheck(t, Tool, files, Parse, knownMismatch)
	importtest.WantOutcomes(t, checks, importtest.Outcomes{Matched: 12, Mismatched: 0, NotRecomputable: 8, NotRecomputableMetrics: []string{"e2e_ns.mean", "e2e_ns.p50", "e2e_ns.p99", "e2e_ns.stddev", "tpot_ns.mean", "tpot_ns.p50", "tpot_ns.p99", "tpot_ns.stddev"}})
	importtest.WantDocRow(t, "vLLM LambdaLabs H100", checks)
}

// knownMismatch lists claims whose recomputation differs because of the
// replay engine's peer formulas, by metric.
var knownMismatch = map[string]string{}

func TestBadInputFails(t *testing.T) {
	good := importtest.Load(t, Tool, fixture...)
	name := fixture[0]
	cases := append(importtest.CommonBad(t, Tool, good),
		importtest.BadInput{Name: "NaN", Files: importtest.Replace(t, good, 0, `"ttfts": [0.06338946700270753`, `"ttfts": [NaN`), Want: []string{name, "NaN"}},
		importtest.BadInput{Name: "negative duration", Files: importtest.Replace(t, good, 0, `"ttfts": [0.06338946700270753`, `"ttfts": [-0.06338946700270753`), Want: []string{name, "record 0", "negative"}},
		importtest.BadInput{Name: "missing lists", Files: importtest.Replace(t, good, 0, `"itls":`, `"x_itls":`), Want: []string{name, "itls", "missing"}},
		importtest.BadInput{Name: "lists of different lengths", Files: importtest.Replace(t, good, 0, `"input_lens": [13, `, `"input_lens": [`), Want: []string{name, "input_lens"}},
		importtest.BadInput{Name: "negative run duration", Files: importtest.Replace(t, good, 0, `"duration": 5.3`, `"duration": -5.3`), Want: []string{name, "duration", "negative"}},
	)
	importtest.CheckBad(t, Parse, cases)
}

func FuzzParse(f *testing.F) {
	importtest.FuzzParse(f, Tool, importtest.Load(f, Tool, fixture...), 0, Parse)
}

// vLLM's date is local time without a zone: it names no instant, so the
// run's times are declared unknown, never read as UTC; a date with an
// offset is used.
func TestDateZone(t *testing.T) {
	files := importtest.Load(t, Tool, fixture...)
	res, err := Parse(files)
	if err != nil {
		t.Fatal(err)
	}
	if err := ingest.Finish(res, Tool, files, ingest.WriteOptions{}); err != nil {
		t.Fatal(err)
	}
	m := res.Manifest
	if m.EpochUnixNS != 0 || !m.Declared("start_time") || !m.Declared("epoch_unix_ns") || m.Notes["vllm.date"] != "20240907-082731" || !strings.Contains(m.Notes["vllm.date_zone"], "unknown") {
		t.Errorf("epoch %d start %q unknown %v notes %v: want the times unknown and the zone noted unknown", m.EpochUnixNS, m.StartTime, m.Unknown, m.Notes)
	}
	zoned := importtest.Replace(t, files, 0, `"date": "20240907-082731"`, `"date": "20240907-082731+0200"`)
	res, err = Parse(zoned)
	if err != nil {
		t.Fatal(err)
	}
	dur := res.Manifest.Load.Points[0].Duration
	if want := time.Date(2024, 9, 7, 6, 27, 31, 0, time.UTC).UnixNano() - int64(dur); res.Manifest.EpochUnixNS != want {
		t.Errorf("epoch %d, want %d (06:27:31 UTC − duration)", res.Manifest.EpochUnixNS, want)
	}
}

// TestWindowShorterThanALatencyIsInvalid: the fixture's duration (5.37 s)
// cut to 0.5 s, below the 5.36 s its longest request took, leaves a run
// whose every rate over that window is inflated (1.86 → 20 req/s): the
// run is invalid, naming the window and the longest request.
func TestWindowShorterThanALatencyIsInvalid(t *testing.T) {
	files := importtest.Replace(t, importtest.Load(t, Tool, fixture...), 0, `"duration": 5.3666093360079685`, `"duration": 0.5`)
	res, err := Parse(files)
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "run")
	err = ingest.Write(dir, Tool, files, res, ingest.WriteOptions{})
	if err == nil {
		err = schema.ValidateRunDocuments(dir, 10)
	}
	if err == nil || !strings.Contains(err.Error(), "provenance.windows") || !strings.Contains(err.Error(), "500ms (vLLM's duration") || !strings.Contains(err.Error(), "shorter than the longest request it measured (5.364938447s") {
		t.Fatalf("validate of a window below a latency: %v", err)
	}
}
