package capture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benchseal/benchseal/energy"
	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/plan"
	"github.com/benchseal/benchseal/schema"
)

// Conditions Run refuses or fails on, besides plan.ErrPlan, ErrPreflight and
// ErrTooManyFailures (one sentinel per condition; messages say "capture
// failed: ..." with the details).
var (
	// ErrOptions: the options lack what every capture needs (an output
	// directory, a model, an http:// or https:// endpoint).
	ErrOptions = errors.New("invalid capture options")
	// ErrInvalidManifest: the manifest the options would make (Manifest,
	// Overlay, Sets) does not validate; nothing was sent or written.
	ErrInvalidManifest = errors.New("the manifest would be invalid (state it with --set or --manifest)")
	// ErrNotEmpty: the output directory exists and holds files.
	ErrNotEmpty = errors.New("exists and is not empty (refusing to overwrite)")
	// ErrNoServerMetrics: the server-metrics URL named in the options did
	// not answer with engine metrics before the run.
	ErrNoServerMetrics = errors.New("no engine metrics")
	// ErrNoGPUMetrics: an accelerator-metrics URL named in the options
	// did not answer with an energy counter or power gauge before the run.
	ErrNoGPUMetrics = errors.New("no accelerator metrics")
	// ErrNotFresh: Options.ServerFresh declares a freshly started server,
	// but its /metrics before the run count requests it already served;
	// nothing was sent or written.
	ErrNotFresh = errors.New("the server is not freshly started")
)

// ClientName is the manifest's client.name for runs this package writes.
const ClientName = schema.CaptureClientName

// ProgressReason is the incomplete_reason of a manifest while its capture
// is still running; a directory left with it was killed mid-run.
const ProgressReason = "capture in progress (the client stopped before finishing the run)"

