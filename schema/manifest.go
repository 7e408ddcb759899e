package schema

import (
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"time"
)

// Schema identifiers written in the "schema" field of each document.
const (
	ManifestSchemaV1 = "benchseal/manifest/v1"
	ClaimsSchemaV1   = "benchseal/claims/v1"
)

// Evidence classes: who produced the measurements.
const (
	EvidenceSelfRun     = "self-run"
	EvidenceVendorRun   = "vendor-run"
	EvidenceIndependent = "independent"
	EvidenceImported    = "imported"
	EvidenceSynthetic   = "synthetic"
)

// CaptureClientName is client.name of the runs benchseal capture writes;
// ValidateManifest reads their client.command_line as capture's flags.
const CaptureClientName = "benchseal-capture"

// CaptureRevision is the revision of capture's evidence rules this
// version writes (client.capture_revision). Revision 1: every
// server-metrics scrape states from_ns, and a run against benchseal's
// in-process simulator (--simulate) or an explicit --server-metrics URL
// holds scrapes unless --server-metrics=off (capture does not start when
// an explicit URL does not answer, and the simulator always serves
// /metrics). Revision 2: the after scrape of every point × repeat is sent
// at least CounterLagNS after its last request ended, so it shows every
// one of them counted. Revision 3: the before scrape of a point × repeat
// that follows its warmup is sent at least CounterLagNS after the
// warmup's last request ended, so no record ends less than that before a
// before scrape: the engine counted every request before the point by
// then, and only the preflight probe may be counted inside a point beside
// its own requests and those given up on (serverTally.elsewhere).
const CaptureRevision = 3

// HardwareSimulated is what capture states as the accelerator, driver and
// runtime of a simulator that served no model on any accelerator.
const HardwareSimulated = "simulated server (no accelerator)"

// Measurement boundaries: where the timestamps were taken.
const (
	BoundaryClientStreaming = "client-streaming"
	BoundaryServerTimer     = "server-timer"
	BoundaryNonStreaming    = "non-streaming"
)

// Load modes.
const (
	ModeConcurrency = "concurrency"
	ModeRate        = "rate"
)

// Arrival processes of a rate-mode load point.
const (
	ArrivalConstant = "constant"
	ArrivalPoisson  = "poisson"
	ArrivalGamma    = "gamma"
	// ArrivalTrace sends each request at its time in a replayed trace
	// (workload.trace; see TraceOffset).
	ArrivalTrace = "trace"
)

// Prefix-cache policies.
const (
	CacheWarm     = "warm"
	CacheEmpty    = "empty"
	CacheDisabled = "disabled"
)

// One-token policies of an SLO: whether a one-token answer, which has no
// TPOT, passes or fails a TPOT limit.
const (
	OneTokenPass = "pass"
	OneTokenFail = "fail"
)

// Duration is a time span in integer nanoseconds, written in JSON as a Go
// duration string such as "200ms" or "1m30s".
type Duration int64

// MarshalJSON writes d as a Go duration string.
func (d Duration) MarshalJSON() ([]byte, error) {
	return json.Marshal(time.Duration(d).String())
}

// UnmarshalJSON reads a Go duration string. Negative durations are rejected.
func (d *Duration) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return fmt.Errorf("duration must be a string like \"200ms\"")
	}
	v, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("invalid duration %q", s)
	}
	if v < 0 {
		return fmt.Errorf("negative duration %q", s)
	}
	*d = Duration(v)
	return nil
}

// String formats d as a Go duration.
func (d Duration) String() string { return time.Duration(d).String() }

