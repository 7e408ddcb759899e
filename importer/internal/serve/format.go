package serve

import (
	"slices"
	"sort"
	"strings"
)

// The two bench_serving formats share most of their fields (SGLang's
// bench_serving began as a copy of vLLM's benchmark_serving.py), so a file
// of one parses as the other and its figures would be recomputed under the
// wrong tool's definitions. These fields tell them apart: each is written
// by one tool and never by the other (vLLM's benchmark_serving.py and
// vllm/benchmarks/serve.py save date, model_id and tokenizer_id in every
// result and name end-to-end latency "e2el"; SGLang's python/sglang/
// bench_serving.py writes total_output_tokens_retokenized, names it
// "e2e_latency" and adds server_info). Fields both write
// (max_concurrency, max_output_tokens_per_s, the per-request lists) decide
// nothing.
var formatMarkers = map[string]struct {
	keys     []string
	suffixes []string
}{
	ToolVLLM:   {keys: []string{"date", "model_id", "tokenizer_id", "best_of", "use_beam_search", "endpoint_type"}, suffixes: []string{"_e2el_ms"}},
	ToolSGLang: {keys: []string{"total_output_tokens_retokenized", "server_info"}, suffixes: []string{"_e2e_latency_ms"}},
}

// Tool names of the two formats, as benchseal import names them.
const (
	ToolVLLM   = "vllm"
	ToolSGLang = "sglang"
)

var (
	formatTitles = map[string]string{ToolVLLM: "vLLM benchmark_serving output", ToolSGLang: "SGLang bench_serving output"}
	toolTitles   = map[string]string{ToolVLLM: "vLLM", ToolSGLang: "SGLang"}
)

// markers returns the fields of o that only tool writes: its own field
// names in formatMarkers order, then the fields with its suffixes, sorted.
func (o Object) markers(tool string) []string {
	m := formatMarkers[tool]
	var out, suffixed []string
	for _, k := range m.keys {
		if _, ok := o[k]; ok {
			out = append(out, k)
		}
	}
	for k := range o {
		if slices.ContainsFunc(m.suffixes, func(x string) bool { return strings.HasSuffix(k, x) }) {
			suffixed = append(suffixed, k)
		}
	}
	sort.Strings(suffixed)
	return append(out, suffixed...)
}

// Shows reports whether o holds a field only tool writes.
func Shows(o Object, tool string) bool { return len(o.markers(tool)) > 0 }

// OtherFormat checks that o, read as a result of tool (ToolVLLM or
// ToolSGLang), is not the other tool's: it returns a message naming the
// other format, the fields that show it and the import to use, when o
// holds fields only the other tool writes and none only tool writes; ""
// otherwise (a result with markers of both is left to tool: no real file
// of either has them).
func OtherFormat(o Object, tool string) string {
	other := ToolSGLang
	if tool == ToolSGLang {
		other = ToolVLLM
	}
	theirs := o.markers(other)
	if len(theirs) == 0 || len(o.markers(tool)) > 0 {
		return ""
	}
	if len(theirs) > 3 {
		theirs = append(theirs[:3], "…")
	}
	return "this looks like " + formatTitles[other] + " (it has " + strings.Join(theirs, ", ") + ", which " + toolTitles[tool] + " never writes): use `benchseal import " + other + "`"
}
