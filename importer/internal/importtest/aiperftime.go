package importtest

import (
	"bytes"
	"encoding/json"
	"strconv"
	"testing"
	"time"

	"github.com/benchseal/benchseal/importer/ingest"
)

// AIPerfTimeBased returns the real AIPerf run1 export (testdata/fixtures/
// aiperf) as a time-based run in the 1.x summary layout, a hand edit: no
// public time-based export was found. The records file is the real one;
// the summary's metric blocks move from "records" to the top level as
// schema 1.x writes them, schema_version "1.0" is added, the loadgen
// states --benchmark-duration 9 and --benchmark-grace-period 30, and the
// rates are AIPerf's for such a run: request_count, total_osl and
// total_isl + total_osl, and total_isl (input_token_throughput, which
// newer versions write) over the summary's own end_time − start_time
// (9.327762 s; benchmark_duration, kept, is 9.317789 s). mul scales the
// stated request_throughput (1: honest).
func AIPerfTimeBased(tb testing.TB, mul float64) []ingest.File {
	tb.Helper()
	files := Load(tb, "aiperf", "run1_profile_export.jsonl", "run1_profile_export_aiperf.json")
	var top map[string]json.RawMessage
	dec := json.NewDecoder(bytes.NewReader(files[1].Data))
	dec.UseNumber()
	if err := dec.Decode(&top); err != nil {
		tb.Fatal(err)
	}
	var recs map[string]map[string]any
	dec = json.NewDecoder(bytes.NewReader(top["records"]))
	dec.UseNumber()
	if err := dec.Decode(&recs); err != nil {
		tb.Fatal(err)
	}
	var start, end string
	if json.Unmarshal(top["start_time"], &start) != nil || json.Unmarshal(top["end_time"], &end) != nil {
		tb.Fatal("run1 summary: no start_time/end_time")
	}
	ts, err1 := time.Parse("2006-01-02T15:04:05.999999", start)
	te, err2 := time.Parse("2006-01-02T15:04:05.999999", end)
	if err1 != nil || err2 != nil {
		tb.Fatal(err1, err2)
	}
	w := float64(te.Sub(ts)) / 1e9
	avg := func(tag string) float64 {
		v, err := strconv.ParseFloat(string(recs[tag]["avg"].(json.Number)), 64)
		if err != nil {
			tb.Fatal(tag, err)
		}
		return v
	}
	set := func(tag, unit string, v float64) {
		recs[tag] = map[string]any{"tag": tag, "unit": unit, "avg": v}
	}
	set("request_throughput", "requests/sec", mul*avg("request_count")/w)
	set("output_token_throughput", "tokens/sec", avg("total_osl")/w)
	set("total_token_throughput", "tokens/sec", (avg("total_isl")+avg("total_osl"))/w)
	set("input_token_throughput", "tokens/sec", avg("total_isl")/w)
	out := map[string]any{"schema_version": "1.0"}
	for k, v := range recs {
		out[k] = v
	}
	for _, k := range []string{"input_config", "was_cancelled", "error_summary", "start_time", "end_time"} {
		out[k] = top[k]
	}
	var ic map[string]any
	dec = json.NewDecoder(bytes.NewReader(top["input_config"]))
	dec.UseNumber()
	if err := dec.Decode(&ic); err != nil {
		tb.Fatal(err)
	}
	lg := ic["loadgen"].(map[string]any)
	lg["benchmark_duration"] = json.Number("9.0")
	lg["benchmark_grace_period"] = json.Number("30.0")
	delete(lg, "request_count")
	out["input_config"] = ic
	b, err := json.MarshalIndent(out, "", "  ")
	if err != nil {
		tb.Fatal(err)
	}
	files[1].Data = b
	return files
}