// Options configure one capture.
type Options struct {
	// Endpoint is the server's base URL, e.g. http://127.0.0.1:8000 (a
	// trailing /v1 is accepted).
	Endpoint string
	// APIKey is sent as a Bearer token. It is never written to the run.
	APIKey string
	// Request holds the body settings shared by all requests.
	Request RequestOptions
	// Plan is the load to offer.
	Plan Plan
	// Prompts, when set, is the workload (from ReadPrompts); otherwise
	// each point gets deterministic synthetic prompts of its lengths.
	Prompts []Item
	// Trace, when set, is the workload and the schedule of the plan's one
	// point, whose arrival is schema.ArrivalTrace (LoadSpec.Trace).
	Trace *TraceRun
	// Sessions, when set, is the workload of closed-loop multi-turn
	// sessions: each of a point's concurrency workers runs one session at
	// a time, sending each turn when the one before it ended
	// (LoadSpec.Sessions).
	Sessions *SessionRun
	// Tokenizer, when set, counts the synthetic prompts' tokens in place
	// of the server's tokenizer endpoint the probe finds (tests).
	Tokenizer Tokenizer
	// Dataset names the prompt source for manifest.workload.dataset.
	Dataset string
	// OutDir is the run directory to create; it must not exist or be empty.
	OutDir string
	// Manifest is a partly filled manifest (title, client version,
	// location, command line, host, hardware, notes ...) that Run
	// completes. It may be nil.
	Manifest *schema.Manifest
	// Overlay is a partial manifest (JSON merge patch) and Sets are
	// "dotted.path=value" assignments, applied in that order over what
	// capture fills (see schema.ApplyOverlay).
	Overlay []byte
	Sets    []string
	// Probe asks the server's /v1/models and /version before the run.
	Probe bool
	// Simulator declares that Endpoint is benchseal's simulator (capture
	// --simulate). Without it, a response carrying the simulator's header
	// (SimulatorHeader), on any request capture makes, tells the same.
	// Either way the run's evidence is synthetic, whatever Manifest,
	// Overlay or Sets state.
	Simulator bool
	// OnFailure, when set, is called for every request that does not end
	// ok, as it ends (one call at a time).
	OnFailure func(Failure)
	// MaxErrorRate stops the run when more than this fraction of a
	// phase's ended requests failed (error, timeout or refused by the
	// server), once MinErrorSample of them (or the whole phase) ended; the
	// run is kept, marked incomplete, and Run returns ErrTooManyFailures.
	// Zero never stops.
	MaxErrorRate float64
	// SkipPreflight skips the checks before the run (see ErrPreflight):
	// GET /v1/models must list the model when the server offers it, and
	// one probe request must succeed, or Run stops without writing.
	SkipPreflight bool
	// Grace is how long in-flight requests may finish after ctx ends
	// before they are cancelled (recorded as cancelled).
	Grace time.Duration
	// FlushInterval is how often records reach the file (default 200ms).
	FlushInterval time.Duration
	// Progress, when set, is called from one goroutine every
	// ProgressInterval (default 500ms) and once at the end.
	Progress         func(Progress)
	ProgressInterval time.Duration
	// HTTP2 lets the client speak HTTP/2 where a TLS server offers it
	// (see NewTransport); the manifest's note "http" says what was used.
	HTTP2 bool
	// HTTPClient overrides the client built on NewTransport.
	HTTPClient *http.Client
	// ServerMetrics is the engine's Prometheus /metrics to scrape before,
	// during and after every point × repeat: a URL, ServerMetricsAuto, or
	// "" for none. The raw scrapes are kept under
	// attachments/server-metrics/ and indexed in manifest.server_metrics.
	ServerMetrics string
	// Shard, when set, makes this process one shard of a sharded capture:
	// it generates the whole seeded plan and sends only its share
	// (schema.ShardSplitV1), recording each request under its global
	// number; benchseal merge joins the shards into one run.
	Shard *ShardSpec
	// StartAt, when set, is the common start of all shards: the run's
	// first request waits for it, and a shard that starts late records by
	// how much (manifest.shard.late_ns).
	StartAt time.Time
	// ReadClock reads the machine's wall-clock error bounds when the
	// epoch is taken (default ReadClock); set for tests.
	ReadClock func(context.Context) *schema.Clock
	// ServerMetricsInterval is the period of the scrapes during a point
	// (default DefaultServerMetricsInterval).
	ServerMetricsInterval time.Duration
	// GPUMetrics are accelerator exporters' Prometheus URLs (one per
	// node) scraped before, during (every GPUMetricsInterval, default
	// DefaultGPUMetricsInterval) and after every point × repeat; the raw
	// scrapes are kept under attachments/gpu-metrics/ and indexed in
	// manifest.gpu_metrics. GPUCustom names an energy counter or power
	// gauge the built-in table (energy.Names) does not know. GPUServing
	// is how it is known the devices serve the endpoint
	// (schema.ServingDeclared when empty).
	GPUMetrics         []string
	GPUMetricsInterval time.Duration
	// GPUMetricsMaxAge is how old an exporter's readings may be when it
	// answers (its own collection interval; manifest gpu_metrics.max_age):
	// the scrape after a point waits this long so its readings cover the
	// point's end. Ignored (0) for the simulator's accelerators.
	GPUMetricsMaxAge time.Duration
	GPUCustom        energy.Custom
	GPUServing       string
	// SimGPUs is how many accelerators the simulator at Endpoint serves
	// (capture --sim-gpus; with Simulator): the run states that count and
	// the simulated accelerator unless Manifest, Overlay or Sets state
	// them, and refuses other values (CheckSimulatedHardware).
	SimGPUs int
	// HostFS, when set, is the root file system of the machine capture
	// runs on (os.DirFS("/")): the client's host is described from it
	// (HostInfo), and so is the hardware's when Manifest's client location
	// is "same-host" or GPUQuery is set.
	HostFS fs.FS
	// GPUQuery, when set (GPUQueryNvidia or GPUQueryAMD), asks that tool
	// about this machine's accelerators (QueryGPU) with RunCommand
	// (default ExecCommand).
	GPUQuery   string
	RunCommand CommandRunner
	// Registered is the pre-registered plan Plan executes (see FromPlan):
	// its digest, title and SLO go to the manifest, and settings that
	// would contradict it are refused (plan.ErrPlan) before anything is sent.
	Registered *plan.Plan
	// ReadyTimeout, when positive, waits up to that long for GET
	// /v1/models to answer before anything else is sent.
	ReadyTimeout time.Duration
	// ResetPrefixCache empties the engine's prefix cache before every
	// point × repeat (before its warmup): POST /reset_prefix_cache
	// (vLLM), then /flush_cache (SGLang), the detected engine's first.
	// Each attempt is recorded in manifest.server_state; a failed one
	// leaves that point's cache state unknown and the run goes on.
	ResetPrefixCache bool
	// ServerFresh declares that the server was freshly started for the
	// run. When the first /metrics scrape (taken before any request)
	// holds the engine's counters, the fresh start is measured instead,
	// and a declaration it contradicts stops the run.
	ServerFresh bool
}

