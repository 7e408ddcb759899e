package aiperf

import (
	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/schema"
)

// declareProvenance states which record fields AIPerf measured: with
// per-record metrics (lines), the send times, token counts and first
// chunk; the chunk times are measured in the raw export (usedRaw) and
// rebuilt from inter-chunk latencies otherwise. The raw export alone
// stores no token counts.
func declareProvenance(m *schema.Manifest, lines, usedRaw bool) {
	ingest.Measured(m, schema.FieldSent, schema.FieldFirstChunk)
	if usedRaw {
		ingest.Measured(m, schema.FieldChunks, schema.FieldLastChunk)
	} else {
		ingest.Derived(m, schema.FieldChunks, "ttft + cumulative sum of inter_chunk_latency")
		ingest.Derived(m, schema.FieldLastChunk, "ttft + Σ inter_chunk_latency")
	}
	ingest.Derived(m, schema.FieldEnd, "request_end_ns, else max_response_timestamp, else start + request_latency")
	if lines {
		ingest.Measured(m, schema.FieldInputTokens, schema.FieldOutputTokens)
	} else {
		ingest.Absent(m, schema.FieldInputTokens, "the raw export stores no token counts; 0")
		ingest.Absent(m, schema.FieldOutputTokens, "the raw export stores no token counts; the number of content responses")
	}
}
