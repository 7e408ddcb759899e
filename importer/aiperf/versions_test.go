package aiperf

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/importer/internal/importtest"
	"github.com/benchseal/benchseal/schema"
)

// v010 is a real AIPerf 0.10.0 export (summary schema_version 1.3); see
// testdata/README.md for its source and how it was trimmed.
var v010 = []string{"aiperf010_c2_profile_export.jsonl", "aiperf010_c2_profile_export_aiperf.json"}

func replaceAll(files []ingest.File, i int, old, new string) []ingest.File {
	out := append([]ingest.File(nil), files...)
	out[i] = ingest.File{Name: out[i].Name, Data: bytes.ReplaceAll(out[i].Data, []byte(old), []byte(new))}
	return out
}

// The issue's own reproduction: the run1 fixture with AIPerf's current TTFT
// tag must import and check exactly as with the old one (108 claims, TTFT
// from the tag rather than the request's end).
func TestTimeToFirstTokenTagImportsLikeTTFT(t *testing.T) {
	old := importtest.Load(t, Tool, fixture...)
	renamed := replaceAll(replaceAll(old, 0, `"ttft":`, `"time_to_first_token":`), 1, `"ttft":`, `"time_to_first_token":`)
	if bytes.Contains(renamed[0].Data, []byte(`"ttft"`)) {
		t.Fatal("fixture still holds the old tag")
	}
	ro, err := Parse(old)
	if err != nil {
		t.Fatal(err)
	}
	rn, err := Parse(renamed)
	if err != nil {
		t.Fatal(err)
	}
	for i := range ro.Records {
		if !slices.Equal(ro.Records[i].ChunksNS, rn.Records[i].ChunksNS) {
			t.Fatalf("record %d: chunks %v…, want %v…", i, head(rn.Records[i].ChunksNS), head(ro.Records[i].ChunksNS))
		}
	}
	checks := importtest.ExternalCheck(t, Tool, renamed, Parse, knownMismatch)
	importtest.WantOutcomes(t, checks, importtest.Outcomes{Matched: 108})
	importtest.WantDocRow(t, "AIPerf `run1`, tags renamed", checks)
	for _, c := range checks {
		if c.Metric == "ttft_ns.mean" && (c.Recomputed == nil || *c.Recomputed > 2.4e9 || *c.Recomputed < 2.3e9) {
			t.Errorf("ttft mean recomputed %v, want AIPerf's 2.343 s", c.Recomputed)
		}
	}
}

func head(s []int64) []int64 { return s[:min(3, len(s))] }

func TestUnknownTTFTTagFails(t *testing.T) {
	for _, files := range [][]ingest.File{
		replaceAll(importtest.Load(t, Tool, fixture...), 0, `"ttft":`, `"first_token_latency":`),
		replaceAll(importtest.Load(t, Tool, v010...), 0, `"time_to_first_token":`, `"ttft_v2":`),
		// Without the summary nothing says the run was not streaming.
		replaceAll(importtest.Load(t, Tool, v010[0]), 0, `"time_to_first_token":`, `"ttft_v2":`),
	} {
		_, err := Parse(files)
		if err == nil {
			t.Fatal("a streaming record without a known TTFT tag imported")
		}
		if !errors.Is(err, ingest.ErrBadInput) || !strings.Contains(err.Error(), "time_to_first_token or ttft") || !strings.Contains(err.Error(), files[0].Name+":1") {
			t.Errorf("error %q: want a bad-input error naming the line and the known tags", err)
		}
	}
}

func TestNonStreamingRecordNeedsNoTTFT(t *testing.T) {
	files := importtest.Load(t, Tool, v010...)
	files = replaceAll(files, 0, `"time_to_first_token":`, `"x_time_to_first_token":`)
	files = replaceAll(files, 0, `"inter_chunk_latency":`, `"x_inter_chunk_latency":`)
	files = replaceAll(files, 1, `"streaming": true`, `"streaming": false`)
	res, err := Parse(files)
	if err != nil {
		t.Fatal(err)
	}
	if res.Manifest.Client.Boundary != schema.BoundaryNonStreaming || res.Manifest.Decoding.Streaming {
		t.Errorf("boundary %q streaming %v, want non-streaming", res.Manifest.Client.Boundary, res.Manifest.Decoding.Streaming)
	}
	if res.Manifest.Provenance.Field(schema.FieldFirstChunk).Usable() {
		t.Error("first chunk of a non-streaming record declared usable")
	}
	if got := res.Records[0].ChunksNS; len(got) != 1 || got[0] != 82035578420 {
		t.Errorf("chunks %v, want the single response at request_latency", got)
	}
}

