package capture

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benchseal/benchseal/schema"
)

// ErrCapture is the root of the errors Run returns for a failed capture.
var ErrCapture = errors.New("capture failed")

// ClientName is the manifest's client.name for runs this package writes.
const ClientName = "benchseal-capture"

// ProgressReason is the incomplete_reason of a manifest while its capture
// is still running; a directory left with it was killed mid-run.
const ProgressReason = "capture in progress (the client stopped before finishing the run)"

// maxSyntheticPool bounds the distinct synthetic prompts of one shape;
// longer points cycle through them.
const maxSyntheticPool = 4096

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
	// Grace is how long in-flight requests may finish after ctx ends
	// before they are cancelled (recorded as cancelled).
	Grace time.Duration
	// FlushInterval is how often records reach the file (default 200ms).
	FlushInterval time.Duration
	// Progress, when set, is called from one goroutine every
	// ProgressInterval (default 500ms) and once at the end.
	Progress         func(Progress)
	ProgressInterval time.Duration
	// HTTPClient overrides the client built by NewHTTPClient.
	HTTPClient *http.Client
}

// Progress is a snapshot of a running capture.
type Progress struct {
	Point              string
	Cell, Cells        int // current (point, repeat) cell, 1-based, and total
	Repeat             int
	Phase              string
	Sent, Done, Failed int64 // in the current phase
	InFlight           int64
	// OfferedRate is the point's rate (0 in concurrency mode);
	// AchievedRate is sends per second so far in the phase.
	OfferedRate, AchievedRate float64
	Elapsed                   time.Duration // since the run started
	// Remaining estimates the rest of the current phase (-1: unknown).
	Remaining time.Duration
	Final     bool
}

// CellStats summarises one measured (point, repeat) cell.
type CellStats struct {
	Point    string
	Repeat   int
	Requests int64
	ByStatus map[string]int64
	Chunks   int64
	// OfferedRate is a rate point's rate. AchievedRate is, for a rate
	// point, sends per second over the span of sends; for a concurrency
	// point, requests ended per second of the cell.
	OfferedRate, AchievedRate float64
	// SendLag is sent_ns − scheduled_ns over measured requests of a rate
	// point: p50, p99 and max (ns).
	SendLagP50, SendLagP99, SendLagMax int64
	Duration                           time.Duration
}

// Result is what Run reports.
type Result struct {
	Dir      string
	Manifest *schema.Manifest
	Cells    []CellStats
	Records  int64
	Chunks   int64
	// Stopped is set when ctx ended the run early.
	Stopped bool
}

// NewHTTPClient returns the HTTP/1.1 client capture uses: no proxy, no
// transparent compression (which would delay chunks), idle connections
// kept for maxConns streams.
func NewHTTPClient(maxConns int) *http.Client {
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          0,
		MaxIdleConnsPerHost:   maxConns + 16,
		IdleConnTimeout:       90 * time.Second,
		DisableCompression:    true,
		ForceAttemptHTTP2:     false,
		WriteBufferSize:       32 << 10,
		ReadBufferSize:        32 << 10,
		ExpectContinueTimeout: 0,
	}
	return &http.Client{Transport: tr}
}

var (
	errTimeout       = errors.New("request timeout")
	errPlannedCancel = errors.New("cancelled by plan")
	errRunStopped    = errors.New("run stopped")
	errDrain         = errors.New("response drained")
)

type runner struct {
	o       *Options
	start   time.Time
	client  *http.Client
	url     string
	items   []Item
	bodies  [][]byte
	sink    *sink
	reqBase context.Context

	usageMissing atomic.Bool
	totalChunks  atomic.Int64

	// current phase counters, for progress
	cur struct {
		sync.Mutex
		point, phase    string
		cell, repeat    int
		rate            float64
		phaseStart      int64
		expectedEnd     int64 // ns since run start, 0 unknown
		requests        int64
		sent, done, bad atomic.Int64
	}
	inflight atomic.Int64
	cells    int
}

func (r *runner) now() int64 { return int64(time.Since(r.start)) }

// cell is one phase of one (point, repeat).
type cell struct {
	idx      int // point index
	pt       *schema.Point
	repeat   int
	phase    string
	n        int           // requests (0: until dur)
	dur      time.Duration // 0: until n
	items    []int         // global item indices, in send order, cycled
	sched    []int64       // rate mode: offsets from the phase start
	cancelAt []bool        // planned cancellation per request
	stats    *cellAcc
}

type cellAcc struct {
	mu       sync.Mutex
	byStatus map[string]int64
	chunks   int64
	lags     []int64
	first    int64
	last     int64
	n        int64
}

