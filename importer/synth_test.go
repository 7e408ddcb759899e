package importer

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"testing"

	"github.com/benchseal/benchseal/importer/genaiperf"
	"github.com/benchseal/benchseal/importer/guidellm"
	"github.com/benchseal/benchseal/importer/inferenceperf"
	"github.com/benchseal/benchseal/importer/internal/importtest"
)

// shift is a deterministic pseudo-random offset of request i below mod,
// so synthetic requests are stored out of order of start (the importers
// must sort them).
func shift(i, mod int) int { return (i * 7919 * 104729) % mod }

// decodeNumbers decodes b keeping numbers exact.
func decodeNumbers(tb testing.TB, b []byte, v any) {
	tb.Helper()
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		tb.Fatal(err)
	}
}

// syntheticGenAIPerf returns a profile_export.json of n requests spread
// over points experiments at concurrency 4, 8, … (two with the same
// value when points > 2): the fixture's requests over and over, each
// moved by its own offset of up to a second, every 101st without a
// response, in an order that is not the order of start.
func syntheticGenAIPerf(tb testing.TB, n, points int) []byte {
	tb.Helper()
	var fx map[string]any
	decodeNumbers(tb, importtest.Load(tb, genaiperf.Tool, "profile_export.json")[0].Data, &fx)
	src := fx["experiments"].([]any)[0].(map[string]any)["requests"].([]any)
	exps := make([]any, points)
	reqs := make([][]any, points)
	for i := 0; i < n; i++ {
		r := map[string]any{}
		for k, v := range src[i%len(src)].(map[string]any) {
			r[k] = v
		}
		d := int64(shift(i, 1e9))
		move := func(v any) json.Number {
			t, err := v.(json.Number).Int64()
			if err != nil {
				tb.Fatal(err)
			}
			return json.Number(strconv.FormatInt(t+d, 10))
		}
		r["timestamp"] = move(r["timestamp"])
		var ts []any
		for _, t := range r["response_timestamps"].([]any) {
			ts = append(ts, move(t))
		}
		if i%101 == 0 {
			ts, r["response_outputs"] = []any{}, []any{}
		}
		r["response_timestamps"] = ts
		reqs[i%points] = append(reqs[i%points], r)
	}
	for x := range exps {
		exps[x] = map[string]any{"experiment": map[string]any{"mode": "concurrency", "value": 4 * (1 + x%2)}, "requests": reqs[x]}
	}
	fx["experiments"] = exps
	b, err := json.MarshalIndent(fx, "", " ")
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// syntheticInferencePerf returns a per_request_lifecycle_metrics.json of
// n requests (inference-perf's v0.6+ layout, no stage summaries: one
// point): the fixture's requests over and over, each moved by its own
// offset (ms steps), in an order that is not the order of start.
func syntheticInferencePerf(tb testing.TB, n int) []byte {
	tb.Helper()
	var src []map[string]any
	decodeNumbers(tb, importtest.Load(tb, inferenceperf.Tool, "per_request_lifecycle_metrics.json")[0].Data, &src)
	out := make([]any, n)
	for i := range out {
		d := float64(shift(i, 100000)) / 1000
		move := func(v any) json.Number {
			f, err := v.(json.Number).Float64()
			if err != nil {
				tb.Fatal(err)
			}
			return json.Number(strconv.FormatFloat(f+d, 'f', 6, 64))
		}
		moveAll := func(v any) []any {
			var o []any
			for _, t := range v.([]any) {
				o = append(o, move(t))
			}
			return o
		}
		s := src[i%len(src)]
		info := map[string]any{}
		for k, v := range s["info"].(map[string]any) {
			info[k] = v
		}
		if src, ok := info["response_metrics"].(map[string]any); ok {
			rm := map[string]any{}
			for k, v := range src {
				rm[k] = v
			}
			rm["chunk_times"] = moveAll(rm["chunk_times"])
			rm["output_token_times"] = moveAll(rm["output_token_times"])
			info["response_metrics"] = rm
		}
		r := map[string]any{}
		for k, v := range s {
			r[k] = v
		}
		r["start_time"], r["end_time"] = move(s["start_time"]), move(s["end_time"])
		r["info"] = info
		out[i] = r
	}
	b, err := json.MarshalIndent(out, "", " ")
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

// syntheticGuideLLM returns a benchmarks.json of n requests over three
// benchmarks: the fixture's benchmark with its successful requests over
// and over, each moved by its own offset (up to 30 s, so some fall outside
// the measurement window), every 7th errored and every 11th incomplete.
// The groups are written successful first (the importer reads them
// sorted), and the requests are not in order of start.
func syntheticGuideLLM(tb testing.TB, n int) []byte {
	tb.Helper()
	var fx map[string]json.RawMessage
	decodeNumbers(tb, importtest.Load(tb, guidellm.Tool, "qwen3_4b_concurrent_benchmarks.json")[0].Data, &fx)
	var benches []map[string]json.RawMessage
	decodeNumbers(tb, fx["benchmarks"], &benches)
	var reqs struct {
		Successful []map[string]any `json:"successful"`
	}
	decodeNumbers(tb, benches[0]["requests"], &reqs)
	const points = 3
	groups := make([][3][]any, points) // successful, errored, incomplete
	for i := 0; i < n; i++ {
		src := reqs.Successful[i%len(reqs.Successful)]
		d := float64(shift(i, 30000)) / 1000
		r := map[string]any{}
		for k, v := range src {
			r[k] = v
		}
		info := map[string]any{}
		for k, v := range src["info"].(map[string]any) {
			info[k] = v
		}
		tm := map[string]any{}
		for k, v := range info["timings"].(map[string]any) {
			f, err := v.(json.Number).Float64()
			if err != nil {
				tb.Fatal(err)
			}
			if k == "request_iterations" || k == "token_iterations" {
				tm[k] = v
				continue
			}
			tm[k] = json.Number(strconv.FormatFloat(f+d, 'f', 7, 64))
		}
		info["timings"] = tm
		r["info"] = info
		r["request_id"] = "r-" + strconv.Itoa(i)
		g := 0
		switch {
		case i%7 == 3:
			g = 1
			info["error"] = "HTTP 500"
		case i%11 == 5:
			g = 2
			info["error"] = "cancelled"
		}
		groups[i%points][g] = append(groups[i%points][g], r)
	}
	// The fixture's args cap each benchmark at 4 requests.
	var args map[string]json.RawMessage
	decodeNumbers(tb, fx["args"], &args)
	delete(args, "max_requests")
	fx["args"], _ = json.Marshal(args)
	var out bytes.Buffer
	out.WriteString("{\n")
	for _, k := range []string{"metadata", "args"} {
		fmt.Fprintf(&out, "%q: %s,\n", k, fx[k])
	}
	out.WriteString(`"benchmarks": [`)
	for p := range points {
		if p > 0 {
			out.WriteString(",")
		}
		out.WriteString("\n{")
		for _, k := range slices.Sorted(maps.Keys(benches[0])) {
			if k != "requests" {
				fmt.Fprintf(&out, "%q: %s, ", k, benches[0][k])
			}
		}
		out.WriteString(`"requests": {`)
		for j, g := range []string{"successful", "errored", "incomplete"} {
			b, err := json.MarshalIndent(groups[p][j], "", " ")
			if err != nil {
				tb.Fatal(err)
			}
			if groups[p][j] == nil {
				b = []byte("[]")
			}
			fmt.Fprintf(&out, "%q: %s, ", g, b)
		}
		out.WriteString(`"total": null}}`)
	}
	out.WriteString("\n]}\n")
	return out.Bytes()
}
