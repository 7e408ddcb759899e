package llmperf

import (
	"context"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/importer/internal/importtest"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
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
	importtest.WantOutcomes(t, checks, importtest.Outcomes{Matched: 63, Mismatched: 0, NotRecomputable: 2, NotRecomputableMetrics: []string{"output_token_throughput", "request_throughput"}})
	importtest.WantDocRow(t, "LLMPerf groq_70b", checks)
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
		importtest.BadInput{Name: "error rate not errors ÷ started", Files: importtest.Replace(t, good, 1, `"results_error_rate": 0.0`, `"results_error_rate": 0.1`), Want: []string{fixture[1], "results_error_rate", "0 ÷ 150"}},
		importtest.BadInput{Name: "error rate ×1.1", Files: importtest.Replace(t, importtest.Replace(t, good, 1, `"results_error_rate": 0.0`, `"results_error_rate": 0.022`), 1, `"results_number_errors": 0`, `"results_number_errors": 3`), Want: []string{fixture[1], "results_error_rate", "3 ÷ 150 = 0.02"}},
	)
	importtest.CheckBad(t, Parse, cases)
}

func FuzzParseIndividual(f *testing.F) {
	importtest.FuzzParse(f, Tool, importtest.Load(f, Tool, fixture...), 0, Parse)
}

func FuzzParseSummary(f *testing.F) {
	importtest.FuzzParse(f, Tool, importtest.Load(f, Tool, fixture...), 1, Parse)
}

// TestRateClaimsOverDerivedWindowAreNotRecomputable: LLMPerf's stored
// window is completed ÷ completed-per-minute, so its throughput claims
// recomputed over it restate themselves. With both rates doubled in the
// summary and the claims' own "not recomputable" marks removed (a
// publisher's edit), they are still not recomputable, with the reason.
func TestRateClaimsOverDerivedWindowAreNotRecomputable(t *testing.T) {
	files := importtest.Load(t, Tool, fixture...)
	files = importtest.Replace(t, files, 1, `"results_num_completed_requests_per_min": 176.73895115400083`, `"results_num_completed_requests_per_min": 353.47790230800166`)
	files = importtest.Replace(t, files, 1, `"results_mean_output_throughput_token_per_s": 441.84737788500206`, `"results_mean_output_throughput_token_per_s": 883.69475577000412`)
	res, err := Parse(files)
	if err != nil {
		t.Fatal(err)
	}
	for i := range res.Claims.Points {
		for j := range res.Claims.Points[i].Metrics {
			res.Claims.Points[i].Metrics[j].NotRecomputable = ""
		}
	}
	rd, err := schema.OpenRunDir(importtest.Write(t, Tool, files, res))
	if err != nil {
		t.Fatal(err)
	}
	checks, err := replay.ClaimChecker{}.CheckClaims(context.Background(), rd)
	if err != nil {
		t.Fatal(err)
	}
	seen := 0
	for _, c := range checks {
		if c.Metric != "request_throughput" && c.Metric != "output_token_throughput" {
			continue
		}
		seen++
		if c.Outcome != schema.ClaimNotRecomputable || !strings.Contains(c.Reason, "derived from the claimed results_num_completed_requests_per_min") {
			t.Errorf("%s: %s (%s), want not recomputable: the window is derived from the claimed rate", c.Metric, c.Outcome, c.Reason)
		}
	}
	if seen != 2 {
		t.Fatalf("%d throughput claims checked, want 2", seen)
	}
}

// TestPerRequestDistributionsAreClaimed: the summary's per-request output
// throughput and token-count statistics are claimed and recompute from
// the rows LLMPerf stored (pandas, ddof 1).
func TestPerRequestDistributionsAreClaimed(t *testing.T) {
	checks := importtest.ExternalCheck(t, Tool, importtest.Load(t, Tool, fixture...), Parse, nil)
	want := map[string]bool{"request_output_throughput_token_per_s.p99": false, "request_output_throughput_token_per_s.stddev": false,
		"number_input_tokens.mean": false, "number_output_tokens.p50": false, "number_output_tokens.stddev": false}
	for _, c := range checks {
		if _, ok := want[c.Metric]; ok {
			if c.Outcome != schema.ClaimMatched {
				t.Errorf("%s: %s", c.Metric, c.Outcome)
			}
			want[c.Metric] = true
		}
	}
	for m, seen := range want {
		if !seen {
			t.Errorf("%s not claimed", m)
		}
	}
}
