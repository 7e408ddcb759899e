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
	want := schema.ExternalRef{Kind: "mlperf-inference", Version: "5.1.0", Division: "closed", Submitter: "AMD", System: "8xMI300X_2xEPYC_9575F", Scenario: "Interactive", Status: "VALID"}
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
	if err := schema.ValidateRunDocuments(dir, 0); err != nil {
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
	if err := schema.ValidateRunDocuments(dir, 0); err != nil {
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

// TestSummaryAloneStatesTheSLO: without the detail log, the summary's
// "Test Parameters Used" gives LoadGen's latency constraints.
func TestSummaryAloneStatesTheSLO(t *testing.T) {
	res, err := Parse(importtest.Load(t, Tool, fixture[0]))
	if err != nil {
		t.Fatal(err)
	}
	if slo := res.Manifest.SLO; slo.TTFT != 450_000_000 || slo.TPOT != 40_000_000 || slo.OneToken != schema.OneTokenFail {
		t.Errorf("slo %+v, want ttft 450 ms, tpot 40 ms (ttft_latency (ns), tpot_latency (ns))", slo)
	}
}

// TestMultiLineSummaryValuesKeptWhole: LoadGen values written over
// several lines (the early-stopping results, the WARNING) are kept whole.
func TestMultiLineSummaryValuesKeptWhole(t *testing.T) {
	res, err := Parse(importtest.Load(t, Tool, fixture[0]))
	if err != nil {
		t.Fatal(err)
	}
	r := res.Manifest.External[0].Results
	for k, v := range map[string]string{
		"summary: TTFT Early Stopping Result": "* Run successful.",
		"summary: TPOT Early Stopping Result": "* Run successful.",
		"summary: WARNING": "sample_concatenate_permutation was set to true. Generated samples per query might be different as the one in the setting. " +
			"Check the generated_samples_per_query line in the detailed log for the real samples_per_query value",
		"summary: performance_sample_count": "24576",
	} {
		if r[k] != v {
			t.Errorf("results[%q] = %q, want %q", k, r[k], v)
		}
	}
}

// TestInteractiveScenarioAndAcceleratorFromTheSubmission: an Interactive
// submission (LoadGen logs Server) is stated as Interactive, with the
// logged scenario kept; the accelerator is taken from the system name and
// labelled so.
func TestInteractiveScenarioAndAcceleratorFromTheSubmission(t *testing.T) {
	res, err := Parse(importtest.Load(t, Tool, fixture...))
	if err != nil {
		t.Fatal(err)
	}
	m := res.Manifest
	e := m.External[0]
	if e.Scenario != "Interactive" || e.Results["scenario (LoadGen)"] != "Server" || e.Category != "datacenter" || m.Load.Mode != schema.ModeRate {
		t.Errorf("scenario %q (LoadGen %q), category %q, mode %q", e.Scenario, e.Results["scenario (LoadGen)"], e.Category, m.Load.Mode)
	}
	if m.Hardware.Accelerator != "MI300X" || m.Hardware.AcceleratorCount == nil || *m.Hardware.AcceleratorCount != 8 || !strings.Contains(m.Hardware.Details["source"], `MLPerf system name "8xMI300X_2xEPYC_9575F"`) {
		t.Errorf("hardware %+v, want 8 × MI300X labelled as taken from the system name", m.Hardware)
	}
	said := strings.Join(m.Source.Derived, "\n")
	for _, w := range []string{"external[0].scenario: Interactive, from the submission directory; LoadGen ran and logged it as Server", "hardware.accelerator, hardware.accelerator_count: 8 × MI300X, taken from the MLPerf system name"} {
		if !strings.Contains(said, w) {
			t.Errorf("source.derived does not say %q:\n%s", w, said)
		}
	}
	// Without the directory only what LoadGen logged is stated.
	flat := importtest.Load(t, Tool, fixture...)
	for i := range flat {
		flat[i].Name = path.Base(flat[i].Name)
	}
	res, err = Parse(flat)
	if err != nil {
		t.Fatal(err)
	}
	if e := res.Manifest.External[0]; e.Scenario != "Server" || res.Manifest.Hardware.Accelerator != "" {
		t.Errorf("without the submission directory: scenario %q, accelerator %q", e.Scenario, res.Manifest.Hardware.Accelerator)
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