func (a *cellAcc) add(rec *schema.Record) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.byStatus[rec.Status]++
	a.chunks += int64(len(rec.ChunksNS))
	if rec.ScheduledNS != nil {
		a.lags = append(a.lags, rec.SentNS-*rec.ScheduledNS)
	}
	if rec.Status != schema.StatusRejected {
		if a.n == 0 || rec.SentNS < a.first {
			a.first = rec.SentNS
		}
		a.last = max(a.last, rec.SentNS)
		a.n++
	}
}

// Run captures a benchmark run into o.OutDir. When ctx ends, sending stops,
// in-flight requests get o.Grace to finish and the run is finished as
// incomplete; Run then returns the result and no error. An error means the
// run directory could not be written or the options were wrong.
func Run(ctx context.Context, o Options) (*Result, error) {
	if err := o.Plan.Normalize(); err != nil {
		return nil, err
	}
	if o.OutDir == "" {
		return nil, fmt.Errorf("%w: no output directory", ErrCapture)
	}
	if o.Request.Model == "" {
		return nil, fmt.Errorf("%w: no model", ErrCapture)
	}
	if o.Request.API == "" {
		o.Request.API = APIChat
	}
	base := strings.TrimRight(o.Endpoint, "/")
	base = strings.TrimSuffix(base, "/v1")
	if !strings.HasPrefix(base, "http://") && !strings.HasPrefix(base, "https://") {
		return nil, fmt.Errorf("%w: endpoint %q: want an http:// or https:// URL", ErrCapture, o.Endpoint)
	}
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
	r := &runner{o: &o, url: base + path, client: o.HTTPClient}
	if r.client == nil {
		r.client = NewHTTPClient(maxConns)
		defer r.client.CloseIdleConnections()
	}
	cells, err := r.buildWorkload()
	if err != nil {
		return nil, err
	}

	m := r.baseManifest()
	var wl bytes.Buffer
	sum, err := EncodeWorkload(&wl, r.items)
	if err != nil {
		return nil, err
	}
	m.Workload.SHA256 = sum
	m.Workload.Items = len(r.items)
	r.markStart(m) // provisional: validation needs a dated manifest
	m.Incomplete = true
	m.IncompleteReason = ProgressReason
	if err := finishManifest(m, o.Overlay, o.Sets); err != nil {
		return nil, err
	}
	// Refuse before sending anything or touching the output directory when
	// the publisher's settings would make an invalid manifest.
	if probs := schema.ValidateManifest(m, schema.ManifestFile); len(probs) > 0 {
		return nil, fmt.Errorf("%w: the manifest would be invalid (state it with --set or --manifest): %w",
			ErrCapture, &schema.ValidationError{Problems: probs})
	}

	if err := prepareDir(o.OutDir); err != nil {
		return nil, err
	}
	if o.Probe {
		si := ProbeServer(ctx, r.client, base, o.APIKey)
		applyServerInfo(m, si)
		if err := finishManifest(m, o.Overlay, o.Sets); err != nil {
			return nil, err
		}
	}
	if err := schema.WriteFileAtomic(filepath.Join(o.OutDir, schema.WorkloadFile), wl.Bytes(), 0o644); err != nil {
		return nil, err
	}
	r.markStart(m) // the run's t=0, just before the first request
	if err := writeManifest(o.OutDir, m); err != nil {
		return nil, err
	}
	r.sink, err = newSink(filepath.Join(o.OutDir, schema.RecordsFile), o.FlushInterval)
	if err != nil {
		return nil, err
	}

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

	progDone := make(chan struct{})
	progStop := make(chan struct{})
	if o.Progress != nil {
		iv := o.ProgressInterval
		if iv <= 0 {
			iv = 500 * time.Millisecond
		}
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
	} else {
		close(progDone)
	}

	res := &Result{Dir: o.OutDir, Manifest: m}
	r.cells = 0
	for _, c := range cells {
		if c.phase == schema.PhaseMeasure {
			r.cells++
		}
	}
	cellNo := 0
	for _, c := range cells {
		if ctx.Err() != nil {
			break
		}
		if c.phase == schema.PhaseMeasure {
			cellNo++
		}
		t0 := r.now()
		r.runCell(ctx, c, cellNo)
		if c.phase == schema.PhaseMeasure {
			res.Cells = append(res.Cells, c.stats.summary(c, time.Duration(r.now()-t0)))
		}
	}
	close(progStop)
	<-progDone
	sinkErr := r.sink.close()

	res.Records = r.sink.count()
	res.Chunks = r.totalChunks.Load()
	m.FinishTime = time.Now().UTC().Format(time.RFC3339Nano)
	m.Incomplete = false
	m.IncompleteReason = ""
	if ctx.Err() != nil {
		res.Stopped = true
		m.Incomplete = true
		cause := context.Cause(ctx)
		m.IncompleteReason = fmt.Sprintf("interrupted after %s: %v; sending stopped, in-flight requests given %s to finish", time.Since(r.start).Round(time.Millisecond), cause, grace)
	}
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
	// Fields measured during the run (token_counts) may now be stated.
	if err := finishManifest(m, nil, nil); err != nil {
		return res, err
	}
	if err := writeManifest(o.OutDir, m); err != nil {
		return res, err
	}
	if o.Progress != nil {
		o.Progress(r.snapshot(true))
	}
	if sinkErr != nil {
		return res, fmt.Errorf("%w: %w", ErrCapture, sinkErr)
	}
	return res, nil
}