// Progress is a snapshot of a running capture.
type Progress struct {
	Point              string
	Cell, Cells        int // current (point, repeat) cell, 1-based, and total
	Repeat             int
	Phase              string
	Sent, Done, Failed int64 // in the current phase
	// Requests is the phase's planned request count (0: until its
	// duration or schedule ends).
	Requests int64
	InFlight int64
	// OfferedRate is the point's rate, this shard's share of it in a shard
	// run (0 in concurrency mode);
	// AchievedRate is sends per second so far in the phase.
	OfferedRate, AchievedRate float64
	Elapsed                   time.Duration // since the run started
	// PhaseElapsed is the time since the current phase started.
	PhaseElapsed time.Duration
	// Remaining estimates the rest of the current phase (-1: unknown).
	Remaining time.Duration
	// RunRemaining estimates the rest of the run: the current phase's
	// remaining time and, for each cell after the current one, the mean
	// time the cells before it took (-1: unknown, before a cell ended or
	// when the phase's remaining time is unknown).
	RunRemaining time.Duration
	Final        bool
}

// Result is what Run reports.
type Result struct {
	Dir      string
	Manifest *schema.Manifest
	Cells    []CellStats
	Records  int64
	Chunks   int64
	// Stopped is set when ctx, or too many failures, ended the run early.
	Stopped bool
	// Failures counts the requests that did not end ok, by reason, most
	// frequent first.
	Failures []FailureCount
	// EnergyWarning says which point × repeat windows are too short for
	// their accelerator energy bounds to close ("" when none).
	EnergyWarning string
}

type runner struct {
	// fingerprint is the system_fingerprint of the preflight probe's
	// answer ("" when none was sent or stated).
	fingerprint string
	o           *Options
	start       time.Time
	client      *http.Client
	url         string
	items       []Item
	bodies      [][]byte
	// probe is the preflight's prompt when it is not the first item's
	// (Plan.DistinctPrompts).
	probe   *Item
	sink    *sink
	reqBase context.Context

	failures failureLog
	// abort stops the run early (too many failures), nil before it runs.
	abort context.CancelCauseFunc

	usageMissing atomic.Bool
	// counts gives records the server's count of their prompt.
	counts *promptCounts
	// fresh opens a new connection for every request; serverCloses is set
	// once the server closed a kept-alive connection under a request
	// (send), and resent counts the requests sent again for it.
	keeper *stateKeeper
	// okStreams counts the ok streams with per-chunk usage asked for, and
	// perChunk those whose usage gave chunk_tokens.
	okStreams, perChunk atomic.Int64
	fresh               *http.Client
	serverCloses        atomic.Bool
	resent              atomic.Int64
	// simSeen is set when a response carried SimulatorHeader; simApplied
	// once the simulator's description went into the manifest.
	simSeen    atomic.Bool
	simApplied bool
	// responses by HTTP major version
	http1Responses, http2Responses atomic.Int64
	totalChunks                    atomic.Int64
	// prefix compares a trace replay's expected cacheable tokens with
	// the cached tokens the server reported.
	prefix prefixTally

	// current phase counters, for progress
	cur struct {
		sync.Mutex
		point, phase string
		cell, repeat int
		rate         float64
		phaseStart   int64
		// cellStart is when the current cell's first phase started.
		cellStart       int64
		expectedEnd     int64 // ns since run start, 0 unknown
		requests        int64
		sent, done, bad atomic.Int64
	}
	inflight atomic.Int64
	cells    int
}

