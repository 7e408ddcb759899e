package vllm_test

import (
	"encoding/json"
	"strconv"
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
		Peer:        schema.VLLM,
		FailedFirst: failedFirst,
		Canonical:   map[string]string{"counts.ok": peertest.Same, "request_throughput": peertest.Same, "output_token_throughput": peertest.Same},
		Provenance:  map[string]string{schema.FieldSent: schema.FieldAbsent, schema.FieldChunks: schema.FieldDerived, schema.FieldFirstChunk: schema.FieldMeasured},
		Windows:     1,
		Imports: map[string]string{
			schema.ClaimsFile:   "e9fe78ed040e3843caf8c19c08557015eeb8e9394ca42ccea9efea3c072e73f2",
			schema.ManifestFile: "838447e616fd664f6f0129b03d34bf573744668812e2c9f9563619fb9f9a2072",
			schema.RecordsFile:  "53ac8747a56785aa71ba286e2a4e406cb37e45c80579e9535bd1a434f2887dda",
		},
	})
}

// failedFirst is the real fixture edited so that the first record the
// import writes is a failed request without chunks (peertest.Case).
func failedFirst(tb testing.TB) ([]ingest.File, []string) {
	// Request 0 fails as vLLM stores a failure (success false: empty
	// text, no ttft or itls, an error); the summary keeps what stays
	// true (duration) and the two figures recomputed for 9 of 10.
	f := importtest.Load(tb, "vllm", "lambdalabs_llama3_8b_h100_prompt10.json")[0]
	var fx map[string]any
	importtest.DecodeNumbers(tb, f.Data, &fx)
	out := map[string]any{}
	for _, k := range []string{"date", "backend", "model_id", "tokenizer_id", "num_prompts", "request_rate", "duration", "input_lens", "output_lens", "ttfts", "itls", "generated_texts", "errors"} {
		out[k] = fx[k]
	}
	out["output_lens"].([]any)[0] = json.Number("0")
	out["ttfts"].([]any)[0] = json.Number("0.0")
	out["itls"].([]any)[0] = []any{}
	out["generated_texts"].([]any)[0] = ""
	out["errors"].([]any)[0] = "Server disconnected"
	dur, _ := fx["duration"].(json.Number).Float64()
	out["completed"] = json.Number("9")
	out["request_throughput"] = json.Number(strconv.FormatFloat(9/dur, 'g', -1, 64))
	f.Data = importtest.MustJSON(tb, out)
	return []ingest.File{f}, nil
}
