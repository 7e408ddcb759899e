package schema

import (
	"fmt"
	"math"
	"math/bits"

	"github.com/benchseal/benchseal/internal/digits"
)

// Load limits: the one place that bounds what a manifest or plan may
// declare, shared by validation (ValidateManifest, the JSON Schemas),
// verify, replay, compare and plan checks, so that no declared number
// can make any of them allocate or loop without bound or overflow int64.
// Every total of declared requests (points × repeats × requests, plus
// warmup) is below MaxPointRepeats × 2 × MaxDeclaredRequests < 2^58.
const (
	// MaxPoints caps load.points.
	MaxPoints = 10_000
	// MaxRepeats caps load.repeats.
	MaxRepeats = 1_000
	// MaxPointRepeats caps points × repeats (the point × repeat cells
	// every checker keeps a counter for).
	MaxPointRepeats = 100_000
	// MaxDeclaredRequests caps a declared request count (a point's
	// requests, load.warmup.requests).
	MaxDeclaredRequests = 1 << 40
	// MaxConcurrency caps a point's declared concurrency.
	MaxConcurrency = 1 << 30
	// MaxRate caps a point's declared rate (requests per second).
	MaxRate = 1e9
)

// loadLimitProblems returns the problems of a load that declares more
// than the limits above allow.
func loadLimitProblems(ps *problems, l *Load) {
	if len(l.Points) > MaxPoints {
		ps.add("load.points", "declares %d points, more than the limit of %d", len(l.Points), MaxPoints)
	}
	if l.Repeats > MaxRepeats {
		ps.add("load.repeats", "%d is more than the limit of %d", l.Repeats, MaxRepeats)
	}
	if hi, lo := bits.Mul64(uint64(len(l.Points)), uint64(max(l.Repeats, 1))); hi != 0 || lo > MaxPointRepeats {
		ps.add("load.repeats", "points × repeats = %d × %d is more than the limit of %d", len(l.Points), l.Repeats, MaxPointRepeats)
	}
	for i, p := range l.Points {
		f := fmt.Sprintf("load.points[%d]", i)
		if p.Requests > MaxDeclaredRequests {
			ps.add(f+".requests", "%d is more than the limit of %d", p.Requests, int64(MaxDeclaredRequests))
		}
		if p.Concurrency > MaxConcurrency {
			ps.add(f+".concurrency", "%d is more than the limit of %d", p.Concurrency, MaxConcurrency)
		}
		if p.Rate > MaxRate {
			ps.add(f+".rate", "%s is more than the limit of %s", digits.Shortest(p.Rate), digits.Shortest(float64(MaxRate)))
		}
	}
	if l.Warmup.Requests > MaxDeclaredRequests {
		ps.add("load.warmup.requests", "%d is more than the limit of %d", l.Warmup.Requests, int64(MaxDeclaredRequests))
	}
	if l.MaxOutstanding > MaxConcurrency {
		ps.add("load.max_outstanding", "%d is more than the limit of %d", l.MaxOutstanding, MaxConcurrency)
	}
}

// CheckLoadLimits returns an error wrapping ErrInvalid, naming the field,
// when l declares more than the load limits allow (see MaxPoints); callers
// that allocate per declared point × repeat (replay, compare, plan checks)
// call it before they do.
func CheckLoadLimits(l *Load, file string) error {
	ps := &problems{file: file}
	loadLimitProblems(ps, l)
	if len(ps.list) == 0 {
		return nil
	}
	return &ValidationError{Problems: ps.list}
}

// WithinLoadLimits reports whether l declares no more than the load
// limits allow.
func WithinLoadLimits(l *Load) bool { return CheckLoadLimits(l, "") == nil }

// IterationsPerOrigByte bounds a count a peer tool stores for one request
// that a replay under its definitions expands into that many events:
// GuideLLM's token_iterations, which its rate distributions spread over as
// evenly spaced token events (GuideLLM stores no per-iteration times). The
// count is bounded by the bytes of the request's kept values (record.orig):
// at most this many per byte, so a replay's work stays linear in the
// input's bytes. A real GuideLLM request's orig is about 2.3 kB, allowing
// some 150,000 iterations, above the longest outputs such runs generate.
const IterationsPerOrigByte = 64

