package aiperf

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/importer/internal/importtest"
	"github.com/benchseal/benchseal/schema"
)

var fixture = []string{"run1_profile_export.jsonl", "run1_profile_export_aiperf.json", "run1_profile_export_aiperf.csv"}

func TestParseFixture(t *testing.T) {
	files := importtest.Load(t, Tool, fixture...)
	res, err := Parse(files)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 100 {
		t.Fatalf("records = %d, want 100", len(res.Records))
	}
	importtest.Write(t, Tool, files, res)
}

func TestExternalCheck(t *testing.T) {
	files := importtest.Load(t, Tool, fixture...)
	checks := importtest.ExternalCheck(t, Tool, files, Parse, knownMismatch)
	importtest.WantOutcomes(t, checks, importtest.Outcomes{Matched: 108, Mismatched: 0, NotRecomputable: 0, NotRecomputableMetrics: nil})
	importtest.WantDocRow(t, "AIPerf `run1`", checks)
}

// knownMismatch lists claims whose recomputation differs because of the
// replay engine's peer formulas, by metric.
var knownMismatch = map[string]string{}

func TestBadInputFails(t *testing.T) {
	good := importtest.Load(t, Tool, fixture...)
	cases := append(importtest.CommonBad(t, Tool, good),
		importtest.BadInput{Name: "NaN", Files: importtest.Replace(t, good, 0, `"ttft":{"value":1680.543782`, `"ttft":{"value":NaN`), Want: []string{"run1_profile_export.jsonl:", "NaN"}},
		importtest.BadInput{Name: "negative duration", Files: importtest.Replace(t, good, 0, `"ttft":{"value":1680.543782`, `"ttft":{"value":-1680.543782`), Want: []string{"run1_profile_export.jsonl:", "record", "negative"}},
		importtest.BadInput{Name: "missing start", Files: importtest.Replace(t, good, 0, `"timestamp_ns":`, `"x_timestamp_ns":`), Want: []string{"run1_profile_export.jsonl:1", "request_start_ns"}},
		importtest.BadInput{Name: "missing latency", Files: importtest.Replace(t, good, 0, `"request_latency":`, `"x_request_latency":`), Want: []string{"run1_profile_export.jsonl:", "request_latency", "missing"}},
		importtest.BadInput{Name: "mixed units", Files: importtest.Replace(t, good, 0, `"ttft":{"value":1680.543782,"unit":"ms"}`, `"ttft":{"value":1680.543782,"unit":"s"}`), Want: []string{"run1_profile_export.jsonl:", "ttft"}},
		importtest.BadInput{Name: "unknown unit", Files: importtest.Replace(t, good, 0, `"unit":"ms"`, `"unit":"fortnights"`), Want: []string{"unknown time unit"}},
	)
	importtest.CheckBad(t, Parse, cases)
}

func FuzzParseExport(f *testing.F) {
	importtest.FuzzParse(f, Tool, importtest.Load(f, Tool, fixture...), 0, Parse)
}

func FuzzParseSummary(f *testing.F) {
	// The summary beside the first lines of the export only: with all of
	// them each input took long enough to leave a few hundred a minute.
	files := importtest.Load(f, Tool, fixture...)
	files[0].Data = bytes.Join(bytes.SplitAfter(files[0].Data, []byte("\n"))[:8], nil)
	importtest.FuzzParse(f, Tool, files, 1, Parse)
}