// Manifest is the frozen configuration of one benchmark run
// (manifest.json, schema "benchseal/manifest/v1").
type Manifest struct {
	Schema      string `json:"schema"`
	RunID       string `json:"run_id"`
	Title       string `json:"title,omitempty"`
	StartTime   string `json:"start_time"`  // RFC 3339
	FinishTime  string `json:"finish_time"` // RFC 3339
	EpochUnixNS int64  `json:"epoch_unix_ns"`
	Evidence    string `json:"evidence"`
	// Incomplete is set when the run was stopped before its plan finished
	// (for example by Ctrl-C); IncompleteReason says why.
	Incomplete       bool   `json:"incomplete,omitempty"`
	IncompleteReason string `json:"incomplete_reason,omitempty"`

	Client      Client        `json:"client"`
	Hardware    Hardware      `json:"hardware"`
	Engine      Engine        `json:"engine"`
	Model       Model         `json:"model"`
	Decoding    Decoding      `json:"decoding"`
	Workload    Workload      `json:"workload"`
	Load        Load          `json:"load"`
	SLO         SLO           `json:"slo"`
	QualityGate *QualityGate  `json:"quality_gate,omitempty"`
	Cost        *Cost         `json:"cost,omitempty"`
	External    []ExternalRef `json:"external,omitempty"`
	Source      *Source       `json:"source,omitempty"`
	// Provenance says which record fields the source measured, derived or
	// did not store; nil means every field was measured.
	Provenance *Provenance `json:"provenance,omitempty"`
	// Plan names the pre-registered plan the run executed; nil when the
	// run was not pre-registered.
	Plan *PlanRef `json:"plan,omitempty"`
	// Reproduces names the run this one re-ran (benchseal reproduce): the
	// original bundle's run-manifest digest; nil for any other run.
	Reproduces *Reproduces `json:"reproduces,omitempty"`
	// Shard marks a run that is one shard of a sharded capture; Shards
	// is the bookkeeping of a run merged from shards. Both nil otherwise.
	Shard  *Shard  `json:"shard,omitempty"`
	Shards *Shards `json:"shards,omitempty"`
	// ServerMetrics indexes the engine's /metrics scrapes kept under
	// attachments/server-metrics/; nil when none were taken.
	ServerMetrics *ServerMetrics `json:"server_metrics,omitempty"`
	// GPUMetrics indexes the accelerator exporters' scrapes kept under
	// attachments/gpu-metrics/; nil when none were taken.
	GPUMetrics *GPUMetrics `json:"gpu_metrics,omitempty"`
	// ServerState says whether the server was freshly started and, per
	// point × repeat, how long its warmup ran and the prefix cache's
	// state; nil when the run states none of it.
	ServerState *ServerState `json:"server_state,omitempty"`
	// Unknown lists, as dotted JSON paths (e.g. "hardware.interconnect"),
	// the fields the publisher declares unknown. A field that is empty and
	// not listed here is a validation error for the fields the schema marks
	// as must-state.
	Unknown []string `json:"unknown"`
	// Notes holds free-form publisher remarks keyed by topic (capture
	// sets NotePreflight when its probe came before the first point).
	Notes map[string]string `json:"notes,omitempty"`
}

// Reproduces names the original of a reproduction run: what a reviewer
// re-ran with benchseal reproduce.
type Reproduces struct {
	// RunManifest is the digest ("sha256:<64 hex>") of the original
	// bundle's run manifest, the one its signatures cover.
	RunManifest string `json:"run_manifest"`
	// BundleRef is where the original bundle was read from (a file name
	// or registry reference), as the reviewer gave it; informative only.
	BundleRef string `json:"bundle_ref,omitempty"`
}

// PlanRef names a pre-registered plan by the sha256 (hex) of its
// canonical JSON.
type PlanRef struct {
	SHA256 string `json:"sha256"`
	Title  string `json:"title,omitempty"`
	// Metrics copies the plan's metric list, so that replay --write-claims
	// claims exactly the planned metrics without the plan file at hand;
	// nil in runs captured before it was recorded. A plan check rejects
	// a list other than the named plan's.
	Metrics []string `json:"metrics,omitempty"`
}

