package capture

import "github.com/benchseal/benchseal/schema"

// Hard limits shared by plan parsing and the runner (plan.go).
const (
	// MaxRequestsPerPoint caps the requests of one load point, declared or
	// implied by rate × duration, and of a plan's warmup.
	MaxRequestsPerPoint = 10_000_000
	// MaxConcurrency caps a point's concurrency.
	MaxConcurrency = 100_000
	// MaxRate caps a point's rate.
	MaxRate = 1_000_000 // requests per second
	// MaxPoints caps a plan's points (schema's load limit).
	MaxPoints = schema.MaxPoints
	// MaxRepeats caps a plan's repeats (schema's load limit).
	MaxRepeats = schema.MaxRepeats
)

// MaxEventSize is the largest server-sent event (or line) the reader
// accepts; a longer one is an error, never an unbounded allocation.
const MaxEventSize = 8 << 20

// Limits of a ShareGPT file: conversations read, turns used of one
// (later ones are dropped: a turn carries all before it, so a workload
// line grows with the square of the turns) and the text of one
// conversation (so that a turn's workload line stays well under
// schema.MaxWorkloadLine).
const (
	// MaxConversations caps the conversations read.
	MaxConversations = 1 << 20
	// MaxConversationTurns caps the turns used of one conversation.
	MaxConversationTurns = 64
	// MaxConversationBytes caps the text of one conversation.
	MaxConversationBytes = 1 << 20
)

// Limits of a trace file (schema's).
const (
	// MaxTraceLength is schema.MaxTraceLength.
	MaxTraceLength = schema.MaxTraceLength
	// MaxTraceInputTokens is schema.MaxTraceInputTokens.
	MaxTraceInputTokens = schema.MaxTraceInputTokens
	// MaxTraceHashIDs is schema.MaxTraceHashIDs.
	MaxTraceHashIDs = schema.MaxTraceHashIDs
)

// MaxWorkloadItems bounds the items read from a prompt file.
const MaxWorkloadItems = 1 << 20

// MaxSyntheticLength bounds a drawn length, in tokens.
const MaxSyntheticLength = MaxTraceLength