func setNote(m *schema.Manifest, k, v string) {
	if m.Notes == nil {
		m.Notes = map[string]string{}
	}
	m.Notes[k] = v
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
		return fmt.Errorf("%w: create run directory %s: exists and is not empty (refusing to overwrite)", ErrCapture, dir)
	}
	return nil
}

func writeManifest(dir string, m *schema.Manifest) error {
	b, err := schema.MarshalDocument(m)
	if err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	return schema.WriteFileAtomic(filepath.Join(dir, schema.ManifestFile), b, 0o644)
}

func newRunID() string {
	var b [12]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// baseManifest fills what capture knows before the run.
func (r *runner) baseManifest() *schema.Manifest {
	o := r.o
	m := &schema.Manifest{}
	if o.Manifest != nil {
		*m = *o.Manifest
		m.Unknown = slices.Clone(o.Manifest.Unknown)
	}
	m.Schema = schema.ManifestSchemaV1
	if m.RunID == "" {
		m.RunID = newRunID()
	}
	if m.Evidence == "" {
		m.Evidence = schema.EvidenceSelfRun
	}
	m.Client.Name = ClientName
	if o.Request.Stream {
		m.Client.Boundary = schema.BoundaryClientStreaming
	} else {
		m.Client.Boundary = schema.BoundaryNonStreaming
	}
	seed := o.Plan.Seed
	m.Client.Seed = &seed
	m.Model.Name = o.Request.Model
	m.Decoding.Streaming = o.Request.Stream
	m.Decoding.Temperature = o.Request.Temperature
	m.Decoding.Seed = o.Request.Seed
	if o.Request.API == APICompletions {
		m.Decoding.Endpoint = "/v1/completions"
	} else {
		m.Decoding.Endpoint = "/v1/chat/completions"
	}
	outs := map[int]bool{}
	ins := map[int]bool{}
	for _, it := range r.items {
		outs[it.OutputTokens] = true
		ins[it.InputTokens] = true
	}
	if len(outs) == 1 {
		for v := range outs {
			m.Decoding.MaxTokens = v
			if o.Request.ForceLength {
				m.Decoding.MinTokens = v
			}
		}
	}
	m.Decoding.IgnoreEOS = o.Request.ForceLength
	if o.Request.ForceLength {
		setNote(m, "decoding", "every request sets max_tokens to its item's output_tokens, and min_tokens = max_tokens and ignore_eos = true to force the output length")
	} else {
		setNote(m, "decoding", "every request sets max_tokens to its item's output_tokens; the server may stop earlier at end of sequence")
	}
	if o.Request.PerChunkUsage {
		setNote(m, "per_chunk_usage", "stream_options.continuous_usage_stats requested; chunk_tokens derived from cumulative usage where consistent")
	}
	m.Workload.Dataset = o.Dataset
	m.Workload.InputTokens = lengthDist(r.items, func(it *Item) int { return it.InputTokens })
	m.Workload.OutputTokens = lengthDist(r.items, func(it *Item) int { return it.OutputTokens })
	if o.Prompts == nil {
		m.Workload.Description = "synthetic prompts of random common English words, one word per intended token, generated from the plan seed"
		if m.Workload.Dataset == "" {
			m.Workload.Dataset = "synthetic"
		}
		m.Workload.InputTokens.Kind = "fixed"
		if len(ins) > 1 {
			m.Workload.InputTokens.Kind = "dataset"
		}
	} else if m.Workload.Description == "" {
		m.Workload.Description = fmt.Sprintf("%d prompts from %s", len(o.Prompts), o.Dataset)
	}
	p := &o.Plan
	m.Load.Mode = p.Mode
	m.Load.Points = slices.Clone(p.Points)
	m.Load.Warmup = p.Warmup
	m.Load.Repeats = p.Repeats
	m.Load.RequestTimeout = p.RequestTimeout
	m.Load.MaxOutstanding = p.MaxOutstanding
	if c := p.Cancel; c != nil && c.Fraction > 0 {
		setNote(m, "cancellation", fmt.Sprintf("a seeded %.4g fraction of requests is cancelled by the client %s after its send (status cancelled)", c.Fraction, time.Duration(c.After)))
	}
	if p.Mode == schema.ModeRate {
		setNote(m, "schedule", "open loop: each rate point's send times are precomputed from the seed (first at 0, then constant, exponential or gamma gaps); records keep scheduled_ns and sent_ns")
	} else {
		setNote(m, "schedule", "closed loop: each of the point's concurrency workers sends its next request when the previous one ends; no scheduled_ns")
	}
	return m
}

func lengthDist(items []Item, f func(*Item) int) *schema.LengthDist {
	if len(items) == 0 {
		return nil
	}
	d := &schema.LengthDist{Kind: "dataset", Min: f(&items[0]), Max: f(&items[0])}
	var sum int64
	for i := range items {
		v := f(&items[i])
		d.Min = min(d.Min, v)
		d.Max = max(d.Max, v)
		sum += int64(v)
	}
	d.Mean = int(sum / int64(len(items)))
	if d.Max == 0 {
		return nil
	}
	if d.Min == d.Max {
		d.Kind = "fixed"
	}
	return d
}

func applyServerInfo(m *schema.Manifest, si *ServerInfo) {
	if len(si.Answers) > 0 {
		if m.Engine.Server == nil {
			m.Engine.Server = map[string]string{}
		}
		for k, v := range si.Answers {
			m.Engine.Server[k] = v
		}
	}
	if si.Simulator {
		m.Evidence = schema.EvidenceSynthetic
		m.Engine.Name = SimulatorOwner
		if m.Hardware.Accelerator == "" {
			m.Hardware.Accelerator = "none (simulated server)"
			m.Hardware.Driver = "none (simulated server)"
			m.Hardware.Runtime = "none (simulated server)"
		}
		setNote(m, "simulator", "the server identified itself as benchseal's simulator: these are synthetic measurements, not an inference engine's")
	}
	if m.Engine.Name == "" {
		m.Engine.Name = si.EngineName
	}
	if m.Engine.Version == "" {
		m.Engine.Version = si.EngineVersion
	}
}

// markStart takes the run's t=0 from the wall clock and dates m with it.
func (r *runner) markStart(m *schema.Manifest) {
	r.start = time.Now()
	m.EpochUnixNS = r.start.UnixNano()
	m.StartTime = r.start.UTC().Format(time.RFC3339Nano)
	m.FinishTime = m.StartTime
}

// finishManifest applies the publisher's overlay and assignments, then
// lists in m.Unknown every must-state field still empty (and drops from it
// every field now set), so the manifest validates.
func finishManifest(m *schema.Manifest, overlay []byte, sets []string) error {
	if m.Unknown == nil {
		m.Unknown = []string{}
	}
	if err := schema.ApplyOverlay(m, overlay, sets); err != nil {
		return fmt.Errorf("%w: %w", ErrCapture, err)
	}
	m.Unknown = append(m.Unknown, schema.MissingMustState(m)...)
	slices.Sort(m.Unknown)
	m.Unknown = slices.Compact(m.Unknown)
	return nil
}

// buildWorkload makes the items, pre-encodes every request body and lays
// out the cells in run order.
func (r *runner) buildWorkload() ([]*cell, error) {
	o := r.o
	p := &o.Plan
	type pool struct{ measure, warmup []int }
	pools := make([]pool, len(p.Points))
	if o.Prompts != nil {
		for i := range p.Points {
			if p.Points[i].InputTokens != 0 && p.Points[i].InputTokens != p.InputTokens {
				return nil, fmt.Errorf("%w: point %s sets input_tokens, but prompts come from a file", ErrPlan, p.Points[i].Name)
			}
			p.Points[i].InputTokens, p.Points[i].OutputTokens = 0, 0
		}
		r.items = slices.Clone(o.Prompts)
		perm := Order(len(r.items), p.Seed, 1)
		rev := slices.Clone(perm)
		slices.Reverse(rev)
		for i := range pools {
			pools[i] = pool{perm, rev}
		}
	} else {
		type shape struct{ in, out int }
		need := map[shape]int{}
		var order []shape
		for _, pt := range p.Points {
			s := shape{pt.InputTokens, pt.OutputTokens}
			if s.in == 0 {
				return nil, fmt.Errorf("%w: point %s: no prompts file and no input_tokens for synthetic prompts", ErrPlan, pt.Name)
			}
			n := pt.Requests
			if n == 0 || n > maxSyntheticPool {
				n = maxSyntheticPool
			}
			if _, ok := need[s]; !ok {
				order = append(order, s)
			}
			need[s] = max(need[s], n)
		}
		warmN := p.Warmup.Requests
		if warmN == 0 && p.Warmup.Duration > 0 {
			warmN = 256
		}
		warmN = min(warmN, maxSyntheticPool)
		made := map[shape]pool{}
		for k, s := range order {
			h := fnv.New64a()
			fmt.Fprintf(h, "%d/%d", s.in, s.out)
			st := h.Sum64()
			var pl pool
			for _, it := range SyntheticItems(uint64(p.Seed), st, need[s], s.in, s.out) {
				pl.measure = append(pl.measure, len(r.items))
				r.items = append(r.items, it)
			}
			if warmN > 0 {
				for _, it := range SyntheticItems(uint64(p.Seed), st+1+uint64(k)<<32, warmN, s.in, s.out) {
					pl.warmup = append(pl.warmup, len(r.items))
					r.items = append(r.items, it)
				}
			}
			made[s] = pl
		}
		for i, pt := range p.Points {
			pools[i] = made[shape{pt.InputTokens, pt.OutputTokens}]
		}
	}
	if len(r.items) == 0 {
		return nil, errEmptyWorkload
	}
	r.bodies = make([][]byte, len(r.items))
	for i := range r.items {
		b, err := RequestBody(o.Request, &r.items[i])
		if err != nil {
			return nil, fmt.Errorf("%w: %w", ErrCapture, err)
		}
		r.bodies[i] = b
	}

	var cells []*cell
	for rep := 0; rep < p.Repeats; rep++ {
		for i := range p.Points {
			pt := &p.Points[i]
			stream := uint64(i)<<20 | uint64(rep)<<8
			if p.Warmup.Requests > 0 || p.Warmup.Duration > 0 {
				w := &cell{idx: i, pt: pt, repeat: rep, phase: schema.PhaseWarmup,
					n: p.Warmup.Requests, dur: time.Duration(p.Warmup.Duration), items: pools[i].warmup}
				if len(w.items) == 0 {
					w.items = pools[i].measure
				}
				r.layout(w, stream|1)
				cells = append(cells, w)
			}
			c := &cell{idx: i, pt: pt, repeat: rep, phase: schema.PhaseMeasure,
				n: pt.Requests, dur: time.Duration(pt.Duration), items: pools[i].measure}
			r.layout(c, stream|2)
			cells = append(cells, c)
		}
	}
	return cells, nil
}

// layout precomputes a cell's schedule and cancellations from the seed.
func (r *runner) layout(c *cell, stream uint64) {
	p := &r.o.Plan
	c.stats = &cellAcc{byStatus: map[string]int64{}}
	if p.Mode == schema.ModeRate {
		// Repeats use the same schedule, so they differ only by the server.
		sched := uint64(c.idx)<<20 | uint64(len(c.phase))
		c.sched = Schedule(c.pt.Arrival, c.pt.Rate, c.pt.Burstiness, c.n, c.dur, p.Seed, sched)
		c.n = len(c.sched)
	}
	if cp := p.Cancel; cp != nil && cp.Fraction > 0 {
		n := c.n
		if n == 0 {
			n = MaxRequestsPerPoint
			if c.dur > 0 {
				n = min(n, 1<<20)
			}
		}
		c.cancelAt = cancelMask(n, cp.Fraction, p.Seed, stream)
	}
}

func cancelMask(n int, frac float64, seed int64, stream uint64) []bool {
	mask := make([]bool, n)
	h := fnv.New64a()
	var buf [24]byte
	for i := range mask {
		h.Reset()
		putU64(buf[0:], uint64(seed))
		putU64(buf[8:], stream)
		putU64(buf[16:], uint64(i))
		h.Write(buf[:])
		mask[i] = float64(h.Sum64()>>11)/(1<<53) < frac
	}
	return mask
}

func putU64(b []byte, v uint64) {
	for i := range 8 {
		b[i] = byte(v >> (8 * i))
	}
}

func (r *runner) setCurrent(c *cell, cellNo int) {
	r.cur.Lock()
	r.cur.point, r.cur.phase, r.cur.cell, r.cur.repeat = c.pt.Name, c.phase, cellNo, c.repeat
	r.cur.rate = c.pt.Rate
	r.cur.phaseStart = r.now()
	r.cur.requests = int64(c.n)
	r.cur.expectedEnd = 0
	if len(c.sched) > 0 {
		r.cur.expectedEnd = r.cur.phaseStart + c.sched[len(c.sched)-1]
	} else if c.dur > 0 {
		r.cur.expectedEnd = r.cur.phaseStart + int64(c.dur)
	}
	r.cur.sent.Store(0)
	r.cur.done.Store(0)
	r.cur.bad.Store(0)
	r.cur.Unlock()
}

func (r *runner) snapshot(final bool) Progress {
	r.cur.Lock()
	defer r.cur.Unlock()
	now := r.now()
	p := Progress{
		Point: r.cur.point, Cell: r.cur.cell, Cells: r.cells, Repeat: r.cur.repeat, Phase: r.cur.phase,
		Sent: r.cur.sent.Load(), Done: r.cur.done.Load(), Failed: r.cur.bad.Load(),
		InFlight: r.inflight.Load(), OfferedRate: r.cur.rate,
		Elapsed: time.Duration(now), Remaining: -1, Final: final,
	}
	if el := now - r.cur.phaseStart; el > 0 {
		p.AchievedRate = float64(p.Sent) / (float64(el) / 1e9)
	}
	switch {
	case r.cur.expectedEnd > 0:
		p.Remaining = max(0, time.Duration(r.cur.expectedEnd-now))
	case r.cur.requests > 0 && p.Done > 0:
		el := float64(now - r.cur.phaseStart)
		p.Remaining = time.Duration(el / float64(p.Done) * float64(r.cur.requests-p.Done))
	}
	return p
}

// runCell sends one phase and waits for its requests to end.
func (r *runner) runCell(ctx context.Context, c *cell, cellNo int) {
	r.setCurrent(c, cellNo)
	start := r.now()
	var wg sync.WaitGroup
	if c.sched != nil {
		r.runOpenLoop(ctx, c, start, &wg)
	} else {
		deadline := int64(0)
		if c.dur > 0 {
			deadline = start + int64(c.dur)
		}
		var next atomic.Int64
		for range c.pt.Concurrency {
			wg.Go(func() {
				for ctx.Err() == nil {
					k := int(next.Add(1) - 1)
					if c.n > 0 && k >= c.n {
						return
					}
					if deadline > 0 && r.now() >= deadline {
						return
					}
					r.do(c, k, nil)
				}
			})
		}
	}
	wg.Wait()
}

// preciseWindow is how much of each wait before an open-loop send is
// spent in preciseSleep rather than on a runtime timer (whose wakeups are
// quantised to milliseconds).
const preciseWindow = 2 * time.Millisecond

func (r *runner) runOpenLoop(ctx context.Context, c *cell, start int64, wg *sync.WaitGroup) {
	capN := int64(r.o.Plan.MaxOutstanding)
	defer lockSenderThread()()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for k, off := range c.sched {
		target := start + off
		// Coarse wait on a runtime timer (cancellable), then a precise
		// kernel sleep for the last preciseWindow.
		if d := time.Duration(target-r.now()) - preciseWindow; d > 0 {
			timer.Reset(d)
			select {
			case <-timer.C:
			case <-ctx.Done():
				return
			}
		}
		if ctx.Err() != nil {
			return
		}
		preciseSleep(time.Duration(target - r.now()))
		sched := target
		if capN > 0 && r.inflight.Load() >= capN {
			now := r.now()
			rec := r.newRecord(c, k)
			rec.ScheduledNS = &sched
			rec.SentNS, rec.EndNS = now, now
			rec.Status = schema.StatusRejected
			rec.Error = fmt.Sprintf("client: %d requests outstanding (max_outstanding); not sent", capN)
			r.cur.sent.Add(1)
			r.finish(c, rec)
			continue
		}
		r.inflight.Add(1)
		wg.Go(func() {
			r.do(c, k, &sched)
		})
	}
}

func (r *runner) newRecord(c *cell, k int) *schema.Record {
	item := int64(c.items[k%len(c.items)])
	ph := "m"
	if c.phase == schema.PhaseWarmup {
		ph = "w"
	}
	return &schema.Record{
		ID:       fmt.Sprintf("%s.r%d.%s%d", c.pt.Name, c.repeat, ph, k),
		Point:    c.pt.Name,
		Repeat:   c.repeat,
		Phase:    c.phase,
		Item:     &item,
		ChunksNS: []int64{},
	}
}

func (r *runner) finish(c *cell, rec *schema.Record) {
	if rec.Status != schema.StatusOK {
		r.cur.bad.Add(1)
	}
	r.cur.done.Add(1)
	r.totalChunks.Add(int64(len(rec.ChunksNS)))
	if c.phase == schema.PhaseMeasure {
		c.stats.add(rec)
	}
	r.sink.add(rec)
}

// do sends request k of cell c and records it. sched is the intended send
// time (open loop) or nil.
func (r *runner) do(c *cell, k int, sched *int64) {
	if sched == nil {
		r.inflight.Add(1)
	}
	defer r.inflight.Add(-1)
	rec := r.newRecord(c, k)
	rec.ScheduledNS = sched
	itemIdx := int(*rec.Item)
	it := &r.items[itemIdx]

	ctx, cancel := context.WithCancelCause(r.reqBase)
	defer cancel(nil)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(r.bodies[itemIdx]))
	if err != nil {
		panic(err) // the URL was checked in Run
	}
	req.Header.Set("Content-Type", "application/json")
	if r.o.Request.Stream {
		req.Header.Set("Accept", "text/event-stream")
	}
	if r.o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+r.o.APIKey)
	}
	r.cur.sent.Add(1)
	rec.SentNS = r.now()
	// The timeout and the planned cancellation count from the send time
	// just taken, so end_ns − sent_ns is never shorter than either.
	if to := time.Duration(r.o.Plan.RequestTimeout); to > 0 {
		t := time.AfterFunc(to, func() { cancel(errTimeout) })
		defer t.Stop()
	}
	if c.cancelAt != nil && k < len(c.cancelAt) && c.cancelAt[k] {
		t := time.AfterFunc(time.Duration(r.o.Plan.Cancel.After), func() { cancel(errPlannedCancel) })
		defer t.Stop()
	}
	resp, err := r.client.Do(req)
	if err != nil {
		rec.EndNS = r.now()
		rec.Status, rec.Error = failure(ctx, err)
		r.fillTokens(rec, it, nil)
		r.finish(c, rec)
		return
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		rec.EndNS = r.now()
		rec.Status = schema.StatusError
		if resp.StatusCode == http.StatusTooManyRequests {
			rec.Status = schema.StatusRejected
		}
		rec.Error = fmt.Sprintf("server: HTTP %s: %s", resp.Status, truncate(strings.TrimSpace(string(b)), 300))
		r.fillTokens(rec, it, nil)
		r.finish(c, rec)
		return
	}
	if r.o.Request.Stream {
		r.readStream(ctx, resp.Body, rec, it)
		if rec.Status == schema.StatusOK {
			// Read the end of the HTTP response after [DONE] so the
			// connection can be reused, but never wait long for it.
			t := time.AfterFunc(250*time.Millisecond, func() { cancel(errDrain) })
			io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			t.Stop()
		}
	} else {
		r.readWhole(ctx, resp.Body, rec, it)
	}
	r.finish(c, rec)
}