// Client describes the benchmark client that produced the records.
type Client struct {
	Name     string `json:"name"`
	Version  string `json:"version,omitempty"`
	Location string `json:"location,omitempty"` // relative to the server, e.g. "same-host", "same-rack", "cross-region"
	Boundary string `json:"boundary"`           // client-streaming | server-timer | non-streaming
	// CommandLine is the exact command that ran the benchmark.
	CommandLine []string `json:"command_line,omitempty"`
	Seed        *int64   `json:"seed,omitempty"`
	// TokenCounts says where output token counts come from:
	// "server-usage", "client-tokenizer", "chunk-count-estimate" or "tool-reported".
	TokenCounts string `json:"token_counts,omitempty"`
	// Host describes the machine the client ran on.
	Host *Host `json:"host,omitempty"`
	// Build identifies the client's executable (module, revision, Go
	// version, build settings, sha256); nil when the client states none,
	// as runs written before it was recorded and most imports.
	Build *Build `json:"build,omitempty"`
	// CaptureRevision is the revision of benchseal capture's evidence
	// rules the run was written under (CaptureRevision; 0: a capture
	// written before revisions were stated, or another client). A rule a
	// revision promises and the run breaks is a contradiction; a run
	// stating none gets the older, weaker reading of its evidence.
	CaptureRevision int `json:"capture_revision,omitempty"`
}

// Host describes a machine.
type Host struct {
	CPU         string `json:"cpu,omitempty"`
	Cores       int    `json:"cores,omitempty"`
	MemoryBytes int64  `json:"memory_bytes,omitempty"`
	OS          string `json:"os,omitempty"`
	Kernel      string `json:"kernel,omitempty"`
	Hostname    string `json:"hostname,omitempty"`
}

// Hardware describes the serving hardware.
type Hardware struct {
	Accelerator string `json:"accelerator,omitempty"`
	// AcceleratorCount is the number of accelerators; nil: not stated.
	// 0 is a CPU-only server, stated (never dropped as empty).
	AcceleratorCount  *int   `json:"accelerator_count,omitempty"`
	AcceleratorMemory string `json:"accelerator_memory,omitempty"`
	Nodes             int    `json:"nodes,omitempty"`
	Host              *Host  `json:"host,omitempty"`
	Interconnect      string `json:"interconnect,omitempty"`
	Driver            string `json:"driver,omitempty"`
	Runtime           string `json:"runtime,omitempty"` // e.g. "CUDA 12.8"
	// Details holds raw hardware queries (e.g. nvidia-smi output) by name.
	Details map[string]string `json:"details,omitempty"`
}

// Engine describes the serving engine.
type Engine struct {
	Name    string `json:"name,omitempty"`
	Version string `json:"version,omitempty"`
	Commit  string `json:"commit,omitempty"`
	// Image is a container image pinned by digest: name@sha256:<64 hex>.
	Image       string      `json:"image,omitempty"`
	Parallelism Parallelism `json:"parallelism"`
	// PrefixCache is warm, empty or disabled.
	PrefixCache string   `json:"prefix_cache,omitempty"`
	Args        []string `json:"args,omitempty"`
	// Server holds what the server said about itself (e.g. /v1/models).
	Server map[string]string `json:"server,omitempty"`
}

// Parallelism is the engine's parallel layout. Zero means not stated.
type Parallelism struct {
	Tensor   int `json:"tensor,omitempty"`
	Pipeline int `json:"pipeline,omitempty"`
	Data     int `json:"data,omitempty"`
	Expert   int `json:"expert,omitempty"`
}

// Model identifies the served model.
type Model struct {
	Name              string `json:"name"`
	Revision          string `json:"revision,omitempty"`
	Tokenizer         string `json:"tokenizer,omitempty"`
	TokenizerRevision string `json:"tokenizer_revision,omitempty"`
	// Precision, e.g. bf16, fp16, fp8, int8, int4, nvfp4. Quantized
	// precisions require a QualityGate.
	Precision string `json:"precision,omitempty"`
}

