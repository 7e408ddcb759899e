package importer

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/benchseal/benchseal/importer/aiperf"
	"github.com/benchseal/benchseal/importer/genaiperf"
	"github.com/benchseal/benchseal/importer/guidellm"
	"github.com/benchseal/benchseal/importer/inferenceperf"
	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/importer/internal/serve"
	"github.com/benchseal/benchseal/importer/llmperf"
	"github.com/benchseal/benchseal/importer/mlperf"
	"github.com/benchseal/benchseal/importer/sglang"
	"github.com/benchseal/benchseal/importer/vllm"
)

// sniffBytes is how much of a file LooksLike reads: the fields that tell
// the formats apart are in the first object of every real file, so the
// check costs the same on a 1 GiB file as on a small one.
const sniffBytes = 64 << 10

// Benchseal is the name LooksLike gives benchseal's own run files.
const Benchseal = "benchseal"

// sniff is what the detection rules look at: the start of a file and the
// field names of its first JSON value (of its first element when the value
// is a list), a nested field as "outer.inner".
type sniff struct {
	head   []byte
	fields map[string]string // name -> the value when it is a string, else ""
}

func (s *sniff) has(names ...string) bool {
	for _, n := range names {
		if _, ok := s.fields[n]; ok {
			return true
		}
	}
	return false
}

// formatRule says what one tool's files look like. Each rule is stated
// here once; every importer is checked against all of them (guarded).
type formatRule struct {
	tool  string // the benchseal import that takes the file, or Benchseal
	title string // what the file is, for the message
	match func(*sniff) bool
}

// formatRules are facts of each tool's writers, read from the real files
// under testdata/fixtures (testdata/README.md names their sources).
var formatRules = []formatRule{
	// AIPerf: every profile_export.jsonl record has metadata with the
	// request id; the summary JSON has aiperf_version, or records keyed by
	// metric tag; the CSV lists percentiles from p1 up; the GPU telemetry
	// export's lines name their dcgm_url and telemetry_data.
	{aiperf.Tool, "AIPerf output", func(s *sniff) bool {
		return s.has("metadata.x_request_id", "metadata.credit_phase", "metadata.benchmark_phase", "aiperf_version", "records.request_latency", "records.time_to_first_token", "records.error_request_count") ||
			s.has("dcgm_url") && s.has("telemetry_data") ||
			bytes.HasPrefix(s.head, []byte("Metric,avg,min,max,p1,"))
	}},
	// GenAI-Perf: profile_export.json holds experiments; its summary holds
	// the metric blocks at the top with no AIPerf field.
	{genaiperf.Tool, "GenAI-Perf output", func(s *sniff) bool {
		return s.has("experiments") || s.has("time_to_first_token", "request_latency") && !s.has("aiperf_version", "schema_version", "benchmark_id")
	}},
	{vllm.Tool, "vLLM benchmark_serving output", func(s *sniff) bool { return serve.Shows(s.object(), serve.ToolVLLM) }},
	{sglang.Tool, "SGLang bench_serving output", func(s *sniff) bool { return serve.Shows(s.object(), serve.ToolSGLang) }},
	// GuideLLM reports hold a benchmarks list (and, from 0.4, metadata
	// with guidellm_version).
	{guidellm.Tool, "a GuideLLM report", func(s *sniff) bool { return s.has("benchmarks", "metadata.guidellm_version") }},
	// LLMPerf: the individual responses are a list of objects with ttft_s
	// and end_to_end_latency_s; the summary holds results_* fields.
	{llmperf.Tool, "LLMPerf output", func(s *sniff) bool {
		return s.has("ttft_s", "end_to_end_latency_s") || s.hasPrefix("results_")
	}},
	// inference-perf: per-request records with start_time, end_time and
	// info; summaries with load_summary.
	{inferenceperf.Tool, "inference-perf output", func(s *sniff) bool {
		return s.has("load_summary") || s.has("start_time") && s.has("end_time") && s.has("info.request_metrics", "info.response_metrics")
	}},
	// MLPerf LoadGen: the summary's banner, the detail log's line prefix.
	{mlperf.Tool, "an MLPerf LoadGen log", func(s *sniff) bool {
		return bytes.Contains(s.head, []byte("MLPerf Results Summary")) || bytes.HasPrefix(s.head, []byte(":::MLLOG"))
	}},
	// benchseal's own manifest names its schema; a record has the point
	// and the send time in ns.
	{Benchseal, "a benchseal run file", func(s *sniff) bool {
		return strings.HasPrefix(s.fields["schema"], "benchseal/") || s.has("sent_ns") && s.has("point")
	}},
}