func TestAIPerf010Export(t *testing.T) {
	res, err := Parse(importtest.Load(t, Tool, v010...))
	if err != nil {
		t.Fatal(err)
	}
	m := res.Manifest
	pt := m.Load.Points[0]
	for _, c := range []struct {
		what      string
		got, want any
	}{
		{"version", m.Client.Version, "0.10.0"},
		{"model", m.Model.Name, "Qwen3-VL-30B-A3B-Instruct-optimumxt"},
		{"tokenizer", m.Model.Tokenizer, "Qwen/Qwen3-VL-30B-A3B-Instruct"},
		{"dataset", m.Workload.Dataset, "datasets/aiperf/nvfp4_chatbot_flat.jsonl"},
		{"items", m.Workload.Items, 20},
		{"point", pt.Name, "concurrency-2"},
		{"concurrency", pt.Concurrency, 2},
		{"requests", pt.Requests, 20},
		{"warmup", m.Load.Warmup.Requests, 2},
		{"seed", fmt.Sprint(*m.Client.Seed), "42"},
		{"endpoint", m.Decoding.Endpoint, "/v1/chat/completions"},
		{"streaming", m.Decoding.Streaming, true},
	} {
		if c.got != c.want {
			t.Errorf("%s = %v, want %v", c.what, c.got, c.want)
		}
	}
	rec := res.Records[0]
	if len(rec.ChunksNS) != 284 || rec.ChunksNS[0] != 12881482693 || rec.ChunksNS[1] != 12881482693+36868120050 {
		t.Errorf("record rebuilt as %d chunks starting %v, want 284 from TTFT 12881.482693 ms", len(rec.ChunksNS), head(rec.ChunksNS))
	}
	claims := map[string]schema.Claim{}
	for _, c := range res.Claims.Points[0].Metrics {
		claims[c.Metric] = c
	}
	ttft := 0
	for k, c := range claims {
		if strings.HasPrefix(k, "ttft_ns.") {
			ttft++
			if !strings.HasPrefix(c.Source, "time_to_first_token.") {
				t.Errorf("%s from %s", k, c.Source)
			}
		}
		approx := strings.HasPrefix(k, "itl_ns.p")
		if approx != (c.NotRecomputable != "") {
			t.Errorf("%s: not recomputable %q", k, c.NotRecomputable)
		}
		if approx && !strings.Contains(c.NotRecomputable, "t-digest") {
			t.Errorf("%s: reason %q does not name the t-digest", k, c.NotRecomputable)
		}
	}
	if ttft != 14 {
		t.Errorf("%d TTFT claims, want 14 (count, avg, std, min, max, p1…p99)", ttft)
	}
	if c, ok := claims["total_token_throughput"]; !ok || c.Value != 29.41816216308452 {
		t.Errorf("total_token_throughput claim = %+v", c)
	}
}

func TestApproxICLByVersion(t *testing.T) {
	for _, c := range []struct {
		version, schema string
		want            bool
	}{
		{"0.10.0", "1.3", true},
		{"0.13.0", "1.4", true},
		{"1.0.0", "", true},
		{"0.10.0rc1", "", true},
		{"0.9.1", "1.0", false},
		{"0.3.0", "1.0", false},
		{"", "1.3", true},
		{"", "1.0", false},
		{"", "", false},
	} {
		_, got := approxICL(&Summary{AIPerfVersion: c.version, SchemaVersion: c.schema})
		if got != c.want {
			t.Errorf("version %q schema %q: approximate = %v, want %v", c.version, c.schema, got, c.want)
		}
	}
}

// AIPerf's total_token_throughput is (total ISL + total OSL) ÷
// benchmark_duration. The run1 summary predates that block; add it from
// the summary's own totals and check that replay agrees.
func TestTotalTokenThroughputCountsInputAndOutput(t *testing.T) {
	files := importtest.Load(t, Tool, fixture...)
	var sum struct {
		Records map[string]struct {
			Avg float64 `json:"avg"`
		} `json:"records"`
	}
	if err := json.Unmarshal(files[1].Data, &sum); err != nil {
		t.Fatal(err)
	}
	total := (sum.Records["total_isl"].Avg + sum.Records["total_osl"].Avg) / sum.Records["benchmark_duration"].Avg
	if total < 7574 || total > 7575 {
		t.Fatalf("fixture total %v", total)
	}
	files = importtest.Replace(t, files, 1, `"records": {`, fmt.Sprintf(`"records": {"total_token_throughput": {"unit": "tokens/sec", "avg": %v},`, total))
	checks := importtest.ExternalCheck(t, Tool, files, Parse, knownMismatch)
	importtest.WantOutcomes(t, checks, importtest.Outcomes{Matched: 109})
	importtest.WantDocRow(t, "AIPerf `run1` with `total_token_throughput`", checks)
}

