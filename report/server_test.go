package report

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/servermetrics"
)

// A bounds-only estimate prints its bounds and no value, and a quantity
// the scrapes cannot give stays a row with its reason in text and in
// JSON, the rest of the column kept.
func TestServerColumnPrintsBoundsOnlyAndAbsentReasons(t *testing.T) {
	mean, hi, v, vhi := 0.0, 0.3, 0.02, 0.05
	c := &servermetrics.Column{Engine: "vllm",
		Histograms: []servermetrics.HistogramDelta{{Role: "queue", Metric: "q", Count: 10, Mean: &mean, Estimates: []servermetrics.Estimate{
			{Quantile: 0.5, Lo: 0, Hi: &hi, Reason: servermetrics.FromZero},
			{Quantile: 0.9, Value: &v, Lo: 0.01, Hi: &vhi},
			{Quantile: 0.99, Lo: 1, Reason: servermetrics.AboveLastEdge}}}},
		Counters: []servermetrics.CounterDelta{{Role: "prompt_tokens", Metric: "p", Delta: 20}},
		Absent:   []servermetrics.Absent{{Role: "request_success", Metric: "r", Reason: "in the scrape after the point, the sum over its series is not a finite number (it overflows)"}},
	}
	p := &replay.PointResult{Server: &replay.ServerColumn{Column: c, Scrapes: 2}}
	var text []string
	for _, r := range serverRows(p) {
		text = append(text, r.metric+" "+r.value+" "+r.unit)
	}
	got := strings.Join(text, "\n")
	for _, want := range []string{"~p50 in [0.000, 300.000]", "~p90 20.000 [10.000, 50.000]", "~p99 > 1000.000",
		"server request_success null (in the scrape after the point, the sum over its series is not a finite number (it overflows))", "prompt_tokens 20"} {
		if !strings.Contains(got, want) {
			t.Errorf("text lacks %q:\n%s", want, got)
		}
	}
	j := serverJSON(p.Server)
	var back map[string]any
	if err := json.Unmarshal([]byte(j), &back); err != nil || back["column"] == nil {
		t.Fatalf("JSON column dropped: %s (%v)", j, err)
	}
	for _, want := range []string{`"reason":"` + servermetrics.FromZero + `"`, `"value":null`, "it overflows"} {
		if !strings.Contains(j, want) {
			t.Errorf("JSON lacks %q:\n%s", want, j)
		}
	}
}