// CheckEndpoint accepts the endpoint a capture sends to: an http:// or
// https:// URL with a host (Run refuses any other as ErrOptions).
func CheckEndpoint(endpoint string) error {
	if u, err := url.Parse(endpoint); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return fmt.Errorf("endpoint %q: want an http:// or https:// URL", endpoint)
	}
	return nil
}

// Run captures a benchmark run into o.OutDir. When ctx ends, sending stops,
// in-flight requests get o.Grace to finish and the run is finished as
// incomplete; Run then returns the result and no error. An error means the
// run directory could not be written or the options were wrong.
//
// Its phases, in order: resolveOptions, newRunner, prepare (workload and
// manifest, nothing sent), checkServer (scrapes, probe, preflight),
// openRunDir, and measure, which runs the cells (runCells) and then
// finishes the run (finish).
func Run(ctx context.Context, o Options) (*Result, error) {
	if err := resolveOptions(&o); err != nil {
		return nil, err
	}
	r, base := newRunner(&o)
	if o.HTTPClient == nil {
		defer r.client.CloseIdleConnections()
	}
	s, err := r.prepare(ctx, base)
	if err != nil {
		return nil, err
	}
	if err := s.checkServer(ctx); err != nil {
		return nil, err
	}
	if err := s.openRunDir(ctx); err != nil {
		return nil, err
	}
	return s.measure(ctx)
}

// capturing is one Run's state between its phases: what an earlier phase
// made and a later one uses.
type capturing struct {
	r *runner
	o *Options
	// base is the endpoint without a trailing "/" or "/v1".
	base  string
	cells []*cell
	m     *schema.Manifest
	// wl is workload.jsonl, written once the wait for the start is over.
	wl  bytes.Buffer
	scr *scraper
	gpu *gpuScraper
	si  *ServerInfo
	// clk is the wall clock's error bounds at the epoch (shard runs and
	// runs with a common start; nil otherwise).
	clk *schema.Clock
}

// resolveOptions normalizes o's plan (a copy of the caller's points),
// fills its defaults and refuses options no capture can run: no output
// directory or model, a start time or shard that does not fit, an endpoint
// that is not an http:// or https:// URL, settings that contradict the
// registered plan.
func resolveOptions(o *Options) error {
	// o is a copy, but its plan's points are the caller's: normalize ours.
	o.Plan.Points = slices.Clone(o.Plan.Points)
	if err := o.Plan.Normalize(); err != nil {
		return err
	}
	if o.OutDir == "" {
		return errcond.Errorf(ErrOptions, "capture failed: invalid capture options: no output directory")
	}
	if o.Request.Model == "" {
		return errcond.Errorf(ErrOptions, "capture failed: invalid capture options: no model")
	}
	if o.Request.API == "" {
		o.Request.API = APIChat
	}
	if !o.StartAt.IsZero() {
		if err := CheckStartAt(o.StartAt, time.Now()); err != nil {
			return errcond.Errorf(ErrOptions, "capture failed: invalid capture options: %w", err)
		}
	}
	if o.Shard != nil {
		if err := o.Shard.check(); err != nil {
			return err
		}
		if err := CheckShardable(&o.Plan, o.Shard.Count); err != nil {
			return err
		}
	}
	if err := CheckEndpoint(o.Endpoint); err != nil {
		return errcond.Errorf(ErrOptions, "capture failed: invalid capture options: %w", err)
	}
	if o.Registered != nil {
		if err := checkRegistered(o.Registered, o.Sets, o.Request.Stream, o.Prompts != nil); err != nil {
			return err
		}
	}
	return nil
}