func failure(ctx context.Context, err error) (status, msg string) {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errTimeout):
		return schema.StatusTimeout, "client: request timeout"
	case errors.Is(cause, errPlannedCancel):
		return schema.StatusCancelled, "client: cancelled by plan"
	case errors.Is(cause, errRunStopped):
		return schema.StatusCancelled, "client: run stopped (interrupted, grace period over)"
	}
	return schema.StatusError, "client: " + err.Error()
}

var ssePool = sync.Pool{New: func() any { return NewSSEReader(nil, nil) }}

// Reset makes s read a new stream with the same buffer.
func (s *SSEReader) Reset(rd io.Reader, now func() int64) {
	buf := s.buf
	*s = SSEReader{r: rd, now: now, buf: buf, data: s.data[:0]}
	if s.now == nil {
		s.now = func() int64 { return 0 }
	}
}

func (r *runner) readStream(ctx context.Context, body io.Reader, rec *schema.Record, it *Item) {
	sr := ssePool.Get().(*SSEReader)
	sr.Reset(body, r.now)
	defer func() {
		sr.Reset(nil, nil)
		ssePool.Put(sr)
	}()
	hint := 0
	if it.OutputTokens > 0 {
		hint = min(it.OutputTokens, 4096)
	}
	sres := ReadStream(sr, hint)
	rec.ChunksNS = sres.Chunks
	for i := range rec.ChunksNS {
		rec.ChunksNS[i] -= rec.SentNS
	}
	switch {
	case sres.Err != "":
		rec.Status, rec.Error = schema.StatusError, sres.Err
	case sres.ReadErr != nil:
		rec.Status, rec.Error = failure(ctx, sres.ReadErr)
	case !sres.Done && !sres.Finished:
		rec.Status, rec.Error = schema.StatusError, "stream ended before [DONE] or a finish_reason"
	case len(rec.ChunksNS) == 0:
		rec.Status, rec.Error = schema.StatusError, "no content in the response"
	default:
		rec.Status = schema.StatusOK
	}
	rec.EndNS = sres.End
	if rec.EndNS == 0 {
		rec.EndNS = r.now()
	}
	if n := len(rec.ChunksNS); n > 0 {
		rec.EndNS = max(rec.EndNS, rec.SentNS+rec.ChunksNS[n-1])
	}
	rec.EndNS = max(rec.EndNS, rec.SentNS)
	r.fillTokens(rec, it, sres.Usage)
	if r.o.Request.PerChunkUsage && rec.Status == schema.StatusOK {
		rec.ChunkTokens = sres.chunkTokens()
	}
}