func (s *sniff) hasPrefix(p string) bool {
	for k := range s.fields {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// object returns the top-level fields as a serve.Object (values dropped:
// the vLLM and SGLang rules look at names only).
func (s *sniff) object() serve.Object {
	o := serve.Object{}
	for k := range s.fields {
		if !strings.Contains(k, ".") {
			o[k] = nil
		}
	}
	return o
}

// newSniff reads the start of data: the field names of its first JSON
// value to depth two (a list's elements stand for the list).
func newSniff(data []byte) *sniff {
	head := data[:min(len(data), sniffBytes)]
	s := &sniff{head: head, fields: map[string]string{}}
	type frame struct {
		object, wantKey bool
		key             string
	}
	var stack []frame
	// name is the dotted path of the objects open, with k for the top one.
	name := func(k string) string {
		var names []string
		for _, f := range stack[:len(stack)-1] {
			if f.object {
				names = append(names, f.key)
			}
		}
		return strings.Join(append(names, k), ".")
	}
	d := json.NewDecoder(bytes.NewReader(head))
	for {
		tok, err := d.Token()
		if err != nil {
			return s // the end of the prefix, or not JSON
		}
		if t, ok := tok.(json.Delim); ok && (t == '{' || t == '[') {
			stack = append(stack, frame{object: t == '{', wantKey: true})
			continue
		}
		if len(stack) == 0 {
			return s // a number or string alone: no fields
		}
		if _, ok := tok.(json.Delim); ok {
			if stack = stack[:len(stack)-1]; len(stack) == 0 {
				return s // the first value is read
			}
		} else if top := &stack[len(stack)-1]; top.object && top.wantKey {
			top.key, top.wantKey = tok.(string), false
			if n := name(top.key); strings.Count(n, ".") < 2 {
				s.fields[n] = ""
			}
			continue
		} else if v, ok := tok.(string); ok && top.object {
			if n := name(top.key); strings.Count(n, ".") < 2 {
				s.fields[n] = v
			}
		}
		if top := &stack[len(stack)-1]; top.object {
			top.wantKey = true
		}
	}
}

// LooksLike returns the tool whose files data looks like (a benchseal
// import name, or Benchseal) and what the file is, or "" when no rule
// matches; when data looks like tool among others, it returns tool.
func LooksLike(tool string, data []byte) (string, string) {
	s := newSniff(data)
	var first formatRule
	for _, r := range formatRules {
		if !r.match(s) {
			continue
		}
		if r.tool == tool {
			return tool, r.title
		}
		if first.tool == "" {
			first = r
		}
	}
	return first.tool, first.title
}

// checkTool refuses files that look like another tool's and not like
// tool's, with one error for the first such file in the order given.
func checkTool(tool string, files []ingest.File) error {
	for _, f := range files {
		other, title := LooksLike(tool, f.Data)
		if other == "" || other == tool {
			continue
		}
		use := "use `benchseal import " + other + "`"
		if other == Benchseal {
			use = "a benchseal run directory needs no import: use the directory itself (`benchseal replay RUNDIR`)"
		}
		return ingest.Errorf(f.Name, "this looks like %s, which `benchseal import %s` does not read: %s", title, tool, use)
	}
	return nil
}
