package sglang_test

import (
	"bufio"
	"bytes"
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
		Peer:        schema.SGLang,
		FailedFirst: failedFirst,
		Canonical:   map[string]string{"counts.ok": peertest.Same, "request_throughput": peertest.Same, "output_token_throughput": peertest.Same, "total_token_throughput": peertest.Same},
		Provenance:  map[string]string{schema.FieldSent: schema.FieldAbsent, schema.FieldChunks: schema.FieldDerived, schema.FieldFirstChunk: schema.FieldMeasured, schema.FieldOutputTokens: schema.FieldMeasured},
		Windows:     2,
		Imports: map[string]string{
			schema.ClaimsFile:   "18fdd854c455f5c0d413ca923ad9ea3898026a9b9dc37a24a8cb48822038a550",
			schema.ManifestFile: "c5268e99ad9b7fba5ce58524c4e71b00a4e1f39a6201a05fabdcd8657865f79a",
			schema.RecordsFile:  "40993e006a9fd0ced3cfb554849f6e5a61a41b79bbeb32d1d8cb019cc10dc47d",
		},
	})
}

// failedFirst is the real fixture edited so that the first record the
// import writes is a failed request without chunks (peertest.Case).
func failedFirst(tb testing.TB) ([]ingest.File, []string) {
	// Each line's failed request (the last) is moved to the front of
	// its per-request lists: its summary does not depend on order.
	f := importtest.Load(tb, "sglang", "sglang_0101_12_256_64.jsonl")[0]
	var out bytes.Buffer
	sc := bufio.NewScanner(bytes.NewReader(f.Data))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var line map[string]any
		importtest.DecodeNumbers(tb, sc.Bytes(), &line)
		errs := line["errors"].([]any)
		bad := -1
		for i, e := range errs {
			if e != "" {
				bad = i
			}
		}
		if bad < 0 {
			tb.Fatal("sglang fixture line without a failed request")
		}
		for _, k := range []string{"input_lens", "output_lens", "ttfts", "itls", "generated_texts", "errors"} {
			l := line[k].([]any)
			v := l[bad]
			l = append(l[:bad:bad], l[bad+1:]...)
			line[k] = append([]any{v}, l...)
		}
		b, err := json.Marshal(line)
		if err != nil {
			tb.Fatal(err)
		}
		out.Write(append(b, '\n'))
	}
	f.Data = out.Bytes()
	return []ingest.File{f}, nil
}