// StreamResult is what ReadStream saw in one response stream.
type StreamResult struct {
	// Chunks holds the clock time of each content-bearing event.
	Chunks []int64
	// Cumulative holds, per content chunk, the completion_tokens of the
	// usage the chunk carried (vLLM continuous_usage_stats), or is nil
	// when some content chunk carried none.
	Cumulative []int64
	// Usage is the last usage seen.
	Usage *Usage
	// Done: "[DONE]" was read; Finished: a finish_reason was seen.
	Done, Finished bool
	// Err is the message of an in-band error; reading stops there.
	Err string
	// ReadErr is a transport error (not io.EOF).
	ReadErr error
	// End is the clock time of the event that ended the stream ([DONE] or
	// the error), or 0 when the stream just ended.
	End int64
	// KeepAlives counts comment lines.
	KeepAlives int
}

// ReadStream reads an OpenAI-compatible event stream to its end, an
// in-band error or "[DONE]". Role-only, usage-only, empty and
// finish-only chunks, comments and "[DONE]" are not content. hint sizes
// the chunk slice.
func ReadStream(sr *SSEReader, hint int) StreamResult {
	res := StreamResult{Chunks: make([]int64, 0, hint)}
	cumOK := true
	for {
		ev, err := sr.Next()
		if err != nil {
			if err != io.EOF {
				res.ReadErr = err
			}
			break
		}
		res.KeepAlives += ev.Comments
		ch := ParseChunk(ev)
		if ch.Err != "" {
			res.Err, res.End = ch.Err, ev.At
			break
		}
		if ch.Usage != nil {
			u := *ch.Usage
			res.Usage = &u
		}
		if ch.Content {
			res.Chunks = append(res.Chunks, ev.At)
			if cumOK && ch.Usage != nil {
				res.Cumulative = append(res.Cumulative, ch.Usage.CompletionTokens)
			} else {
				cumOK = false
			}
		}
		res.Finished = res.Finished || ch.Finish
		if ch.Done {
			res.Done, res.End = true, ev.At
			break
		}
	}
	if !cumOK {
		res.Cumulative = nil
	}
	return res
}