// newRunner makes the runner of resolved options, with the URL requests
// go to and its two HTTP clients: one keeping connections alive, and one
// opening a fresh connection per request (used once the server closed a
// kept-alive one), both spotting the simulator's header. It returns the
// endpoint's base URL too.
func newRunner(o *Options) (*runner, string) {
	base := strings.TrimRight(o.Endpoint, "/")
	base = strings.TrimSuffix(base, "/v1")
	path := "/v1/chat/completions"
	if o.Request.API == APICompletions {
		path = "/v1/completions"
	}
	maxConns := 16
	for _, pt := range o.Plan.Points {
		maxConns = max(maxConns, pt.Concurrency)
	}
	if o.Plan.MaxOutstanding > 0 {
		maxConns = max(maxConns, o.Plan.MaxOutstanding)
	}
	r := &runner{o: o, url: base + path}
	if o.HTTPClient == nil {
		r.client = &http.Client{Transport: r.spotSimulator(NewTransport(maxConns, o.HTTP2))}
		tr := NewTransport(maxConns, o.HTTP2)
		tr.DisableKeepAlives = true
		r.fresh = &http.Client{Transport: r.spotSimulator(tr)}
		return r, base
	}
	c := *o.HTTPClient
	f := *o.HTTPClient
	if tr, ok := c.Transport.(*http.Transport); ok {
		tr = tr.Clone()
		tr.DisableKeepAlives = true
		f.Transport = tr
	}
	c.Transport = r.spotSimulator(c.Transport)
	f.Transport = r.spotSimulator(f.Transport)
	r.client, r.fresh = &c, &f
	return r, base
}

// prepare lays out the run before any request: the workload and its
// cells, and the manifest it starts from (the machine, the registered
// plan, the workload's digest), after waiting for the server to answer
// when Options.ReadyTimeout asks. The manifest is marked in progress; one
// that would not validate with the publisher's settings is refused
// (ErrInvalidManifest) before anything is sent or the output directory is
// touched.
func (r *runner) prepare(ctx context.Context, base string) (*capturing, error) {
	o := r.o
	cells, err := r.buildWorkload()
	if err != nil {
		return nil, err
	}
	r.counts = newPromptCounts(len(r.items))

	m := r.baseManifest()
	if err := r.describeMachine(ctx, m); err != nil {
		return nil, err
	}
	if o.Registered != nil {
		if err := applyRegistered(m, o.Registered); err != nil {
			return nil, err
		}
	}
	if o.ReadyTimeout > 0 {
		rctx, cancel := context.WithTimeout(ctx, o.ReadyTimeout)
		err := WaitReady(rctx, &http.Client{Transport: r.spotSimulator(NewTransport(1, false))}, base, o.APIKey)
		cancel()
		if err != nil {
			return nil, err
		}
	}
	s := &capturing{r: r, o: o, base: base, cells: cells, m: m}
	sum, err := EncodeWorkload(&s.wl, r.items)
	if err != nil {
		return nil, err
	}
	m.Workload.SHA256 = sum
	m.Workload.Items = len(r.items)
	if o.Plan.DistinctPrompts {
		setNote(m, "distinct_prompts", "every point × repeat sent synthetic prompts of its own (seeded; workload.jsonl holds them all), so no prompt cache carried over between them; the preflight probe sent one more, not in the workload")
	}
	r.markStart(m) // provisional: validation needs a dated manifest
	m.Incomplete = true
	m.IncompleteReason = ProgressReason
	if err := r.finishManifest(m, o.Overlay, o.Sets); err != nil {
		return nil, err
	}
	// Refuse before sending anything or touching the output directory when
	// the publisher's settings would make an invalid manifest.
	if probs := schema.ValidateManifest(m, schema.ManifestFile); len(probs) > 0 {
		return nil, errcond.Errorf(ErrInvalidManifest, "capture failed: the manifest would be invalid (state it with --set or --manifest): %w", &schema.ValidationError{Problems: probs})
	}
	return s, nil
}

