package inferenceperf

import (
	"bytes"
	"encoding/json"
	"sort"
	"testing"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/importer/internal/importtest"
	"github.com/benchseal/benchseal/schema"
)

// fixture is hand-written in inference-perf's v0.6+ layout (no real
// per-request file was found; see testdata/README.md and
// testdata/fixtures/handwritten.py): two stages, their summaries and the
// run summary.
var fixture = []string{"per_request_lifecycle_metrics.json", "stage_0_lifecycle_metrics.json", "stage_1_lifecycle_metrics.json", "summary_lifecycle_metrics.json"}

// wantChecks is the outcome of the external check on the fixture: per
// stage 4 counts and window, 5 distributions of 14 statistics, 3 rates.
var wantChecks = importtest.Outcomes{Matched: 154}

func TestExternalCheck(t *testing.T) {
	files := importtest.Load(t, "inference-perf", fixture...)
	checks := importtest.ExternalCheck(t, Tool, files, Parse, knownMismatch)
	importtest.WantOutcomes(t, checks, wantChecks)
	importtest.WantDocRow(t, "inference-perf v0.6+", checks)
}

// knownMismatch lists claims whose recomputation differs because of the
// replay engine's peer formulas, by metric.
var knownMismatch = map[string]string{}

// TestStagesAndInputTokensAsInferencePerfWritesThem: requests are given to
// the stages in order of start by the stage summaries' counts, and input
// tokens come from info.request_metrics.text.input_tokens.
func TestStagesAndInputTokensAsInferencePerfWritesThem(t *testing.T) {
	res, err := Parse(importtest.Load(t, "inference-perf", fixture...))
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	var in int64
	for _, r := range res.Records {
		per[r.Point]++
		in += r.InputTokens
	}
	if len(per) != 2 || per["stage-0"] != 6 || per["stage-1"] != 6 {
		t.Errorf("records per point %v, want 6 in stage-0 and 6 in stage-1", per)
	}
	if in == 0 {
		t.Error("input tokens read as 0")
	}
	if len(res.Claims.Points) != 2 {
		t.Errorf("claims of %d points, want both stages", len(res.Claims.Points))
	}
	// Requests are not stored in order of start: the file's first entry
	// is not stage 0's first request.
	for _, r := range res.Records {
		if r.Point == "stage-1" && r.SentNS < maxSent(res.Records, "stage-0") {
			t.Errorf("record %s of stage-1 starts before stage-0's last start", r.ID)
		}
	}
}

func maxSent(recs []schema.Record, point string) int64 {
	var m int64
	for _, r := range recs {
		if r.Point == point {
			m = max(m, r.SentNS)
		}
	}
	return m
}