// Decoding holds the sampling and length settings of the requests.
type Decoding struct {
	Streaming   bool     `json:"streaming"`
	Temperature *float64 `json:"temperature,omitempty"`
	TopP        *float64 `json:"top_p,omitempty"`
	TopK        *int     `json:"top_k,omitempty"`
	MaxTokens   int      `json:"max_tokens,omitempty"`
	MinTokens   int      `json:"min_tokens,omitempty"`
	IgnoreEOS   bool     `json:"ignore_eos,omitempty"`
	Seed        *int64   `json:"seed,omitempty"`
	Endpoint    string   `json:"endpoint,omitempty"` // e.g. /v1/chat/completions
}

// Workload describes the request inputs.
type Workload struct {
	// SHA256 is the hex SHA-256 of the uncompressed workload.jsonl bytes.
	SHA256       string      `json:"sha256,omitempty"`
	Items        int         `json:"items,omitempty"`
	Description  string      `json:"description,omitempty"`
	Dataset      string      `json:"dataset,omitempty"`
	Private      bool        `json:"private,omitempty"`
	InputTokens  *LengthDist `json:"input_tokens,omitempty"`
	OutputTokens *LengthDist `json:"output_tokens,omitempty"`
	// Trace is the request trace the run replayed on its schedule (points
	// with arrival "trace"); nil when it replayed none.
	Trace *TraceSource `json:"trace,omitempty"`
	// Sessions is the multi-turn sessions the run sent; nil when it sent
	// none.
	Sessions *SessionSource `json:"sessions,omitempty"`
}

// LengthDist summarises a token-length distribution: the kind it was
// drawn from and, for drawn lengths, the distribution as capture's
// --input-tokens/--output-tokens state it; min, max and mean of the
// workload items' lengths.
type LengthDist struct {
	Kind string `json:"kind,omitempty"` // fixed, uniform, normal, lognormal, empirical, dataset
	// Spec is the distribution the lengths were drawn from (capture's
	// LengthSpec: "64..256", "normal:512,128,1,1024", "list:100,200");
	// empty when not drawn.
	Spec string `json:"spec,omitempty"`
	Min  int    `json:"min,omitempty"`
	Max  int    `json:"max,omitempty"`
	// Mean is the items' mean length, the float64 nearest their sum over
	// their count (8.6 for 4, 8 and 16 drawn 7, 8 and 5 times; it was
	// truncated to an integer, which an older manifest's mean still is).
	Mean float64 `json:"mean,omitempty"`
	// Unit is what the lengths count: LengthTokens or LengthWords; empty
	// when not stated.
	Unit string `json:"unit,omitempty"`
}

// Units of a LengthDist.
const (
	// LengthTokens: tokens of the served model, as its tokenizer counts
	// them (an output length is the max_tokens sent).
	LengthTokens = "tokens"
	// LengthWords: whitespace-separated words, which approximate tokens
	// (synthetic prompts that could not be counted with the server's
	// tokenizer, a conversation answer's length).
	LengthWords = "words"
)

// Load describes the offered load.
type Load struct {
	Mode   string  `json:"mode"` // concurrency | rate
	Points []Point `json:"points"`
	Warmup Warmup  `json:"warmup"`
	// Repeats is the number of repeats of every point (≥ 1).
	Repeats        int      `json:"repeats"`
	Duration       Duration `json:"duration,omitempty"`
	RequestTimeout Duration `json:"request_timeout,omitempty"`
	// MaxOutstanding caps in-flight requests; requests beyond it are
	// recorded as rejected. Zero means no cap.
	MaxOutstanding int `json:"max_outstanding,omitempty"`
	// Generator names the convention the load generator followed, which
	// validate and verify then check record by record: GeneratorBenchsealV1,
	// or empty when the source follows none (imported runs).
	Generator string `json:"generator,omitempty"`
}