// TestTimeBoundedPointDeclaresItsDuration: a --benchmark-duration run (the
// loadgen layout's benchmark_duration, a 1.3 phase's duration) declares its
// point's duration; the grace period is kept in the notes. The real
// summaries are count-based: the time-based shape is the same file with
// the keys AIPerf's config writes for the option added (hand edit).
func TestTimeBoundedPointDeclaresItsDuration(t *testing.T) {
	for _, tc := range []struct {
		name  string
		files []ingest.File
	}{
		{"loadgen", replaceAll(importtest.Load(t, Tool, fixture...), 1, `"loadgen": {`, `"loadgen": {"benchmark_duration": 60.0, "benchmark_grace_period": 30.0, `)},
		{"phases", replaceAll(importtest.Load(t, Tool, v010...), 1, `"name": "profiling",`, `"name": "profiling", "duration": 60.0, "grace_period": 30.0,`)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if bytes.Equal(tc.files[1].Data, importtest.Load(t, Tool, map[string]string{"loadgen": fixture[1], "phases": v010[1]}[tc.name])[0].Data) {
				t.Fatal("edit did not apply")
			}
			res, err := Parse(tc.files)
			if err != nil {
				t.Fatal(err)
			}
			m := res.Manifest
			if d := m.Load.Points[0].Duration; d != schema.Duration(60e9) {
				t.Errorf("point duration %v, want 60 s", d)
			}
			if m.Notes["aiperf.grace_period_s"] != "30.0" {
				t.Errorf("notes %v: want the grace period", m.Notes)
			}
		})
	}
	res, err := Parse(importtest.Load(t, Tool, fixture...))
	if err != nil {
		t.Fatal(err)
	}
	if d := res.Manifest.Load.Points[0].Duration; d != 0 {
		t.Errorf("count-based run: duration %v, want none", d)
	}
}

// TestDatasetNamedByTheSummary: workload.dataset comes from the summary
// wherever its layout names it (1.3 datasets[], ≤ 1.0 input.public_dataset
// or input.file).
func TestDatasetNamedByTheSummary(t *testing.T) {
	res, err := Parse(importtest.Load(t, Tool, v010...))
	if err != nil {
		t.Fatal(err)
	}
	if d := res.Manifest.Workload.Dataset; d != "datasets/aiperf/nvfp4_chatbot_flat.jsonl" {
		t.Errorf("0.10.0 dataset %q", d)
	}
	for edit, want := range map[string]string{
		`"input": {"public_dataset": "sharegpt", `:                                      "sharegpt",
		`"input": {"file": "traces/a.jsonl", "custom_dataset_type": "mooncake_trace", `: "traces/a.jsonl",
	} {
		res, err := Parse(replaceAll(importtest.Load(t, Tool, fixture...), 1, `"input": {`, edit))
		if err != nil {
			t.Fatal(err)
		}
		if d := res.Manifest.Workload.Dataset; d != want {
			t.Errorf("%s: dataset %q, want %q", edit, d, want)
		}
	}
}

// TestPerRecordDistributionsAreClaimed: the summary's time_to_second_token
// (ttst), output_token_throughput_per_user, input_sequence_length and
// output_sequence_length blocks are claimed and recompute from the
// records' own metrics, exactly.
func TestPerRecordDistributionsAreClaimed(t *testing.T) {
	checks := importtest.ExternalCheck(t, Tool, importtest.Load(t, Tool, fixture...), Parse, knownMismatch)
	want := map[string]bool{"time_to_second_token_ns.p99": false, "time_to_second_token_ns.stddev": false, "output_token_throughput_per_user.mean": false,
		"output_token_throughput_per_user.p50": false, "input_sequence_length.mean": false, "output_sequence_length.stddev": false, "output_sequence_length.n": false}
	for _, c := range checks {
		if _, ok := want[c.Metric]; ok {
			if c.Outcome != schema.ClaimMatched || c.RelError == nil || *c.RelError > 1e-12 {
				t.Errorf("%s: %s (rel %v)", c.Metric, c.Outcome, c.RelError)
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