// checkServer asks the server and engine what the run needs before its
// first request: the first engine and accelerator scrapes (the evidence
// of a fresh start), the probe's GETs, the synthetic prompts fitted to the
// served tokenizer, the server-state keeper, and the preflight (unless
// Options.SkipPreflight), whose fingerprint and note go to the manifest.
func (s *capturing) checkServer(ctx context.Context) error {
	r, o, m := s.r, s.o, s.m
	// The first scrape comes before any request (preflight's too): it is
	// the evidence of a fresh start.
	var err error
	if s.scr, err = r.newScraper(ctx, s.base, m); err != nil {
		return err
	}
	if s.gpu, err = r.newGPUScraper(ctx, m); err != nil {
		return err
	}
	// The probe asks only GETs, which no engine counts as served
	// requests: the fresh-start scrape above still comes first.
	if o.Probe {
		s.si = ProbeServer(ctx, r.client, s.base, o.APIKey)
		applyServerInfo(m, s.si)
		if s.si.Simulator {
			r.simSeen.Store(true)
		}
	}
	if o.Prompts == nil && o.Sessions == nil {
		if err := r.fitPrompts(ctx, s.base, s.si, m, &s.wl); err != nil {
			return err
		}
		setInputUnit(m, r.counts.fitted)
	}
	if r.keeper, err = r.newStateKeeper(s.base, s.scr, m, s.si); err != nil {
		return err
	}
	if o.SkipPreflight {
		return nil
	}
	if err := r.preflight(ctx, s.base); err != nil {
		return err
	}
	if r.fingerprint != "" {
		if m.Engine.Server == nil {
			m.Engine.Server = map[string]string{}
		}
		m.Engine.Server[ServerFingerprint] = r.fingerprint
	}
	setNote(m, schema.NotePreflight, "one probe request, built like the run's first one, was sent and answered before the first point and is not recorded: "+
		"a cold start of the server went into it, so the first point's cold column starts after it (capture --no-preflight keeps the cold start in the warmup)")
	return nil
}

// openRunDir creates the run directory (refusing a non-empty one) and
// writes what the run starts with: the fresh-start evidence, then, after
// the wait for a common start (Options.StartAt), the workload, the
// in-progress manifest dated at the run's t=0, and the records file.
func (s *capturing) openRunDir(ctx context.Context) error {
	r, o, m := s.r, s.o, s.m
	if err := prepareDir(o.OutDir); err != nil {
		return err
	}
	if err := r.keeper.writeFresh(); err != nil {
		return err
	}
	// The preflight's and the probe's answers may have shown a simulator.
	if err := r.finishManifest(m, o.Overlay, o.Sets); err != nil {
		return err
	}
	if o.Shard != nil || !o.StartAt.IsZero() {
		rc := o.ReadClock
		if rc == nil {
			rc = ReadClock
		}
		s.clk = rc(ctx)
		if err := sleepUntil(ctx, o.StartAt); err != nil {
			return fmt.Errorf("wait for the common start %s: %w", o.StartAt.UTC().Format(time.RFC3339), err)
		}
	}
	// Nothing is written to the run directory before the wait is over: a
	// capture stopped while waiting leaves it empty, ready for a re-run.
	if err := writeWorkload(o, s.wl.Bytes()); err != nil {
		return err
	}
	r.markStart(m) // the run's t=0, just before the first request
	r.shardManifest(m, s.clk)
	if err := writeManifest(o.OutDir, m); err != nil {
		return err
	}
	var err error
	r.sink, err = newSink(filepath.Join(o.OutDir, schema.RecordsFile), o.FlushInterval)
	return err
}

// measure runs the cells with progress reports and then finishes the run.
// When ctx ends, or too many failures stop the run (r.abort), no cell or
// request starts any more and in-flight requests get Options.Grace to
// finish before they are cancelled (errRunStopped).
func (s *capturing) measure(ctx context.Context) (*Result, error) {
	r, o := s.r, s.o
	userCtx := ctx
	ctx, r.abort = context.WithCancelCause(ctx)
	defer r.abort(nil)
	reqBase, cancelReqs := context.WithCancelCause(context.WithoutCancel(ctx))
	defer cancelReqs(nil)
	grace := o.Grace
	stopAfter := context.AfterFunc(ctx, func() {
		if grace <= 0 {
			cancelReqs(errRunStopped)
			return
		}
		time.AfterFunc(grace, func() { cancelReqs(errRunStopped) })
	})
	defer stopAfter()
	r.reqBase = reqBase

	stopProgress := r.startProgress()
	res := &Result{Dir: o.OutDir, Manifest: s.m}
	s.runCells(ctx, res)
	stopProgress()
	return s.finish(userCtx, ctx, res)
}