// IterationCountProblem returns why n cannot be the iteration count of a
// request with outputTokens output tokens whose orig is origBytes bytes
// ("" when it can): not a whole non-negative number, more than
// outputTokens + 1, or more than IterationsPerOrigByte × origBytes. Each
// iteration yields at least one token, or the final one with none
// (testdata/fixtures/guidellm: 1024 iterations for 1024 output tokens):
// unlike the orig's bytes, which any padding field inflates, the
// output-token bound holds no matter how large the record is.
func IterationCountProblem(n, outputTokens float64, origBytes int) string {
	if !(n >= 0) || math.IsInf(n, 0) || n != math.Trunc(n) {
		return fmt.Sprintf("%s is not a whole non-negative count", digits.Shortest(n))
	}
	if n > outputTokens+1 { // false for an unbounded (+Inf) outputTokens
		return fmt.Sprintf("%s is more than the request's output tokens + 1 (%s): each iteration yields at least one token, or the last one none", digits.Places(n, 0), digits.Places(outputTokens+1, 0))
	}
	if limit := float64(IterationsPerOrigByte) * float64(origBytes); n > limit {
		return fmt.Sprintf("%s is more than the limit of %d per byte of the request's stored values (%d bytes: at most %s)", digits.Places(n, 0), IterationsPerOrigByte, origBytes, digits.Places(limit, 0))
	}
	return ""
}

// Size limits of the JSON documents of a run.
const (
	// MaxJSONDepth caps nesting in every JSON document CheckJSON accepts
	// (manifests, claims, OCI documents, Sigstore bundles).
	MaxJSONDepth = 64
	// MaxManifestFileSize caps a run's manifest.json as DecodeManifest
	// reads it (not an OCI manifest: artifact.MaxOCIManifestSize).
	MaxManifestFileSize = 16 << 20
	// MaxClaimsSize caps a run's claims.json as DecodeClaims reads it.
	MaxClaimsSize = 64 << 20
)

// Limits of a run directory's files (rundir.go).
const (
	// MaxRecordLineSize is the longest accepted records.jsonl line.
	MaxRecordLineSize = 64 << 20
	// MaxAttachmentSize is the largest attachment ReadAttachment reads.
	MaxAttachmentSize = 1 << 30
)

// Limits of a trace file, shared by the reader, the runner and validate.
const (
	// MaxTraceLength bounds one request's input or output length.
	MaxTraceLength = 1 << 20
	// MaxTraceInputTokens bounds the input lengths of the requests
	// replayed, summed: their synthetic prompts are held in memory.
	MaxTraceInputTokens = 1 << 26
	// MaxTraceHashIDs bounds the prefix blocks of one request.
	MaxTraceHashIDs = 1 << 16
	// MaxTraceRequests bounds the requests of a trace file.
	MaxTraceRequests = 1 << 20
	// MaxTraceMS bounds a trace time (about 285 years in ms), so every
	// time fits int64 nanoseconds.
	MaxTraceMS = 9e12
)

// ZstdMaxWindow is the largest zstd window benchseal accepts when reading.
const ZstdMaxWindow = 8 << 20

// Decompression-bomb guard of every zstd stream read: past
// MinRatioCheckSize bytes of output, the output may be at most
// MaxCompressionRatio times the compressed bytes read so far. Record
// streams compress 5 to 30 times; 1 GiB of newlines compresses about
// 1600 times.
const (
	// MaxCompressionRatio caps output bytes / compressed bytes read.
	MaxCompressionRatio = 1024
	// MinRatioCheckSize is the output size below which the ratio is not
	// checked.
	MinRatioCheckSize = 64 << 20
)

// Caps of validation's reporting and reading (validate.go).
const (
	// DefaultMaxProblems is the reporting cap ValidateRunDocuments uses when asked
	// for none.
	DefaultMaxProblems = 100
	// MaxUndecodedLines is how many undecodable record lines (blank lines,
	// broken JSON) validation reads past the reporting cap before it stops
	// reading: such a file is rejected either way, and the rest is not worth
	// the time (1 GiB of newlines compresses to under 1 MB).
	MaxUndecodedLines = 10000
)

// Limits of a workload's items as read for their token bounds
// (workloaditems.go).
const (
	// MaxTemplateTokens is how many tokens an engine may add to a prompt
	// beyond its own text: a chat template's role headers and default system
	// prompt, a beginning-of-sequence token. The longest common ones (a
	// Llama 3.1 default system header, a gpt-oss harmony preamble) are under
	// a hundred tokens; twice that and more is allowed.
	MaxTemplateTokens = 256
	// MaxWorkloadLine bounds one workload line read for its token bounds (the
	// longest line benchseal's load client reads from a prompt file).
	MaxWorkloadLine = 16 << 20
)

// Limits of a sharded run (shard.go).
const (
	// MaxShards bounds the shards of one run.
	MaxShards = 4096
	// MaxShardCells caps shards × points × repeats: the checkers keep a few
	// counters per shard of every point × repeat.
	MaxShardCells = 1 << 20
)
