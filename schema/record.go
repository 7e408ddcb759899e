package schema

import "encoding/json"

// Request phases.
const (
	PhaseWarmup  = "warmup"
	PhaseMeasure = "measure"
)

// Request statuses. Every request ends in exactly one.
const (
	StatusOK        = "ok"
	StatusError     = "error"
	StatusTimeout   = "timeout"
	StatusCancelled = "cancelled"
	StatusRejected  = "rejected"
)

// Record is one request of a run (one line of records.jsonl). Times are
// integer nanoseconds: ScheduledNS, SentNS and EndNS since the run epoch,
// ChunksNS since SentNS, all on one monotonic clock.
type Record struct {
	ID     string `json:"id"`
	Point  string `json:"point"`
	Repeat int    `json:"repeat"`
	Phase  string `json:"phase"`
	Item   *int64 `json:"item,omitempty"`
	// Shard is the shard that sent the request, in a shard run or a run
	// merged from shards (manifest.shard, manifest.shards); absent
	// otherwise.
	Shard       *int64 `json:"shard,omitempty"`
	ScheduledNS *int64 `json:"scheduled_ns,omitempty"`
	SentNS      int64  `json:"sent_ns"`
	EndNS       int64  `json:"end_ns"`
	// ChunksNS holds the arrival of each content-bearing chunk, in ns since
	// SentNS, non-decreasing.
	ChunksNS []int64 `json:"chunks_ns"`
	// ChunkTokens holds the tokens of each chunk (optional, same length as
	// ChunksNS, summing to OutputTokens).
	ChunkTokens  []int64 `json:"chunk_tokens,omitempty"`
	InputTokens  int64   `json:"input_tokens"`
	OutputTokens int64   `json:"output_tokens"`
	Status       string  `json:"status"`
	Error        string  `json:"error,omitempty"`
	// Orig keeps, for imported runs, the per-request values exactly as the
	// original tool stored them, under that tool's own field names and
	// units (a JSON object). Peer-tool definitions in replay read it so
	// that a tool's published numbers can be reproduced to the last bit.
	Orig json.RawMessage `json:"orig,omitempty"`
}
