package aiperf

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/importer/internal/importtest"
	"github.com/benchseal/benchseal/schema"
)

// TestTimeBasedRatesAreOverTheProfilingPhase: a time-based run's rates in
// a 1.x summary are over end_time − start_time (the profiling phase, grace
// period included), not benchmark_duration; they match, benchmark_duration
// still matches window_ns, and a rate edited ×1.1 does not.
func TestTimeBasedRatesAreOverTheProfilingPhase(t *testing.T) {
	files := importtest.AIPerfTimeBased(t, 1)
	res, err := Parse(files)
	if err != nil {
		t.Fatal(err)
	}
	tw, ok := res.Manifest.Provenance.Window(res.Manifest.Load.Points[0].Name, 0)
	if !ok || tw.WindowNS != 9327762000 {
		t.Fatalf("stored window %+v, want end_time − start_time = 9.327762 s", tw)
	}
	checks := importtest.ExternalCheck(t, Tool, files, Parse, knownMismatch)
	importtest.WantOutcomes(t, checks, importtest.Outcomes{Matched: 109})
	importtest.WantDocRow(t, "AIPerf time-based", checks)
	seen := 0
	for _, c := range checks {
		switch c.Metric {
		case "request_throughput", "output_token_throughput", "total_token_throughput", "window_ns":
			seen++
			if c.Outcome != schema.ClaimMatched {
				t.Errorf("%s: %s", c.Metric, c.Outcome)
			}
		}
	}
	if seen != 4 {
		t.Errorf("%d of the rates and window checked, want 4", seen)
	}
	edited := importtest.AIPerfTimeBased(t, 1.1)
	checks = importtest.ExternalCheck(t, Tool, edited, Parse, map[string]string{"request_throughput": "edited ×1.1"})
	for _, c := range checks {
		if c.Metric == "request_throughput" && c.Outcome != schema.ClaimMismatched {
			t.Errorf("request_throughput ×1.1: %s, want mismatched", c.Outcome)
		}
	}
}

// The count-based real files keep benchmark_duration and store no window.
func TestCountBasedRunStoresNoPhaseWindow(t *testing.T) {
	for _, f := range [][]string{fixture, v010} {
		res, err := Parse(importtest.Load(t, Tool, f...))
		if err != nil {
			t.Fatal(err)
		}
		if res.Manifest.Provenance != nil && len(res.Manifest.Provenance.Windows) != 0 {
			t.Errorf("%s: windows %+v", f[1], res.Manifest.Provenance.Windows)
		}
	}
}

// TestPhaseShorterThanItsRecordsFails: a summary whose end_time −
// start_time cannot hold its records, or whose times do not parse, fails
// to import with an error naming the file and field.
func TestPhaseShorterThanItsRecordsFails(t *testing.T) {
	for edit, want := range map[string]string{
		`"end_time": "2025-10-03T13:13:48.474205"`: "shorter than the span of the records",
		`"end_time": "yesterday"`:                  "end_time \"yesterday\": not an ISO 8601 time",
	} {
		files := importtest.AIPerfTimeBased(t, 1)
		files = importtest.Replace(t, files, 1, `"end_time": "2025-10-03T13:13:48.474205"`, edit)
		if strings.Contains(edit, "13:13:48") {
			files = importtest.Replace(t, files, 1, `"start_time": "2025-10-03T13:13:39.146443"`, `"start_time": "2025-10-03T13:13:39.246443"`)
		}
		_, err := Parse(files)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), files[1].Name) {
			t.Errorf("%s: error %v, want one naming %s and %q", edit, err, files[1].Name, want)
		}
	}
}

// TestInputTokenThroughputIsChecked: input_token_throughput (newer AIPerf
// versions; no replay scalar) must be the valid records' input tokens over
// the rates' window: benchmark_duration (run1 with the block added from its
// own total_isl) or a time-based run's phase window; ×1.1 fails the
// import, naming the field.
func TestInputTokenThroughputIsChecked(t *testing.T) {
	base := importtest.Load(t, Tool, fixture...)
	// run1: total_isl 48950 tokens, benchmark_duration 9.317788951 s.
	rate := 48950 / 9.317788951
	for _, tc := range []struct {
		name  string
		files func(t *testing.T, mul float64) []ingest.File
	}{
		{"count-based", func(t *testing.T, mul float64) []ingest.File {
			return importtest.Replace(t, base, 1, `"records": {`, fmt.Sprintf(`"records": {"input_token_throughput": {"unit": "tokens/sec", "avg": %v},`, mul*rate))
		}},
		{"time-based", func(t *testing.T, mul float64) []ingest.File {
			f := importtest.AIPerfTimeBased(t, 1)
			if mul == 1 {
				return f
			}
			var top map[string]json.RawMessage
			if err := json.Unmarshal(f[1].Data, &top); err != nil {
				t.Fatal(err)
			}
			var st struct {
				Avg float64 `json:"avg"`
			}
			if err := json.Unmarshal(top["input_token_throughput"], &st); err != nil {
				t.Fatal(err)
			}
			return importtest.Replace(t, f, 1, fmt.Sprint(st.Avg), fmt.Sprint(mul*st.Avg))
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Parse(tc.files(t, 1)); err != nil {
				t.Fatalf("honest input_token_throughput: %v", err)
			}
			_, err := Parse(tc.files(t, 1.1))
			if err == nil || !strings.Contains(err.Error(), "input_token_throughput.avg") || !strings.Contains(err.Error(), "input tokens") {
				t.Fatalf("×1.1: %v, want an error naming input_token_throughput.avg", err)
			}
		})
	}
}

// TestWarmupOutsideThePhaseWindow: the phase window holds the profiling
// phase's records only; a warmup request long before it (AIPerf runs
// warmup as its own phase) does not make the window "too short".
func TestWarmupOutsideThePhaseWindow(t *testing.T) {
	files := importtest.AIPerfTimeBased(t, 1)
	files = importtest.Replace(t, files, 0, `"timestamp_ns":1759522419154829652`, `"timestamp_ns":1759522319154829652`)
	files = importtest.Replace(t, files, 0, `"credit_phase":"profiling"`, `"credit_phase":"warmup"`)
	res, err := Parse(files)
	if err != nil {
		t.Fatalf("time-based run with an early warmup request: %v", err)
	}
	if tw, ok := res.Manifest.Provenance.Window(res.Manifest.Load.Points[0].Name, 0); !ok || tw.WindowNS != 9327762000 {
		t.Errorf("window %+v", tw)
	}
}
