package aiperf

import (
	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/schema"
)

// manifest returns the manifest of an import of exp (or, without it, raw)
// and summary sum, whose records span epoch to last (Unix ns), and its
// load point, unnamed.
func manifest(exp, raw *lineIndex, sum *Summary, epoch, last int64, usedRaw, nonStreaming bool) (schema.Manifest, schema.Point) {
	version := ""
	if sum != nil {
		version = sum.AIPerfVersion
	}
	m := ingest.NewManifest(Tool, version, epoch, last)
	if exp != nil {
		ingest.Derive(&m, "sent_ns: metadata request start (request_start_ns or timestamp_ns) minus the earliest start")
		if usedRaw {
			ingest.Derive(&m, "chunks_ns: responses[].perf_ns − start_perf_ns from %s (absolute per-chunk times)", raw.name)
		} else {
			ingest.Derive(&m, "chunks_ns: rebuilt as time_to_first_token (ttft before Oct 2025) + cumulative sum of inter_chunk_latency (ms, exact to the ns); non-streaming records: one chunk at request_latency")
		}
		ingest.Derive(&m, "end_ns: request_end_ns, else max_response_timestamp, else start + request_latency; failed requests without an end time end at their start")
		ingest.Derive(&m, "output_tokens: output_sequence_length (output + reasoning tokens, AIPerf's count); input_tokens: input_sequence_length")
	} else {
		ingest.Derive(&m, "output_tokens: number of content responses (no token counts in the raw export)")
	}
	declareProvenance(&m, exp != nil, usedRaw)
	if nonStreaming {
		ingest.Absent(&m, schema.FieldFirstChunk, "non-streaming: no first-token time; chunks_ns holds one element at request_latency")
		ingest.Derived(&m, schema.FieldChunks, "non-streaming: one element at request_latency")
	}
	m.Client.TokenCounts = "tool-reported"
	m.Decoding.Streaming = true
	m.Load.Mode = schema.ModeConcurrency
	var pt schema.Point
	if sum != nil {
		fillManifest(&m, sum, &pt)
	}
	return m, pt
}

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
