package inferenceperf_test

import (
	"encoding/json"
	"sort"
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
		Peer:        schema.InferencePerf,
		FailedFirst: failedFirst,
		Canonical:   map[string]string{"counts.ok": peertest.Same, "request_throughput": peertest.Same, "output_token_throughput": peertest.Same, "total_token_throughput": peertest.Same},
		Provenance:  map[string]string{schema.FieldSent: schema.FieldMeasured, schema.FieldChunks: schema.FieldMeasured, schema.FieldOutputTokens: schema.FieldMeasured},
		Windows:     0,
		Imports: map[string]string{
			schema.ClaimsFile:   "9d4c816f569cc04c014fe742a336f7d2a1824a860dce7d604dc278aa7bbbb760",
			schema.ManifestFile: "afa4a1e429c339fce5e62bf584495ee797ad45dd1c4966da51aeb7e125a27876",
			schema.RecordsFile:  "2ad8c8b599d2da1f0c5e0c8cf0493346d4ea3ee7249daaef46b3119df35d979c",
		},
	})
}

// failedFirst is the real fixture edited so that the first record the
// import writes is a failed request without chunks (peertest.Case).
func failedFirst(tb testing.TB) ([]ingest.File, []string) {
	// The earliest request fails as inference-perf stores a failure
	// (an ErrorResponseInfo, no response metrics); the summaries
	// (claims) are left out.
	f := importtest.Load(tb, "inference-perf", "per_request_lifecycle_metrics.json")[0]
	var fx []map[string]any
	importtest.DecodeNumbers(tb, f.Data, &fx)
	sort.Slice(fx, func(i, j int) bool { return fx[i]["start_time"].(json.Number) < fx[j]["start_time"].(json.Number) })
	fx[0]["error"] = map[string]any{"error_type": "ClientResponseError", "error_msg": "503, message='Service Unavailable'"}
	fx[0]["info"].(map[string]any)["response_metrics"] = nil
	f.Data = importtest.MustJSON(tb, fx)
	return []ingest.File{f}, []string{"model.name=HuggingFaceTB/SmolLM2-135M-Instruct"}
}
