package aiperf_test

import (
	"encoding/json"
	"strconv"
	"strings"
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
		Peer:        schema.AIPerf,
		FailedFirst: failedFirst,
		Canonical:   map[string]string{"counts.ok": peertest.Same, "request_throughput": peertest.Same, "output_token_throughput": peertest.Same},
		Provenance:  map[string]string{schema.FieldSent: schema.FieldMeasured, schema.FieldFirstChunk: schema.FieldMeasured, schema.FieldOutputTokens: schema.FieldMeasured},
		Windows:     0,
		Imports: map[string]string{
			schema.ClaimsFile:   "75f7ba9476194c5f1aa44f57cdaf9d7536e6afce7eac328a7da25efe681407d9",
			schema.ManifestFile: "54ac67635ff05ecd013ff6be6e8a11f2f79a87e286d5a331e41f1609f0636ae4",
			schema.RecordsFile:  "26db2bc8f4c537320fc5d3f5604a0cb6bff846c214dc2283bc3ec784cb872470",
		},
	})
}

// failedFirst is the real fixture edited so that the first record the
// import writes is a failed request without chunks (peertest.Case).
func failedFirst(tb testing.TB) ([]ingest.File, []string) {
	// The fixture's first line is a cancelled request (code 499, no
	// response); moved before every other start it becomes record 0.
	// The summary is left out: its window starts at the first start.
	f := importtest.Load(tb, "aiperf", "run1_profile_export.jsonl")[0]
	lines := strings.Split(strings.TrimSuffix(string(f.Data), "\n"), "\n")
	first := ""
	for _, l := range lines {
		var r struct {
			Metadata struct {
				Start json.Number `json:"timestamp_ns"`
			} `json:"metadata"`
		}
		importtest.DecodeNumbers(tb, []byte(l), &r)
		if first == "" || len(r.Metadata.Start) < len(first) || (len(r.Metadata.Start) == len(first) && string(r.Metadata.Start) < first) {
			first = string(r.Metadata.Start)
		}
	}
	v, _ := strconv.ParseInt(first, 10, 64)
	old := `"timestamp_ns":` + extractNumber(tb, lines[0], `"timestamp_ns":`)
	lines[0] = strings.Replace(lines[0], old, `"timestamp_ns":`+strconv.FormatInt(v-1000, 10), 1)
	f.Data = []byte(strings.Join(lines, "\n") + "\n")
	return []ingest.File{f}, []string{"model.name=openai/gpt-oss-20b"}
}

// extractNumber returns the number that follows key in line.
func extractNumber(tb testing.TB, line, key string) string {
	tb.Helper()
	i := strings.Index(line, key)
	if i < 0 {
		tb.Fatalf("no %s in %.80s", key, line)
	}
	s := line[i+len(key):]
	n := strings.IndexFunc(s, func(r rune) bool { return r != '-' && (r < '0' || r > '9') })
	return s[:n]
}
