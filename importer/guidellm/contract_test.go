package guidellm_test

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
		Peer:        schema.GuideLLM,
		FailedFirst: failedFirst,
		Canonical:   map[string]string{"counts.ok": peertest.Same, "request_throughput": peertest.Other, "output_token_throughput": peertest.Other, "total_token_throughput": peertest.Other},
		Provenance:  map[string]string{schema.FieldSent: schema.FieldMeasured, schema.FieldChunks: schema.FieldAbsent, schema.FieldFirstChunk: schema.FieldMeasured, schema.FieldLastChunk: schema.FieldMeasured},
		Windows:     0,
		Imports: map[string]string{
			schema.ClaimsFile:   "4376c87c4d138d03f3d4220aca54db7c4296b8b182d5e63f77d449f37e3f61c1",
			schema.ManifestFile: "8d7d4b83275c240cf76f87168c6d46cf943d3e7ced57177d5123477fa6df2cf3",
			schema.RecordsFile:  "b2ade4111f8746248576e074c77af1d3f3d9a0d3f8a0016143eca56c9ee8080f",
		},
	})
}

// failedFirst is the real fixture edited so that the first record the
// import writes is a failed request without chunks (peertest.Case).
func failedFirst(tb testing.TB) ([]ingest.File, []string) {
	// The earliest request is moved to errored (with GuideLLM's error
	// text); the benchmark's metrics (claims) are dropped.
	f := importtest.Load(tb, "guidellm", "qwen3_4b_concurrent_benchmarks.json")[0]
	var fx map[string]any
	importtest.DecodeNumbers(tb, f.Data, &fx)
	b := fx["benchmarks"].([]any)[0].(map[string]any)
	reqs := b["requests"].(map[string]any)
	ok := reqs["successful"].([]any)
	start := func(r any) json.Number {
		return r.(map[string]any)["info"].(map[string]any)["timings"].(map[string]any)["request_start"].(json.Number)
	}
	sort.Slice(ok, func(i, j int) bool { return start(ok[i]) < start(ok[j]) })
	e := ok[0].(map[string]any)
	e["info"].(map[string]any)["error"] = "HTTP 500"
	e["info"].(map[string]any)["status"] = "errored"
	e["output_tokens"] = json.Number("0")
	tm := e["info"].(map[string]any)["timings"].(map[string]any)
	for _, k := range []string{"first_token_iteration", "last_token_iteration", "first_request_iteration", "last_request_iteration"} {
		delete(tm, k)
	}
	reqs["successful"], reqs["errored"] = ok[1:], []any{e}
	delete(b, "metrics")
	f.Data = importtest.MustJSON(tb, fx)
	return []ingest.File{f}, nil
}
