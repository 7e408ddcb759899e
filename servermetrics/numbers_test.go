package servermetrics

import (
	"encoding/json"
	"strconv"
	"strings"
	"testing"
)

func parse(t *testing.T, text string, at int64) *Snapshot {
	t.Helper()
	s, err := Parse(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	s.AtNS = at
	return s
}

func absentReason(c *Column, role string) string {
	for _, a := range c.Absent {
		if a.Role == role {
			return a.Reason
		}
	}
	return ""
}

const promptTokens = "# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total %s\n"

// A counter whose series sum overflows is absent with its reason; the
// rest of the column is kept and marshals to JSON.
func TestCounterSumOverflowIsAbsentWithItsReason(t *testing.T) {
	scrape := func(success, prompt string) string {
		return "# TYPE vllm:request_success_total counter\n" + success + strings.ReplaceAll(promptTokens, "%s", prompt)
	}
	before := parse(t, scrape("vllm:request_success_total{e=\"0\"} 1\n", "10"), 0)
	after := parse(t, scrape("vllm:request_success_total{e=\"0\"} 1.7e308\nvllm:request_success_total{e=\"1\"} 1.7e308\n", "30"), 1e9)
	c, err := Delta(EngineVLLM, []*Snapshot{before, after}, wholeRun)
	if err != nil {
		t.Fatal(err)
	}
	if r := absentReason(c, RoleRequestSuccess); !strings.Contains(r, "not a finite number") {
		t.Errorf("request_success absent reason %q, want the overflow named", r)
	}
	if len(c.Counters) != 1 || c.Counters[0].Role != RolePromptTokens || c.Counters[0].Delta != 20 {
		t.Errorf("counters %+v, want prompt_tokens 20 kept", c.Counters)
	}
	if _, err := json.Marshal(c); err != nil {
		t.Errorf("the column does not marshal: %v", err)
	}
}

// A reset of one series is a reset even when another series grows by
// more (data-parallel engines, one restarting).
func TestCounterResetIsCheckedPerSeries(t *testing.T) {
	before := parse(t, strings.ReplaceAll(promptTokens, "vllm:prompt_tokens_total %s", "vllm:prompt_tokens_total{engine=\"0\"} 100\nvllm:prompt_tokens_total{engine=\"1\"} 0"), 0)
	after := parse(t, strings.ReplaceAll(promptTokens, "vllm:prompt_tokens_total %s", "vllm:prompt_tokens_total{engine=\"0\"} 10\nvllm:prompt_tokens_total{engine=\"1\"} 500"), 1e9)
	c, err := Delta(EngineVLLM, []*Snapshot{before, after}, wholeRun)
	if err != nil {
		t.Fatal(err)
	}
	if r := absentReason(c, RolePromptTokens); r != ReasonCounterReset {
		t.Errorf("prompt_tokens absent reason %q, want the reset (counters %+v)", r, c.Counters)
	}
	hist := func(e0, e1 int) string {
		return "# TYPE vllm:time_to_first_token_seconds histogram\n" +
			strings.NewReplacer("N0", itoa(e0), "N1", itoa(e1)).Replace(
				"vllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"1\"} N0\nvllm:time_to_first_token_seconds_bucket{engine=\"0\",le=\"+Inf\"} N0\n"+
					"vllm:time_to_first_token_seconds_count{engine=\"0\"} N0\nvllm:time_to_first_token_seconds_sum{engine=\"0\"} N0\n"+
					"vllm:time_to_first_token_seconds_bucket{engine=\"1\",le=\"1\"} N1\nvllm:time_to_first_token_seconds_bucket{engine=\"1\",le=\"+Inf\"} N1\n"+
					"vllm:time_to_first_token_seconds_count{engine=\"1\"} N1\nvllm:time_to_first_token_seconds_sum{engine=\"1\"} N1\n")
	}
	c, err = Delta(EngineVLLM, []*Snapshot{parse(t, hist(50, 0), 0), parse(t, hist(5, 100), 1e9)}, wholeRun)
	if err != nil {
		t.Fatal(err)
	}
	if r := absentReason(c, RoleTTFT); r != ReasonCounterReset {
		t.Errorf("ttft absent reason %q, want the reset (histograms %+v)", r, c.Histograms)
	}
}

func itoa(n int) string { return strconv.Itoa(n) }

// A bucket edge that is not a number (dropped by the text parser) is
// named as the edge that changed, with the reason it shows as missing.
func TestNaNBucketEdgeSaysSo(t *testing.T) {
	text := func(mid string) string {
		return "# TYPE vllm:time_to_first_token_seconds histogram\n" +
			"vllm:time_to_first_token_seconds_bucket{m=\"x\",le=\"0.1\"} 0\nvllm:time_to_first_token_seconds_bucket{m=\"x\",le=\"" + mid + "\"} 1\n" +
			"vllm:time_to_first_token_seconds_bucket{m=\"x\",le=\"1\"} 1\nvllm:time_to_first_token_seconds_bucket{m=\"x\",le=\"+Inf\"} 1\n" +
			"vllm:time_to_first_token_seconds_count{m=\"x\"} 1\nvllm:time_to_first_token_seconds_sum{m=\"x\"} 1\n"
	}
	c, err := Delta(EngineVLLM, []*Snapshot{parse(t, text("0.5"), 0), parse(t, text("NaN"), 1e9)}, wholeRun)
	if err != nil {
		t.Fatal(err)
	}
	if r := absentReason(c, RoleTTFT); !strings.Contains(r, "only before the point: [0.5]; only after: []") || !strings.Contains(r, "NaN") {
		t.Errorf("ttft absent reason %q, want the edge and the NaN rule named", r)
	}
}

// An estimate never contradicts the mean: a bucket starting at 0 gives
// only its bounds, and so does an interpolation above mean/(1−q).
func TestEstimatesDoNotContradictTheMean(t *testing.T) {
	h := &Hist{Bounds: []float64{0.3, 1}, Cum: []float64{100, 100}, Count: 100, Sum: 0}
	e := h.estimate(0.5, 0)
	if e.Value != nil || e.Reason != FromZero || e.Lo != 0 || e.Hi == nil || *e.Hi != 0.3 {
		t.Errorf("p50 in a bucket from 0 with mean 0: %+v, want bounds [0, 0.3] only", e)
	}
	// 90 observations at 0.1 (bucket [0, 0.1]), 10 in [0.1, 10]: mean
	// 0.02 (sum 2); p99 interpolates to 9.01 > mean/(1−0.99) = 2.
	h = &Hist{Bounds: []float64{0.1, 10}, Cum: []float64{90, 100}, Count: 100, Sum: 2}
	if e := h.estimate(0.99, h.Sum/h.Count); e.Value != nil || e.Reason != AboveMarkov || e.Lo != 0.1 {
		t.Errorf("p99 above the Markov bound: %+v, want bounds only", e)
	}
	if e := h.estimate(0.95, 0.5); e.Value == nil || !near(*e.Value, 5.05) {
		t.Errorf("p95 within the bound: %+v, want 5.05", e)
	}
}

// The same series with its labels in another order is the same series,
// not a vanished one (no false reset).
func TestSeriesLabelOrderDoesNotMatter(t *testing.T) {
	before := parse(t, strings.ReplaceAll(promptTokens, "vllm:prompt_tokens_total %s", `vllm:prompt_tokens_total{a="1",b="2"} 10`), 0)
	after := parse(t, strings.ReplaceAll(promptTokens, "vllm:prompt_tokens_total %s", `vllm:prompt_tokens_total{b="2",a="1"} 30`), 1e9)
	c, err := Delta(EngineVLLM, []*Snapshot{before, after}, wholeRun)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Counters) != 1 || c.Counters[0].Delta != 20 {
		t.Errorf("counters %+v absent %+v, want prompt_tokens 20", c.Counters, c.Absent)
	}
}
