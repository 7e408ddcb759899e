package genaiperf_test

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
		Peer:        schema.GenAIPerf,
		FailedFirst: failedFirst,
		Canonical:   map[string]string{"request_throughput": peertest.Same, "output_token_throughput": peertest.Null},
		Provenance:  map[string]string{schema.FieldSent: schema.FieldMeasured, schema.FieldChunks: schema.FieldMeasured, schema.FieldOutputTokens: schema.FieldAbsent},
		Windows:     0,
		Imports: map[string]string{
			schema.ClaimsFile:   "94c863f54cd2f7eaab28c40dabf51ef0d73bdf0c1dbdaf34f7a2155aaea21d8b",
			schema.ManifestFile: "9defcb3774c3978f9a28530809d0d0c1b461c513ab064259b0778d1fab010ae0",
			schema.RecordsFile:  "1dacea09d63a37049da461bbb48f0d2e0d2538ad3471b5dd4760947bc00693d8",
		},
	})
}

// failedFirst is the real fixture edited so that the first record the
// import writes is a failed request without chunks (peertest.Case).
func failedFirst(tb testing.TB) ([]ingest.File, []string) {
	// The earliest request gets no response; the summary (claims) is
	// left out.
	f := importtest.Load(tb, "genai-perf", "profile_export.json")[0]
	var fx map[string]any
	importtest.DecodeNumbers(tb, f.Data, &fx)
	reqs := fx["experiments"].([]any)[0].(map[string]any)["requests"].([]any)
	first := reqs[0].(map[string]any)
	for _, r := range reqs {
		if r.(map[string]any)["timestamp"].(json.Number) < first["timestamp"].(json.Number) {
			first = r.(map[string]any)
		}
	}
	first["response_timestamps"], first["response_outputs"] = []any{}, []any{}
	f.Data = importtest.MustJSON(tb, fx)
	return []ingest.File{f}, nil
}
