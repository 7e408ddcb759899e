package mlperf

import (
	"context"
	"path"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/importer/internal/importtest"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

const dir = "closed/AMD/results/8xMI300X_2xEPYC_9575F/llama2-70b-99.9/Interactive/performance/run_1/"

var fixture = []string{dir + "mlperf_log_summary.txt", dir + "mlperf_log_detail.txt"}

func TestParseFixtureIsAReferenceWithoutRecords(t *testing.T) {
	files := importtest.Load(t, Tool, fixture...)
	res, err := Parse(files)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 0 || res.Claims != nil {
		t.Fatalf("records %d, claims %v: an MLPerf import must not invent requests", len(res.Records), res.Claims)
	}
	m := res.Manifest
	if len(m.External) != 1 {
		t.Fatalf("external = %d", len(m.External))
	}
	e := m.External[0]
	want := schema.ExternalRef{Kind: "mlperf-inference", Version: "5.1.0", Division: "closed", Submitter: "AMD", System: "8xMI300X_2xEPYC_9575F", Scenario: "Server", Status: "VALID"}
	if e.Kind != want.Kind || e.Version != want.Version || e.Division != want.Division || e.Submitter != want.Submitter || e.System != want.System || e.Scenario != want.Scenario || e.Status != want.Status {
		t.Errorf("external = %+v", e)
	}
	for k, v := range map[string]string{
		"effective_schedule_rng_seed":                      "18209322760996052031",
		"effective_qsl_rng_seed":                           "1780908523862526354",
		"requested_server_ttft_latency":                    "450000000",
		"requested_server_tpot_latency":                    "40000000",
		"result_first_token_99.00_percentile_latency_ns":   "435976100",
		"result_time_per_output_token_99.00_percentile_ns": "39507635",
		"result_completed_tokens_per_second":               "8840.42",
		"benchmark":                                        "llama2-70b-99.9",
		"submission scenario directory":                    "Interactive",
	} {
		if e.Results[k] != v {
			t.Errorf("results[%q] = %q, want %q", k, e.Results[k], v)
		}
	}
	if m.Model.Name != "llama2-70b-99.9" || m.SLO.TTFT != 450_000_000 || m.SLO.TPOT != 40_000_000 {
		t.Errorf("model %q slo %+v", m.Model.Name, m.SLO)
	}
	if len(e.Attachments) != 2 || e.Attachments[0] != path.Base(fixture[1]) {
		t.Errorf("attachments %v", e.Attachments)
	}
	if len(m.Load.Points) != 0 || m.Load.Mode != schema.ModeRate {
		t.Errorf("load %+v: want no invented point, mode rate (Server)", m.Load)
	}
	if m.EpochUnixNS == 0 || m.Declared("epoch_unix_ns") {
		t.Errorf("epoch %d: the detail log's test_datetime dates the run", m.EpochUnixNS)
	}
}

// TestImportedReferenceValidatesAndReplays writes the import as a run
// directory: it validates with no records and no load points, and replay
// says there is nothing to recompute.
func TestImportedReferenceValidatesAndReplays(t *testing.T) {
	files := importtest.Load(t, Tool, fixture...)
	res, err := Parse(files)
	if err != nil {
		t.Fatal(err)
	}
	dir := importtest.Write(t, Tool, files, res)
	if err := schema.ValidateRunDir(dir, 0); err != nil {
		t.Fatalf("validate: %v", err)
	}
	rd, err := schema.OpenRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	r, err := replay.Replay(context.Background(), rd, replay.Options{Definitions: "mlperf"})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Results) != 0 || len(r.Notes) == 0 || !strings.HasPrefix(r.Notes[0], replay.NoPerRequestData+"; external evidence only") {
		t.Errorf("results %d, notes %q", len(r.Results), r.Notes)
	}
}

// TestSummaryAloneLeavesTimesUnknown: the summary log does not date the
// run, so its times are declared unknown, never invented.
func TestSummaryAloneLeavesTimesUnknown(t *testing.T) {
	files := importtest.Load(t, Tool, fixture[0])
	res, err := Parse(files)
	if err != nil {
		t.Fatal(err)
	}
	res.Manifest.Model.Name = "llama2-70b-99.9"
	dir := importtest.Write(t, Tool, files, res)
	if err := schema.ValidateRunDir(dir, 0); err != nil {
		t.Fatalf("validate: %v", err)
	}
	m := res.Manifest
	if m.EpochUnixNS != 0 || m.StartTime != "" || m.FinishTime != "" {
		t.Errorf("times %d %q %q, want unknown", m.EpochUnixNS, m.StartTime, m.FinishTime)
	}
	for _, f := range []string{"epoch_unix_ns", "start_time", "finish_time"} {
		if !m.Declared(f) {
			t.Errorf("%s not declared unknown: %v", f, m.Unknown)
		}
	}
}

func TestBadInputFails(t *testing.T) {
	good := importtest.Load(t, Tool, fixture...)
	cases := append(importtest.CommonBad(t, Tool, good),
		importtest.BadInput{Name: "bad detail line", Files: importtest.Replace(t, good, 1, `:::MLLOG {"key": "loadgen_build_date_local"`, `:::MLLOG {"key": NaN`), Want: []string{"mlperf_log_detail.txt:2", "NaN"}},
		importtest.BadInput{Name: "not mllog", Files: importtest.Replace(t, good, 1, `:::MLLOG {"key": "loadgen_build_date_local"`, `garbage {"key": "x"`), Want: []string{"mlperf_log_detail.txt:2", "MLLOG"}},
		importtest.BadInput{Name: "summary without scenario", Files: importtest.Replace(t, good, 0, "Scenario :", "Scenery :"), Want: []string{"mlperf_log_summary.txt", "Scenario"}},
	)
	importtest.CheckBad(t, Parse, cases)
}

func FuzzParseSummary(f *testing.F) {
	importtest.FuzzParse(f, Tool, importtest.Load(f, Tool, fixture...), 0, Parse)
}

func FuzzParseDetail(f *testing.F) {
	importtest.FuzzParse(f, Tool, importtest.Load(f, Tool, fixture...), 1, Parse)
}

func TestSystemAccelerators(t *testing.T) {
	for _, tc := range []struct {
		system string
		n      int
		acc    string
		ok     bool
	}{
		{"8xMI300X_2xEPYC_9575F", 8, "MI300X", true},
		{"1xH100-SXM-80GB", 1, "H100-SXM-80GB", true},
		{"dgx-h100", 0, "", false},
		{"0xFOO", 0, "", false},
		{"x8", 0, "", false},
		{"", 0, "", false},
	} {
		n, acc, ok := systemAccelerators(tc.system)
		if n != tc.n || acc != tc.acc || ok != tc.ok {
			t.Errorf("systemAccelerators(%q) = %d, %q, %v; want %d, %q, %v", tc.system, n, acc, ok, tc.n, tc.acc, tc.ok)
		}
	}
}