// startProgress calls Options.Progress, when set, from one goroutine
// every ProgressInterval (default 500ms); stop ends it and waits for it.
func (r *runner) startProgress() (stop func()) {
	o := r.o
	if o.Progress == nil {
		return func() {}
	}
	iv := o.ProgressInterval
	if iv <= 0 {
		iv = 500 * time.Millisecond
	}
	progDone := make(chan struct{})
	progStop := make(chan struct{})
	go func() {
		defer close(progDone)
		t := time.NewTicker(iv)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				o.Progress(r.snapshot(false))
			case <-progStop:
				return
			}
		}
	}()
	return func() {
		close(progStop)
		<-progDone
	}
}

// runCells runs the cells in plan order, each point × repeat's warmup
// before its measured phase, every one inside its scrapes and after its
// server-state step (cache reset), until they end or ctx does; each
// measured cell's statistics go to res.Cells.
func (s *capturing) runCells(ctx context.Context, res *Result) {
	r := s.r
	nos, measured := cellNumbers(s.cells)
	r.cells = measured
	for i, c := range s.cells {
		if ctx.Err() != nil {
			break
		}
		r.keeper.begin(ctx, c)
		if s.scr != nil && c.phase == schema.PhaseMeasure && i > 0 && s.cells[i-1].phase == schema.PhaseWarmup {
			// The engine counts a finished request up to
			// schema.CounterLagNS after it ended: waiting that long
			// after the warmup leaves none of it to be counted inside
			// the point, whose count of finished requests is then
			// held to the requests it sent and the preflight probe
			// (schema's serverTally.elsewhere).
			_ = sleepUntil(ctx, time.Now().Add(time.Duration(schema.CounterLagNS))) // interrupted: the loop stops above
		}
		t0 := r.now()
		scrapedAround(ctx, s.scr, s.gpu, c, func() { r.runCell(ctx, c, nos[i]) })
		if c.phase == schema.PhaseWarmup {
			r.keeper.warmed(r.now() - t0)
		}
		if c.phase == schema.PhaseMeasure {
			res.Cells = append(res.Cells, c.stats.summary(c, time.Duration(r.now()-t0)))
		}
	}
}

// finish closes the records file and completes the manifest with what the
// run measured (its end, why it stopped early, its notes, the prompt
// counts, the scrapes and server state), writes it over the in-progress
// one (temp file, then rename) and reports the last progress. ctx is the
// run's (ended early by too many failures), userCtx the caller's.
func (s *capturing) finish(userCtx, ctx context.Context, res *Result) (*Result, error) {
	r, o, m := s.r, s.o, s.m
	sinkErr := r.sink.close()

	res.Records = r.sink.count()
	res.Chunks = r.totalChunks.Load()
	m.FinishTime = time.Now().UTC().Format(time.RFC3339Nano)
	m.Incomplete = false
	m.IncompleteReason = ""
	res.Failures = r.failures.counts()
	var tooMany error
	if userCtx.Err() == nil && ctx.Err() != nil {
		tooMany = context.Cause(ctx)
	}
	if ctx.Err() != nil {
		res.Stopped = true
		m.Incomplete = true
		what := "interrupted"
		if tooMany != nil {
			what = "stopped"
		}
		m.IncompleteReason = fmt.Sprintf("%s after %s: %v; sending stopped, in-flight requests given %s to finish", what, time.Since(r.start).Round(time.Millisecond), context.Cause(ctx), o.Grace)
	}
	r.noteTransport(m)
	// A request the server did not count takes the count of the same
	// prompt in another answer, learned perhaps after it was written.
	uncountedFailed, uncountedOK, cerr := r.counts.resolve(filepath.Join(o.OutDir, schema.RecordsFile))
	r.counts.noteRecords(m, uncountedFailed, uncountedOK, cerr)
	if r.usageMissing.Load() {
		m.Client.TokenCounts = "chunk-count-estimate"
		setNote(m, "token_counts", "some responses carried no usage; their output_tokens count content chunks, an estimate")
	} else {
		m.Client.TokenCounts = "server-usage"
	}
	if sinkErr != nil {
		m.Incomplete = true
		m.IncompleteReason = "records could not be written completely: " + sinkErr.Error()
	}
	s.scr.record(m)
	res.EnergyWarning = s.gpu.record(m)
	r.keeper.record(m)
	// Fields measured during the run (token_counts) may now be stated.
	if err := r.finishManifest(m, nil, nil); err != nil {
		return res, err
	}
	if err := writeManifest(o.OutDir, m); err != nil {
		return res, err
	}
	if o.Progress != nil {
		o.Progress(r.snapshot(true))
	}
	if sinkErr != nil {
		return res, fmt.Errorf("capture failed: %w", sinkErr)
	}
	return res, tooMany
}