// GeneratorBenchsealV1 is the convention of benchseal's load client. The
// requests of a point × repeat are numbered k = 0, 1, … in send order and
// their record ids are "<point>.r<repeat>.m<k>" (measured) or
// "<point>.r<repeat>.w<k>" (warmup); a point or warmup with a request count
// has exactly that many. In rate mode request k of a phase is scheduled at
// the phase's start + Schedule(arrival, rate, burstiness, n, duration,
// client.seed, point index<<20 | len(phase))[k], the same for every repeat,
// so scheduled_ns minus the phase's first is regenerated exactly.
const GeneratorBenchsealV1 = "benchseal/v1"

// Point is one load point of a sweep.
type Point struct {
	Name        string `json:"name"`
	Concurrency int    `json:"concurrency,omitempty"`
	// Rate is the offered arrival rate in requests per second.
	Rate         float64  `json:"rate,omitempty"`
	Arrival      string   `json:"arrival,omitempty"` // constant | poisson | gamma
	Burstiness   float64  `json:"burstiness,omitempty"`
	Requests     int      `json:"requests,omitempty"`
	Duration     Duration `json:"duration,omitempty"`
	InputTokens  int      `json:"input_tokens,omitempty"`
	OutputTokens int      `json:"output_tokens,omitempty"`
}

// Warmup says how many requests or how long each point warmed up.
type Warmup struct {
	Requests int      `json:"requests,omitempty"`
	Duration Duration `json:"duration,omitempty"`
}

// SLO is the service-level objective declared before the run. Zero limits
// are not set.
type SLO struct {
	TTFT     Duration `json:"ttft,omitempty"`
	E2E      Duration `json:"e2e,omitempty"`
	TPOT     Duration `json:"tpot,omitempty"`
	OneToken string   `json:"one_token,omitempty"` // pass | fail
}

// Limit returns the limit named key (one of SLOKeys; 0 when it is not set
// or key names no limit).
func (s SLO) Limit(key string) Duration {
	switch key {
	case SLOTTFT:
		return s.TTFT
	case SLOE2E:
		return s.E2E
	case SLOTPOT:
		return s.TPOT
	}
	return 0
}

// QualityGate records an accuracy check of a quantized variant.
type QualityGate struct {
	Check     string  `json:"check"`
	Dataset   string  `json:"dataset"`
	Metric    string  `json:"metric"`
	Threshold float64 `json:"threshold"`
	Result    float64 `json:"result"`
	Passed    bool    `json:"passed"`
}

// Cost records what the run cost over its interval.
type Cost struct {
	Currency     string `json:"currency,omitempty"`
	PricePerHour string `json:"price_per_hour,omitempty"` // decimal string
	// PricePerKWh is the declared price of a kilowatt-hour (decimal
	// string): replay prices the measured accelerator energy of each
	// point's window at it (manifest.gpu_metrics).
	PricePerKWh  string  `json:"price_per_kwh,omitempty"`
	EnergyJoules float64 `json:"energy_joules,omitempty"`
	Interval     string  `json:"interval,omitempty"` // what the cost covers
}

// ExternalReference reports whether m describes an imported
// external-evidence reference (evidence "imported" with manifest.external
// set, as an MLPerf LoadGen result): such a run may hold no records and
// declare no load points, since the evidence has no per-request data.
func (m *Manifest) ExternalReference() bool {
	return m.Evidence == EvidenceImported && len(m.External) > 0
}

// Declared reports whether path is listed in m.Unknown.
func (m *Manifest) Declared(path string) bool { return slices.Contains(m.Unknown, path) }