// chunkTokens derives per-chunk token counts from cumulative usage, or nil
// when they do not add up to the final usage.
func (s *StreamResult) chunkTokens() []int64 {
	if len(s.Cumulative) == 0 || len(s.Cumulative) != len(s.Chunks) || s.Usage == nil ||
		s.Cumulative[len(s.Cumulative)-1] != s.Usage.CompletionTokens {
		return nil
	}
	ct := make([]int64, len(s.Cumulative))
	prev := int64(0)
	for i, v := range s.Cumulative {
		ct[i] = v - prev
		if ct[i] < 0 {
			return nil
		}
		prev = v
	}
	return ct
}

func (r *runner) readWhole(ctx context.Context, body io.Reader, rec *schema.Record, it *Item) {
	b, err := io.ReadAll(io.LimitReader(body, MaxEventSize))
	rec.EndNS = r.now()
	if err != nil {
		rec.Status, rec.Error = failure(ctx, err)
		r.fillTokens(rec, it, nil)
		return
	}
	ch := ParseChunk(&Event{Data: b, At: rec.EndNS})
	switch {
	case ch.Err != "":
		rec.Status, rec.Error = schema.StatusError, ch.Err
	case !ch.Content:
		rec.Status, rec.Error = schema.StatusError, "no content in the response"
	default:
		rec.Status = schema.StatusOK
		rec.ChunksNS = append(rec.ChunksNS, rec.EndNS-rec.SentNS)
	}
	r.fillTokens(rec, it, ch.Usage)
}

