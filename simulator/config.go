package simulator

import (
	"errors"
	"fmt"
	"time"

	"github.com/benchseal/benchseal/internal/digits"
)

// ErrConfig is the root of configuration errors.
var ErrConfig = errors.New("invalid simulator config")

// Config is the simulator's latency model. All durations are multiplied by
// TimeScale before use. Zero fields take the defaults of DefaultConfig.
type Config struct {
	// Seed makes every per-request random choice (output length when not
	// forced, chunk sizes, stalls, error injection) a function of the seed
	// and the request's prompt.
	Seed int64
	// Model is the one model served (default "benchseal-sim"); requests for
	// another model get 404. AnyModel accepts any name.
	Model    string
	AnyModel bool
	// Version is reported by /version.
	Version string
	// TimeScale multiplies every duration (e.g. 0.01 for fast tests).
	TimeScale float64
	// Prefill time = PrefillBase + PrefillPerToken × prompt tokens.
	PrefillBase, PrefillPerToken time.Duration
	// Each output token takes DecodeBase + DecodePerRunning × (requests
	// decoding or prefilling at that moment − 1).
	DecodeBase, DecodePerRunning time.Duration
	// StepJitter, in [0, 1), varies each output token's time by a
	// uniform factor in [1 − StepJitter, 1 + StepJitter], drawn from
	// JitterSeed alone, not from Seed: two servers of one Seed and two
	// JitterSeeds answer the same requests alike but time them as two
	// runs of a live server would, step by step, where with 0 the latency
	// model repeats itself to the scheduling noise of the machine.
	StepJitter float64
	JitterSeed int64
	// MaxRunning requests are served at once (a batch); up to QueueLimit
	// more wait for a slot; beyond that the answer is 429.
	MaxRunning, QueueLimit int
	// Each chunk carries 1..MaxChunkTokens tokens (uniform).
	MaxChunkTokens int
	// Before each chunk, with probability StallProb, the stream stalls for
	// Stall extra.
	StallProb float64
	Stall     time.Duration
	// ErrorRate is the probability that a streamed request fails
	// mid-stream with an in-band error event (HTTP status stays 200),
	// drawn per request from the seed and the request's number.
	ErrorRate float64
	// ReasoningTokens of each chat answer (at most all of them) are sent
	// as delta.reasoning_content before the content.
	ReasoningTokens int
	// KeepAlive, when > 0, sends ": keep-alive" comment lines at this
	// interval while a request waits in the queue or in prefill.
	KeepAlive time.Duration
	// GPUs, when > 0, simulates that many accelerators and serves their
	// metrics at GPUMetricsPath (DCGM exporter names; power rising with
	// the running requests, see GPUIdleW).
	GPUs int
	// DefaultMaxTokens applies when a request sets no max_tokens.
	DefaultMaxTokens int
	// PrefixCaching models a prefix cache: a prompt seen before since the
	// start or the last reset skips the per-token part of its prefill
	// (the whole prompt is the cached prefix).
	PrefixCaching bool
	// ColdStart is extra prefill time of the first request after the
	// server started (graph capture, compilation, allocation).
	ColdStart time.Duration
	// CacheResetPath is where POST empties the prefix cache (default
	// ResetPathVLLM; ResetPathSGLang to act as SGLang; "none" serves no
	// reset endpoint, so a reset gets 404 as from a vLLM started without
	// VLLM_SERVER_DEV_MODE=1).
	CacheResetPath string
	// Flavor is the engine the simulator answers like: FlavorVLLM (the
	// default) or FlavorLlamaCpp (FlavorLlamaCpp's names, endpoints and
	// fields; see llamacpp.go).
	Flavor string
	// CloseAfterStream closes the connection a few milliseconds after
	// each streamed answer ends, although the answer said keep-alive, as
	// llama.cpp's server does: a client that reuses the connection by then
	// loses the request it sent on it, which the server never reads.
	CloseAfterStream bool
	// SlotSave (FlavorLlamaCpp) acts as llama.cpp started with
	// --slot-save-path: POST /slots/{id}?action=erase empties a slot's
	// cache; without it the answer is 501.
	SlotSave bool
	// NoHostCache (FlavorLlamaCpp) acts as llama.cpp started with
	// --cache-ram 0: no host-memory prompt cache behind the slots, so
	// erasing every slot empties the whole prompt cache. By default, as
	// llama.cpp's server does, prompts a slot gives up stay cached in host
	// memory and a slot erase leaves them there.
	NoHostCache bool
	// NoTokenize (FlavorLlamaCpp) serves no POST /tokenize and POST
	// /apply-template (404), as a server without a tokenizer endpoint: a
	// client cannot count its prompts before sending them, only read the
	// usage.prompt_tokens of its answers.
	NoTokenize bool
}

// Flavors of the simulator.
const (
	FlavorVLLM     = "vllm"
	FlavorLlamaCpp = "llamacpp"
)

// closeAfterStreamDelay is how long the simulator keeps a connection open
// after a stream's end with CloseAfterStream: long enough that a client
// on the same host has reused it (as against a loaded llama.cpp), short
// enough not to slow a test.
const closeAfterStreamDelay = 5 * time.Millisecond

// Reset endpoints the simulator can serve (POST): vLLM's and SGLang's.
const (
	ResetPathVLLM   = "/reset_prefix_cache"
	ResetPathSGLang = "/flush_cache"
)

// DefaultConfig returns the documented default latency model: 20 ms +
// 50 µs per prompt token of prefill, 10 ms + 100 µs per other running
// request per output token, 64 running, 256 queued, 1-token chunks.
func DefaultConfig() Config {
	return Config{
		Model:            "benchseal-sim",
		Version:          "0.1.0-sim",
		TimeScale:        1,
		PrefillBase:      20 * time.Millisecond,
		PrefillPerToken:  50 * time.Microsecond,
		DecodeBase:       10 * time.Millisecond,
		DecodePerRunning: 100 * time.Microsecond,
		MaxRunning:       64,
		QueueLimit:       256,
		MaxChunkTokens:   1,
		DefaultMaxTokens: 16,
	}
}

// CheckTimeScale accepts a time scale in (0, 1000]. New treats a zero
// Config.TimeScale as 1; a command that takes the scale as a flag checks the
// value given with CheckTimeScale first, so that 0 is refused, not ignored.
func CheckTimeScale(v float64) error {
	if !(v > 0 && v <= 1000) {
		return fmt.Errorf("time scale %s out of range (0, 1000]", digits.Shortest(v))
	}
	return nil
}