// ExternalRef links external evidence such as an MLPerf result. It is a
// reference, never a measurement of this run.
type ExternalRef struct {
	Kind             string            `json:"kind"` // e.g. mlperf-inference
	Version          string            `json:"version,omitempty"`
	Division         string            `json:"division,omitempty"`
	Category         string            `json:"category,omitempty"`
	Scenario         string            `json:"scenario,omitempty"`
	Status           string            `json:"status,omitempty"` // e.g. VALID, verified, unverified
	Submitter        string            `json:"submitter,omitempty"`
	System           string            `json:"system,omitempty"`
	AcceleratorCount int               `json:"accelerator_count,omitempty"`
	URL              string            `json:"url,omitempty"`
	Results          map[string]string `json:"results,omitempty"`
	Attachments      []string          `json:"attachments,omitempty"`
}

// Source describes where an imported run came from.
type Source struct {
	Tool    string `json:"tool"`
	Version string `json:"version,omitempty"`
	// Files lists the original files, kept under attachments/.
	Files []SourceFile `json:"files,omitempty"`
	// Derived lists record fields that were rebuilt rather than measured,
	// with how (e.g. "chunks_ns: rebuilt from per-chunk gaps").
	Derived []string `json:"derived,omitempty"`
	// Importer identifies the benchseal build that imported the files;
	// nil for imports written before it was recorded. Nothing in the
	// attachments can confirm it: it is the publisher's word.
	Importer *Build `json:"importer,omitempty"`
}

// SourceFile is one original file of an import.
type SourceFile struct {
	Name   string `json:"name"`
	SHA256 string `json:"sha256"`
	Size   int64  `json:"size"`
	// OriginalSHA256 is set when credentials were redacted from the file
	// before it was kept: SHA256 and Size are then those of the redacted
	// bytes under attachments/, and this the digest of the file as given.
	OriginalSHA256 string `json:"original_sha256,omitempty"`
	// Redactions says where credentials were replaced (line and kind, never
	// the credential).
	Redactions []Redaction `json:"redactions,omitempty"`
}

// Redaction is one credential replaced in a kept file.
type Redaction struct {
	Line int    `json:"line"`
	Kind string `json:"kind"`
}

// MarshalJSON writes the manifest with "unknown" and "load.points" as
// arrays even when empty, as the published JSON Schema requires.
func (m Manifest) MarshalJSON() ([]byte, error) {
	type plain Manifest
	if m.Unknown == nil {
		m.Unknown = []string{}
	}
	if m.Load.Points == nil {
		m.Load.Points = []Point{}
	}
	return json.Marshal(plain(m))
}

// UnverifiedLabel is the label every output prints next to the results of
// external evidence: they are the source's published numbers, which no
// record lets benchseal recompute (import re-derivation only ties them to
// the attached logs they were read from).
func (e ExternalRef) UnverifiedLabel() string {
	by := e.Kind
	if e.Submitter != "" {
		by += ", submitter " + e.Submitter
	}
	return "UNVERIFIED (external, as published by " + by + "; not recomputable from records)"
}

// NewRunID returns a fresh random run id (24 hex digits).
func NewRunID() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// NotePreflight is the manifest note capture writes when its preflight
// probe, a request it does not record, was answered before the first
// point: a server's cold start went into the probe, so replay's cold
// column of the first point starts after it.
const NotePreflight = "preflight"

// NoteUncountedInput is the manifest note capture writes when some
// records' input_tokens are not the server's count of their prompt (no
// answer of the run counted it): a record that did not end ok then holds
// 0, an ok one without usage the prompt's words. It is per process: each
// shard of a capture counts its own, and merge keeps each shard's.
const NoteUncountedInput = "input_tokens_uncounted"

// Accelerators returns the stated accelerator count; ok is false when
// none is stated.
func (h *Hardware) Accelerators() (n int, ok bool) {
	if h.AcceleratorCount == nil {
		return 0, false
	}
	return *h.AcceleratorCount, true
}

// Count returns a pointer to n, for stated counts such as
// Hardware.AcceleratorCount.
func Count(n int) *int { return &n }