// noteTransport states in the manifest's notes how the requests went over
// the wire: the HTTP versions answered (with Options.HTTP2), the requests
// resent on a fresh connection after the server closed a kept-alive one,
// and how many streams carried the per-chunk usage asked for.
func (r *runner) noteTransport(m *schema.Manifest) {
	o := r.o
	if o.HTTP2 {
		setNote(m, "http", fmt.Sprintf("HTTP/2 allowed where the server offered it (TLS ALPN): %d responses over HTTP/2, %d over HTTP/1.x; "+
			"over HTTP/2 a chunk is timed when its stream's reader receives it from the connection's reader goroutine, "+
			"a few microseconds after the socket read when the client is not saturated", r.http2Responses.Load(), r.http1Responses.Load()))
	}
	if n := r.resent.Load(); n > 0 {
		setNote(m, "connections", fmt.Sprintf("the server closed kept-alive connections after answers (its headers said keep-alive): %d request(s) found their reused connection closed before any byte of an answer, "+
			"so the server never saw them, and were sent again at once on a fresh connection (their records count it in retries, sent_ns is the resend's); "+
			"from the first such request on, every request opened its own connection, so connection set-up is inside its TTFT", n))
	}
	if o.Request.PerChunkUsage {
		if n, k := r.okStreams.Load(), r.perChunk.Load(); k == 0 {
			setNote(m, "per_chunk_usage", fmt.Sprintf("stream_options.continuous_usage_stats requested, but none of the %d ok streams carried usage on every content chunk: no chunk_tokens recorded", n))
		} else {
			setNote(m, "per_chunk_usage", fmt.Sprintf("stream_options.continuous_usage_stats requested; chunk_tokens derived from cumulative usage on %d of %d ok streams (the others' usage was missing or inconsistent)", k, n))
		}
	}
}

func prepareDir(dir string) error {
	entries, err := os.ReadDir(dir)
	switch {
	case errors.Is(err, os.ErrNotExist):
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return fmt.Errorf("create run directory: %w", err)
		}
		return nil
	case err != nil:
		return fmt.Errorf("create run directory: %w", err)
	case len(entries) > 0:
		return errcond.Errorf(ErrNotEmpty, "capture failed: create run directory %s: exists and is not empty (refusing to overwrite)", dir)
	}
	return nil
}

// setInputUnit states the unit of the synthetic input lengths: tokens of
// the served model when capture fitted the prompts with its tokenizer,
// else words.
func setInputUnit(m *schema.Manifest, fitted bool) {
	if d := m.Workload.InputTokens; d != nil {
		d.Unit = schema.LengthWords
		if fitted {
			d.Unit = schema.LengthTokens
		}
	}
}

// scrapedAround runs a cell inside its scrapes. The engine's scrapes sit
// inside the accelerators': the engine scrape after a point must follow
// its last end within schema.AfterScrapeSlackNS, while the accelerator
// scrape after it first waits out the readings' max age.
func scrapedAround(ctx context.Context, scr *scraper, gpu *gpuScraper, c *cell, run func()) {
	gpu.around(ctx, c, func() { scr.around(ctx, c, run) })
}