func (r *runner) fillTokens(rec *schema.Record, it *Item, usage *Usage) {
	switch {
	case usage != nil && usage.PromptTokens > 0:
		rec.InputTokens = usage.PromptTokens
	case it.InputTokens > 0:
		rec.InputTokens = int64(it.InputTokens)
	default:
		rec.InputTokens = int64(approxTokens(it))
	}
	if usage != nil {
		rec.OutputTokens = usage.CompletionTokens
		if rec.Status == schema.StatusOK && rec.OutputTokens == 0 {
			rec.OutputTokens = int64(len(rec.ChunksNS))
			r.usageMissing.Store(true)
		}
		return
	}
	rec.OutputTokens = int64(len(rec.ChunksNS))
	if rec.Status == schema.StatusOK {
		r.usageMissing.Store(true)
	}
}

// approxTokens estimates a prompt's tokens as its whitespace-separated
// words when the server reports no usage.
func approxTokens(it *Item) int {
	if it.Prompt != "" {
		return len(strings.Fields(it.Prompt))
	}
	n := 0
	for _, m := range it.Messages {
		n += len(strings.Fields(m.Content))
	}
	return n
}

func (a *cellAcc) summary(c *cell, d time.Duration) CellStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := CellStats{Point: c.pt.Name, Repeat: c.repeat, ByStatus: map[string]int64{}, Chunks: a.chunks,
		OfferedRate: c.pt.Rate, Duration: d}
	for k, v := range a.byStatus {
		s.ByStatus[k] = v
		s.Requests += v
	}
	switch {
	case c.sched == nil && d > 0:
		s.AchievedRate = float64(s.Requests) / d.Seconds()
	case a.n >= 2 && a.last > a.first:
		s.AchievedRate = float64(a.n-1) / (float64(a.last-a.first) / 1e9)
	}
	if len(a.lags) > 0 {
		l := slices.Clone(a.lags)
		slices.Sort(l)
		s.SendLagP50 = nearestRank(l, 50)
		s.SendLagP99 = nearestRank(l, 99)
		s.SendLagMax = l[len(l)-1]
	}
	return s
}

// nearestRank is the nearest-rank percentile of sorted v.
func nearestRank(v []int64, p int) int64 {
	i := (p*len(v) + 99) / 100
	return v[max(1, i)-1]
}
