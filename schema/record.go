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
	Shard *int64 `json:"shard,omitempty"`
	// Session and Turn name, in a run of multi-turn sessions (manifest
	// workload.sessions), the request's session (0-based, per point ×
	// repeat × phase, in the order the sessions started) and its turn in
	// it (0-based): turn t was sent after turn t−1 of its session ended,
	// with that turn's history. Both absent otherwise.
	Session     *int64 `json:"session,omitempty"`
	Turn        *int64 `json:"turn,omitempty"`
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
	// Retries counts how often capture sent the request again on a fresh
	// connection because a reused keep-alive connection closed before any
	// byte of an answer arrived (so the server never saw it); SentNS is
	// the last send's. 0 (absent) when it was sent once.
	Retries int64 `json:"retries,omitempty"`
	// Server holds what the engine itself reported about the request
	// beyond usage: cached prompt tokens and its own timers. Nil when it
	// reported none of them.
	Server *ServerReport `json:"server,omitempty"`
	// Orig keeps, for imported runs, the per-request values exactly as the
	// original tool stored them, under that tool's own field names and
	// units (a JSON object). Peer-tool definitions in replay read it so
	// that a tool's published numbers can be reproduced to the last bit.
	Orig json.RawMessage `json:"orig,omitempty"`
}

// ServerReport is the engine's own account of one request, copied from
// its answer: nil fields were not reported. Counts are tokens; times are
// the engine's timers converted from its milliseconds to nanoseconds
// (rounded to the nearest), on the server's clock, never the client's.
type ServerReport struct {
	// CachedTokens is usage.prompt_tokens_details.cached_tokens: prompt
	// tokens served from the engine's prefix cache (vLLM, SGLang,
	// llama.cpp).
	CachedTokens *int64 `json:"cached_tokens,omitempty"`
	// PromptN, CacheN and PredictedN are llama.cpp's timings.prompt_n
	// (prompt tokens computed), timings.cache_n (prompt tokens reused from
	// the slot's cache) and timings.predicted_n (tokens generated).
	PromptN    *int64 `json:"prompt_n,omitempty"`
	CacheN     *int64 `json:"cache_n,omitempty"`
	PredictedN *int64 `json:"predicted_n,omitempty"`
	// PromptNS and PredictedNS are llama.cpp's timings.prompt_ms (time to
	// compute the prompt) and timings.predicted_ms (time to generate the
	// tokens), in nanoseconds.
	PromptNS    *int64 `json:"prompt_ns,omitempty"`
	PredictedNS *int64 `json:"predicted_ns,omitempty"`
}

// Cached returns the prompt tokens the engine reports as served from its
// cache: usage's cached_tokens, else llama.cpp's cache_n; ok is false
// when it reported neither.
func (s *ServerReport) Cached() (n int64, ok bool) {
	switch {
	case s == nil:
		return 0, false
	case s.CachedTokens != nil:
		return *s.CachedTokens, true
	case s.CacheN != nil:
		return *s.CacheN, true
	}
	return 0, false
}

// serverReportFields are ServerReport's JSON names in field order, and
// serverReportField the pointer each names.
var serverReportFields = [...]string{"cached_tokens", "prompt_n", "cache_n", "predicted_n", "prompt_ns", "predicted_ns"}

func serverReportField(s *ServerReport, i int) **int64 {
	return [...]**int64{&s.CachedTokens, &s.PromptN, &s.CacheN, &s.PredictedN, &s.PromptNS, &s.PredictedNS}[i]
}