// toSchema1 rewrites the development-schema fixture into AIPerf schema 1.x:
// metadata request_start_ns/request_end_ns/benchmark_phase, and the
// summary's metric blocks at the top level with schema_version and
// run_info.
func toSchema1(t *testing.T, files []ingest.File) []ingest.File {
	t.Helper()
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(string(files[0].Data)), "\n") {
		var rec map[string]any
		dec := json.NewDecoder(strings.NewReader(l))
		dec.UseNumber()
		if err := dec.Decode(&rec); err != nil {
			t.Fatal(err)
		}
		md := rec["metadata"].(map[string]any)
		md["request_start_ns"] = md["timestamp_ns"]
		delete(md, "timestamp_ns")
		md["benchmark_phase"] = md["credit_phase"]
		delete(md, "credit_phase")
		if m, ok := rec["metrics"].(map[string]any); ok {
			if mr, ok := m["max_response_timestamp"].(map[string]any); ok {
				md["request_end_ns"] = mr["value"]
				delete(m, "max_response_timestamp")
			}
		}
		b, _ := json.Marshal(rec)
		lines = append(lines, string(b))
	}
	var sum map[string]any
	dec := json.NewDecoder(bytes.NewReader(files[1].Data))
	dec.UseNumber()
	if err := dec.Decode(&sum); err != nil {
		t.Fatal(err)
	}
	for k, v := range sum["records"].(map[string]any) {
		sum[k] = v
	}
	delete(sum, "records")
	sum["schema_version"] = "1.3"
	sum["aiperf_version"] = "0.3.0"
	sum["run_info"] = map[string]any{"random_seed": 42, "cli_command": "aiperf profile --concurrency 100", "trial": 0}
	sb, _ := json.Marshal(sum)
	return []ingest.File{
		{Name: "profile_export.jsonl", Data: []byte(strings.Join(lines, "\n") + "\n")},
		{Name: "profile_export_aiperf.json", Data: sb},
	}
}

func TestSchema1ImportsLikeDevelopmentSchema(t *testing.T) {
	dev := importtest.Load(t, Tool, fixture...)
	v1 := toSchema1(t, dev)
	rd, err := Parse(dev)
	if err != nil {
		t.Fatal(err)
	}
	r1, err := Parse(v1)
	if err != nil {
		t.Fatal(err)
	}
	if len(rd.Records) != len(r1.Records) {
		t.Fatalf("records %d vs %d", len(r1.Records), len(rd.Records))
	}
	for i := range rd.Records {
		a, b := rd.Records[i], r1.Records[i]
		if a.SentNS != b.SentNS || a.EndNS != b.EndNS || a.Status != b.Status || a.OutputTokens != b.OutputTokens || len(a.ChunksNS) != len(b.ChunksNS) {
			t.Fatalf("record %d differs: %+v vs %+v", i, b, a)
		}
	}
	if r1.Manifest.Client.Version != "0.3.0" || r1.Manifest.Client.Seed == nil || *r1.Manifest.Client.Seed != 42 {
		t.Errorf("schema 1.x provenance not read: %+v", r1.Manifest.Client)
	}
	importtest.ExternalCheck(t, Tool, v1, Parse, knownMismatch)
}

func TestRawExportGivesAbsoluteChunkTimes(t *testing.T) {
	dev := importtest.Load(t, Tool, fixture...)
	res, err := Parse(dev)
	if err != nil {
		t.Fatal(err)
	}
	// A raw export for the first ok record, on a perf clock that starts at
	// 5 s, with a trailing [DONE] response that must be dropped.
	var rec schema.Record
	for _, r := range res.Records {
		if r.Status == schema.StatusOK {
			rec = r
			break
		}
	}
	start := int64(5_000_000_000)
	var resp []map[string]any
	for _, c := range rec.ChunksNS {
		resp = append(resp, map[string]any{"perf_ns": start + c, "text": "data: {}"})
	}
	resp = append(resp, map[string]any{"perf_ns": start + rec.ChunksNS[len(rec.ChunksNS)-1] + 100, "text": "data: [DONE]"})
	raw, _ := json.Marshal(map[string]any{"metadata": map[string]any{"x_request_id": rec.ID, "timestamp_ns": 1}, "start_perf_ns": start, "responses": resp})
	files := append(dev, ingest.File{Name: "profile_export_raw.jsonl", Data: append(raw, '\n')})
	withRaw, err := Parse(files)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range withRaw.Records {
		if r.ID == rec.ID && !slices.Equal(r.ChunksNS, rec.ChunksNS) {
			t.Fatalf("chunks from the raw export differ from the rebuilt ones")
		}
	}
	found := false
	for _, d := range withRaw.Manifest.Source.Derived {
		if strings.Contains(d, "perf_ns") {
			found = true
		}
	}
	if !found {
		t.Error("source.derived does not say chunks came from the raw export")
	}
}
