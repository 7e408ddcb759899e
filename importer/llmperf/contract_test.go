package llmperf_test

import (
	"encoding/json"
	"testing"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/importer/internal/importtest"
	"github.com/benchseal/benchseal/internal/peertest"
	"github.com/benchseal/benchseal/schema"
)

// TestContract checks the importer against the contract of every peer
// tool (peertest.Run) on its real fixture.
func TestContract(t *testing.T) {
	peertest.Run(t, peertest.Case{
		Peer:        schema.LLMPerf,
		FailedFirst: failedFirst,
		Canonical:   map[string]string{"counts.ok": peertest.Same, "request_throughput": peertest.Restated, "output_token_throughput": peertest.Restated},
		Provenance:  map[string]string{schema.FieldSent: schema.FieldAbsent, schema.FieldChunks: schema.FieldAbsent, schema.FieldFirstChunk: schema.FieldMeasured, schema.FieldLastChunk: schema.FieldDerived, schema.FieldOutputTokens: schema.FieldDerived},
		Windows:     1,
		Imports: map[string]string{
			schema.ClaimsFile:   "efa02f3467352ff185a223ad52615b611e437bf3d9c07f8957b92b694cd9796e",
			schema.ManifestFile: "72fb7d1f8d89a63888b0295d21591ff48396068763c6a6f4b90e710bb7ff3062",
			schema.RecordsFile:  "72e219f64967bfb40a9e5c901d5e76c61d9954114ace6b61c7abec6f2a0011a5",
		},
	})
}

// failedFirst is the real fixture edited so that the first record the
// import writes is a failed request without chunks (peertest.Case).
func failedFirst(tb testing.TB) ([]ingest.File, []string) {
	// Request 0 fails as LLMPerf stores a failure (error code and
	// message, zero latencies and output); the summary is left out,
	// so its concurrency is stated.
	f := importtest.Load(tb, "llmperf", "groq_70b_individual_responses.json")[0]
	var fx []map[string]any
	importtest.DecodeNumbers(tb, f.Data, &fx)
	fx[0] = map[string]any{"error_code": json.Number("500"), "error_msg": "Internal Server Error", "inter_token_latency_s": json.Number("0"),
		"ttft_s": json.Number("0"), "end_to_end_latency_s": json.Number("0"), "request_output_throughput_token_per_s": json.Number("0"),
		"number_total_tokens": json.Number("550"), "number_output_tokens": json.Number("0"), "number_input_tokens": json.Number("550")}
	f.Data = importtest.MustJSON(tb, fx)
	return []ingest.File{f}, []string{`load.points=[{"name":"llmperf","concurrency":5,"requests":150}]`, "model.name=llama2-70b-4096"}
}