// layout rewrites the fixture's per-request file into an older info
// layout: "v0.5" (input_tokens, response_info) or "v0.4" (input_tokens,
// output_tokens and output_token_times in info itself).
func layout(t *testing.T, files []ingest.File, v string) []ingest.File {
	t.Helper()
	var reqs []map[string]any
	dec := json.NewDecoder(bytes.NewReader(files[0].Data))
	dec.UseNumber()
	if err := dec.Decode(&reqs); err != nil {
		t.Fatal(err)
	}
	for _, r := range reqs {
		info := r["info"].(map[string]any)
		in := info["request_metrics"].(map[string]any)["text"].(map[string]any)["input_tokens"]
		rm, _ := info["response_metrics"].(map[string]any)
		out := map[string]any{"input_tokens": in, "extra_info": map[string]any{}, "lora_adapter": nil}
		switch v {
		case "v0.5":
			out["response_info"] = rm
		case "v0.4":
			out = map[string]any{"input_tokens": in, "output_tokens": json.Number("0"), "output_token_times": []any{}}
			if rm != nil {
				out["output_tokens"], out["output_token_times"] = rm["output_tokens"], rm["output_token_times"]
			}
		}
		r["info"] = out
	}
	b, err := json.MarshalIndent(reqs, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	out := append([]ingest.File(nil), files...)
	out[0] = ingest.File{Name: files[0].Name, Data: b}
	return out
}

// TestOlderLayoutsCheckTheSame: the v0.5 and v0.2–v0.4 info layouts import
// to the same records' figures and every claim matches as in v0.6+.
func TestOlderLayoutsCheckTheSame(t *testing.T) {
	for _, v := range []string{"v0.5", "v0.4"} {
		t.Run(v, func(t *testing.T) {
			files := layout(t, importtest.Load(t, "inference-perf", fixture...), v)
			if bytes.Contains(files[0].Data, []byte("request_metrics")) {
				t.Fatal("layout not rewritten")
			}
			checks := importtest.ExternalCheck(t, Tool, files, Parse, knownMismatch)
			importtest.WantOutcomes(t, checks, wantChecks)
			importtest.WantDocRow(t, map[string]string{"v0.5": "inference-perf v0.5", "v0.4": "inference-perf v0.2–v0.4"}[v], checks)
		})
	}
}

// stage0Only is the fixture cut to its first stage: the requests of stage
// 0 (the first 6 by start), stage_0's summary, and as run summary the same
// report without the stage's rate fields.
func stage0Only(t *testing.T) []ingest.File {
	t.Helper()
	files := importtest.Load(t, "inference-perf", fixture[:2]...)
	var reqs []map[string]any
	dec := json.NewDecoder(bytes.NewReader(files[0].Data))
	dec.UseNumber()
	if err := dec.Decode(&reqs); err != nil {
		t.Fatal(err)
	}
	sort.SliceStable(reqs, func(i, j int) bool {
		return mustFloat(t, reqs[i]["start_time"]) < mustFloat(t, reqs[j]["start_time"])
	})
	b, _ := json.MarshalIndent(reqs[:6], "", " ")
	files[0].Data = b
	var sum map[string]any
	dec = json.NewDecoder(bytes.NewReader(files[1].Data))
	dec.UseNumber()
	if err := dec.Decode(&sum); err != nil {
		t.Fatal(err)
	}
	ls := sum["load_summary"].(map[string]any)
	for _, k := range []string{"send_duration", "requested_rate", "achieved_rate"} {
		delete(ls, k)
	}
	b, _ = json.MarshalIndent(sum, "", " ")
	return append(files, ingest.File{Name: "summary_lifecycle_metrics.json", Data: b})
}

func mustFloat(t *testing.T, v any) float64 {
	f, err := v.(json.Number).Float64()
	if err != nil {
		t.Fatal(err)
	}
	return f
}

// TestRunSummaryIsClaimedOrChecked: with one stage the run summary's
// figures are that stage's (claimed once, the same values required); over
// several stages its counts and window are checked against the requests,
// so a corrupted count fails the import.
func TestRunSummaryIsClaimedOrChecked(t *testing.T) {
	one := stage0Only(t)
	checks := importtest.ExternalCheck(t, Tool, one, Parse, knownMismatch)
	importtest.WantOutcomes(t, checks, importtest.Outcomes{Matched: 77})
	// The run summary alone claims the one point.
	checks = importtest.ExternalCheck(t, Tool, []ingest.File{one[0], one[2]}, Parse, knownMismatch)
	importtest.WantOutcomes(t, checks, importtest.Outcomes{Matched: 77})

	good := importtest.Load(t, "inference-perf", fixture...)
	cases := []importtest.BadInput{
		{Name: "run summary count (several stages)", Files: importtest.Replace(t, good, 3, `"count": 10`, `"count": 11`), Want: []string{"summary_lifecycle_metrics.json", "successes.count is 11", "gives 10"}},
		{Name: "run summary differs from its one stage", Files: importtest.Replace(t, one, 2, `"count": 5`, `"count": 4`), Want: []string{"summary_lifecycle_metrics.json", "counts.ok is 4", "stage_0_lifecycle_metrics.json states 5"}},
		{Name: "a stage summary missing", Files: []ingest.File{good[0], good[2]}, Want: []string{"stage_1_lifecycle_metrics.json", "send_duration"}},
		{Name: "stage counts short", Files: []ingest.File{good[0], good[1]}, Want: []string{"stage_0_lifecycle_metrics.json", "count 6 requests, the per-request file holds 12"}},
	}
	importtest.CheckBad(t, Parse, cases)
}

func TestBadInputFails(t *testing.T) {
	good := importtest.Load(t, "inference-perf", fixture...)
	name := fixture[0]
	cases := append(importtest.CommonBad(t, Tool, good),
		importtest.BadInput{Name: "NaN", Files: importtest.Replace(t, good, 0, `"start_time": 51234.00347180493`, `"start_time": NaN`), Want: []string{name, "NaN"}},
		importtest.BadInput{Name: "negative duration", Files: importtest.Replace(t, good, 0, `"end_time": 51234.06820542393`, `"end_time": 51233.06820542393`), Want: []string{name, "record 0", "negative"}},
		importtest.BadInput{Name: "missing start", Files: importtest.Replace(t, good, 0, `"start_time": 51234.00347180493`, `"x": 1`), Want: []string{name, "record 0", "start_time"}},
		importtest.BadInput{Name: "mixed units", Files: importtest.Replace(t, good, 0, `51234.03390266544,`, `51234033.90266544,`), Want: []string{name, "record 0", "mixed units"}},
		importtest.BadInput{Name: "input tokens mirror differs", Files: importtest.Replace(t, good, 0, `"input_tokens": 100
  },`, `"input_tokens": 101
  },`), Want: []string{name, "record 0", "info.input_tokens"}},
		importtest.BadInput{Name: "summary only", Files: good[1:], Want: []string{"per_request_lifecycle_metrics.json"}},
	)
	importtest.CheckBad(t, Parse, cases)
}

func FuzzParse(f *testing.F) {
	importtest.FuzzParse(f, Tool, importtest.Load(f, "inference-perf", fixture...), 0, Parse)
}

func FuzzStream(f *testing.F) {
	importtest.FuzzStream(f, importtest.Load(f, "inference-perf", fixture...), 0, Stream)
}
