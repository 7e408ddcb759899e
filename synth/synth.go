package synth

import (
	"container/heap"
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/benchseal/benchseal/schema"
)

// ModelVersion identifies the synthetic server model; it changes whenever
// the same options would give different bytes.
const ModelVersion = "1"

// DefaultEpochUnixNS is the wall-clock time of t=0 of every synthetic run:
// 2026-01-01T00:00:00Z. It is fixed so that runs are reproducible.
const DefaultEpochUnixNS int64 = 1767225600_000000000

// Options configures a synthetic run.
type Options struct {
	// Seed selects the pseudo-random stream (PCG).
	Seed uint64
	// Requests is the number of measured requests over all points and
	// repeats; each point×repeat gets an equal share (the first ones one
	// more when it does not divide).
	Requests int
	// Mode is schema.ModeConcurrency (closed loop) or schema.ModeRate
	// (open loop, Poisson arrivals).
	Mode string
	// Points are the concurrency levels (integers) or the offered rates in
	// requests per second.
	Points []float64
	// Repeats is the number of measured repeats of every point.
	Repeats int
	// Warmup is the number of warmup requests run before each point.
	Warmup int
	// WorkloadItems is the number of workload items (workload.jsonl lines)
	// requests draw from.
	WorkloadItems int
	// EpochUnixNS is the wall-clock time of the run's t=0.
	EpochUnixNS int64
}

// DefaultOptions is a small but rich demo run: three concurrency points
// (one past the server's batch limit) × two repeats, about 2000 requests.
func DefaultOptions() Options {
	return Options{
		Seed:          1,
		Requests:      1800,
		Mode:          schema.ModeConcurrency,
		Points:        []float64{4, 16, 64},
		Repeats:       2,
		Warmup:        8,
		WorkloadItems: 1000,
		EpochUnixNS:   DefaultEpochUnixNS,
	}
}

// DefaultRatePoints are the offered rates used when Mode is rate and no
// points are given: light, near and past the server's capacity.
var DefaultRatePoints = []float64{8, 24, 48}

// The server model: a continuous-batching engine with a fixed number of
// batch slots, FIFO admission, prefill time growing with prompt length and
// load, and a decode step growing with the batch size.
const (
	slots           = 48
	prefillBase     = 18 * time.Millisecond
	prefillPerToken = 40 * time.Microsecond
	stepBase        = 8 * time.Millisecond
	stepPerSeq      = 350 * time.Microsecond
	netDelay        = 300 * time.Microsecond
	requestTimeout  = 30 * time.Second
	maxOutstanding  = 256
	maxTokens       = 512
	segmentGap      = time.Second

	pOneToken  = 0.02
	pEarlyEOS  = 0.10
	pMultiTok  = 0.30
	pStall     = 0.005
	pError     = 0.004
	pCancel    = 0.002
	pRejectRnd = 0.002
	pHang      = 0.003
)

// Validate checks the options.
func (o *Options) Validate() error {
	var errs []error
	if o.Requests < 1 {
		errs = append(errs, errors.New("requests must be ≥ 1"))
	}
	if o.Mode != schema.ModeConcurrency && o.Mode != schema.ModeRate {
		errs = append(errs, fmt.Errorf("mode must be %q or %q, got %q", schema.ModeConcurrency, schema.ModeRate, o.Mode))
	}
	if len(o.Points) == 0 {
		errs = append(errs, errors.New("at least one point is needed"))
	}
	seen := map[string]bool{}
	for _, p := range o.Points {
		switch {
		case math.IsNaN(p) || math.IsInf(p, 0) || p <= 0:
			errs = append(errs, fmt.Errorf("point %v: must be a finite number > 0", p))
		case o.Mode == schema.ModeConcurrency && (p != math.Trunc(p) || p > 100000):
			errs = append(errs, fmt.Errorf("point %v: concurrency must be a whole number ≤ 100000", p))
		}
		if n := o.pointName(p); seen[n] {
			errs = append(errs, fmt.Errorf("point %v is given twice", p))
		} else {
			seen[n] = true
		}
	}
	if n := len(o.Points) * o.Repeats; n > 0 && o.Requests >= 1 && o.Requests%n != 0 {
		// The manifest declares one request count per point, the same for
		// every repeat, and validate holds each point × repeat to it.
		lo := o.Requests / n * n
		hint := fmt.Sprintf("%d", lo+n)
		if lo > 0 {
			hint = fmt.Sprintf("%d or %d", lo, lo+n)
		}
		errs = append(errs, fmt.Errorf("requests %d is not a multiple of %d points × %d repeats: use %s", o.Requests, len(o.Points), o.Repeats, hint))
	}
	if o.Repeats < 1 {
		errs = append(errs, errors.New("repeats must be ≥ 1"))
	}
	if o.Warmup < 0 {
		errs = append(errs, errors.New("warmup must be ≥ 0"))
	}
	if o.WorkloadItems < 1 {
		errs = append(errs, errors.New("workload items must be ≥ 1"))
	}
	if o.EpochUnixNS <= 0 {
		errs = append(errs, errors.New("epoch must be > 0"))
	}
	if len(errs) > 0 {
		return fmt.Errorf("check synth options: %w", errors.Join(errs...))
	}
	return nil
}

func (o *Options) pointName(p float64) string {
	if o.Mode == schema.ModeRate {
		return "r" + strconv.FormatFloat(p, 'g', -1, 64)
	}
	return "c" + strconv.FormatFloat(p, 'f', 0, 64)
}

// item is one workload entry.
type item struct {
	input, output int64
}

// Generate writes a synthetic run to w: workload.jsonl, the records and
// the manifest (evidence "synthetic"). It does not write claims and does
// not commit w. Memory stays bounded whatever the number of requests.
func Generate(ctx context.Context, opts Options, w *schema.RunWriter) (*schema.Manifest, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	g := &gen{
		opts: opts,
		rng:  rand.New(rand.NewPCG(opts.Seed, 0x62656e6368736561)), // "benchsea"
		w:    w,
	}
	wl := g.workload()
	sum, n, err := w.WriteWorkload(strings.NewReader(wl))
	if err != nil {
		return nil, fmt.Errorf("generate synthetic run: %w", err)
	}
	if err := g.run(ctx); err != nil {
		return nil, err
	}
	m := g.manifest(sum, n)
	if err := w.SetManifest(m); err != nil {
		return nil, fmt.Errorf("generate synthetic run: %w", err)
	}
	return m, nil
}

// WriteRun writes a synthetic run directory at dir (which must not exist
// or be empty), records zstd-compressed when compress is set: Generate
// into a new run writer, committed only when it succeeded, so a failure
// leaves nothing at dir. It returns the manifest and the number of
// records written.
func WriteRun(ctx context.Context, dir string, opts Options, compress bool) (*schema.Manifest, int64, error) {
	w, err := schema.CreateRun(dir, compress)
	if err != nil {
		return nil, 0, err
	}
	m, err := Generate(ctx, opts, w)
	if err != nil {
		w.Abort()
		return nil, 0, err
	}
	n := w.Records().Count()
	if err := w.Commit(); err != nil {
		return nil, 0, err
	}
	return m, n, nil
}

type gen struct {
	opts  Options
	rng   *rand.Rand
	w     *schema.RunWriter
	items []item
	clock int64 // ns since epoch where the next segment starts
	count int
	rec   schema.Record
	chunk []int64
	toks  []int64
	idbuf []byte
	sched int64
	itemv int64
}

// workload draws the items and returns workload.jsonl.
func (g *gen) workload() string {
	var b strings.Builder
	g.items = make([]item, g.opts.WorkloadItems)
	for i := range g.items {
		in := clamp(int64(math.Round(math.Exp(6.0+0.7*g.rng.NormFloat64()))), 16, 4096)
		out := clamp(int64(math.Round(math.Exp(3.6+0.8*g.rng.NormFloat64()))), 2, maxTokens)
		g.items[i] = item{input: in, output: out}
		fmt.Fprintf(&b, `{"item":%d,"input_tokens":%d,"max_tokens":%d,"prompt":"synthetic prompt %d"}`+"\n", i, in, out, i)
	}
	return b.String()
}

func clamp(v, lo, hi int64) int64 { return min(max(v, lo), hi) }

// run simulates every point: warmup, then the repeats.
func (g *gen) run(ctx context.Context) error {
	per := g.opts.Requests / (len(g.opts.Points) * g.opts.Repeats)
	for _, p := range g.opts.Points {
		name := g.opts.pointName(p)
		if g.opts.Warmup > 0 {
			if err := g.segment(ctx, name, p, 0, schema.PhaseWarmup, g.opts.Warmup); err != nil {
				return err
			}
		}
		for r := range g.opts.Repeats {
			if err := g.segment(ctx, name, p, r, schema.PhaseMeasure, per); err != nil {
				return err
			}
		}
	}
	return nil
}

// int64Heap is a min-heap of times.
type int64Heap []int64

func (h int64Heap) Len() int           { return len(h) }
func (h int64Heap) Less(i, j int) bool { return h[i] < h[j] }
func (h int64Heap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *int64Heap) Push(x any)        { *h = append(*h, x.(int64)) }
func (h *int64Heap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// client is one closed-loop client: its next send time.
type client struct {
	next int64
	id   int
}

type clientHeap []client

func (h clientHeap) Len() int { return len(h) }
func (h clientHeap) Less(i, j int) bool {
	if h[i].next != h[j].next {
		return h[i].next < h[j].next
	}
	return h[i].id < h[j].id
}
func (h clientHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *clientHeap) Push(x any)   { *h = append(*h, x.(client)) }
func (h *clientHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// server is the state of the simulated engine during one segment.
type server struct {
	busy        int64Heap // end times of the requests holding a batch slot
	outstanding int64Heap // end times of every admitted request
}

// segment simulates n requests of one point, repeat and phase, starting at
// g.clock, and writes their records in send order.
func (g *gen) segment(ctx context.Context, point string, p float64, repeat int, phase string, n int) error {
	var srv server
	start := g.clock
	last := start
	rate := g.opts.Mode == schema.ModeRate
	var clients clientHeap
	if !rate {
		c := int(p)
		for i := range c {
			clients = append(clients, client{next: start + int64(i)*int64(time.Millisecond), id: i})
		}
		heap.Init(&clients)
	}
	sched := start
	for k := range n {
		if k%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return fmt.Errorf("generate synthetic run: %w", err)
			}
		}
		var sent int64
		var scheduled *int64
		if rate {
			sched += int64(g.rng.ExpFloat64() / p * 1e9)
			lag := int64(50_000 + g.rng.ExpFloat64()*100_000)
			if g.rng.Float64() < 0.01 {
				lag += 1_000_000 + g.rng.Int64N(4_000_000)
			}
			sent = sched + lag
			g.sched = sched
			scheduled = &g.sched
		} else {
			sent = clients[0].next
		}
		end := g.request(&srv, point, repeat, phase, k, sent, scheduled)
		last = max(last, end)
		if !rate {
			clients[0].next = end + 200_000 + g.rng.Int64N(800_000) // client think time
			heap.Fix(&clients, 0)
		}
		if err := g.w.WriteRecord(&g.rec); err != nil {
			return fmt.Errorf("generate synthetic run: %w", err)
		}
		g.count++
	}
	g.clock = last + int64(segmentGap)
	return nil
}

// request simulates one request sent at sent and fills g.rec. It returns
// the record's end time.
func (g *gen) request(srv *server, point string, repeat int, phase string, k int, sent int64, scheduled *int64) int64 {
	rng := g.rng
	it := rng.IntN(len(g.items))
	g.itemv = int64(it)
	in := g.items[it].input
	target := g.items[it].output
	switch u := rng.Float64(); {
	case u < pOneToken:
		target = 1
	case u < pOneToken+pEarlyEOS:
		target = 1 + rng.Int64N(target)
	}
	multi := rng.Float64() < pMultiTok
	fate := rng.Float64()

	g.idbuf = append(g.idbuf[:0], point...)
	if phase == schema.PhaseWarmup {
		g.idbuf = append(g.idbuf, "-w-"...)
	} else {
		g.idbuf = append(g.idbuf, "-r"...)
		g.idbuf = strconv.AppendInt(g.idbuf, int64(repeat), 10)
		g.idbuf = append(g.idbuf, '-')
	}
	g.idbuf = appendPadded(g.idbuf, k, 7)

	g.rec = schema.Record{
		ID: string(g.idbuf), Point: point, Repeat: repeat, Phase: phase,
		Item: &g.itemv, ScheduledNS: scheduled, SentNS: sent, InputTokens: in,
		Status: schema.StatusOK,
	}
	g.chunk, g.toks = g.chunk[:0], g.toks[:0]

	arrive := sent + int64(netDelay)
	for srv.busy.Len() > 0 && srv.busy[0] <= arrive {
		heap.Pop(&srv.busy)
	}
	for srv.outstanding.Len() > 0 && srv.outstanding[0] <= arrive {
		heap.Pop(&srv.outstanding)
	}

	// Rejections: the server's admission cap (open loop) or a random 429.
	if (scheduled != nil && srv.outstanding.Len() >= maxOutstanding) || fate < pRejectRnd {
		g.rec.Status = schema.StatusRejected
		g.rec.Error = "HTTP 429: too many requests"
		g.rec.EndNS = arrive + int64(netDelay) + rng.Int64N(2_000_000)
		g.rec.ChunksNS = g.chunk
		return g.rec.EndNS
	}

	begin := arrive
	var popped int64 = -1
	if srv.busy.Len() >= slots {
		popped = heap.Pop(&srv.busy).(int64)
		begin = max(begin, popped)
	}
	deadline := sent + int64(requestTimeout)
	if begin >= deadline {
		// Timed out in the queue before a slot freed.
		if popped >= 0 {
			heap.Push(&srv.busy, popped)
		}
		g.rec.Status = schema.StatusTimeout
		g.rec.Error = "request timed out after 30s"
		g.rec.EndNS = deadline
		g.rec.ChunksNS = g.chunk
		heap.Push(&srv.outstanding, deadline)
		return deadline
	}
	batch := float64(srv.busy.Len() + 1)
	prefill := float64(prefillBase) + float64(prefillPerToken)*float64(in)*(1+0.02*batch)
	t := begin + int64(prefill*(0.9+0.2*rng.Float64()))
	step := float64(stepBase) + float64(stepPerSeq)*batch

	// Failures part-way: an error or a client cancel after some tokens.
	stopAt := target + 1
	switch {
	case fate < pRejectRnd+pError:
		g.rec.Status = schema.StatusError
		g.rec.Error = "HTTP 500: upstream stream reset"
		stopAt = rng.Int64N(target + 1)
	case fate < pRejectRnd+pError+pCancel:
		g.rec.Status = schema.StatusCancelled
		g.rec.Error = "cancelled by client"
		stopAt = rng.Int64N(target + 1)
	}
	hang := false
	if fate >= pRejectRnd+pError+pCancel && fate < pRejectRnd+pError+pCancel+pHang {
		// The server stops streaming and the client times out.
		hang = true
		stopAt = rng.Int64N(target + 1)
	}
	var stallAt int64 = -1
	if rng.Float64() < pStall {
		stallAt = rng.Int64N(target)
	}

	var out, pending int64
	chunkSize := int64(1)
	if multi {
		chunkSize = 1 + rng.Int64N(4)
	}
	end := t
	for tok := int64(0); tok < target && tok < stopAt; tok++ {
		if tok > 0 {
			t += int64(step * (0.85 + 0.3*rng.Float64()))
		}
		if tok == stallAt {
			t += 400_000_000 + rng.Int64N(2_600_000_000)
		}
		if t+int64(netDelay) > deadline {
			g.rec.Status = schema.StatusTimeout
			g.rec.Error = "request timed out after 30s"
			break
		}
		pending++
		if pending == chunkSize || tok == target-1 || tok == stopAt-1 {
			at := t + int64(netDelay)
			g.chunk = append(g.chunk, at-sent)
			g.toks = append(g.toks, pending)
			out += pending
			pending = 0
			end = at
			if multi {
				chunkSize = 1 + rng.Int64N(4)
			}
		}
	}
	if hang {
		g.rec.Status = schema.StatusTimeout
		g.rec.Error = "request timed out after 30s"
	}
	switch g.rec.Status {
	case schema.StatusOK:
		end += 100_000 + rng.Int64N(400_000) // the final usage chunk and [DONE]
	case schema.StatusTimeout:
		end = deadline
	default:
		end += rng.Int64N(5_000_000)
	}
	g.rec.EndNS = end
	g.rec.ChunksNS = g.chunk
	if len(g.toks) > 0 {
		g.rec.ChunkTokens = g.toks
	}
	g.rec.OutputTokens = out
	if g.rec.Status == schema.StatusOK && out == 0 {
		// Cannot happen with target ≥ 1, but keep the record consistent.
		g.rec.Status = schema.StatusError
		g.rec.Error = "empty response"
	}
	heap.Push(&srv.busy, end)
	heap.Push(&srv.outstanding, end)
	return end
}

func appendPadded(b []byte, v, width int) []byte {
	s := strconv.Itoa(v)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}

// manifest describes the synthetic run.
func (g *gen) manifest(workloadSum string, items int) *schema.Manifest {
	o := g.opts
	epoch := time.Unix(0, o.EpochUnixNS).UTC()
	finish := epoch.Add(time.Duration(g.clock))
	seed := int64(o.Seed)
	zero := 0.0
	per := o.Requests / (len(o.Points) * o.Repeats)
	m := &schema.Manifest{
		Schema:      schema.ManifestSchemaV1,
		RunID:       fmt.Sprintf("synth-%s-seed%d-%d", o.Mode, o.Seed, o.Requests),
		Title:       fmt.Sprintf("Synthetic %s sweep, %d measured requests (seed %d)", o.Mode, o.Requests, o.Seed),
		StartTime:   epoch.Format(time.RFC3339Nano),
		FinishTime:  finish.Format(time.RFC3339Nano),
		EpochUnixNS: o.EpochUnixNS,
		Evidence:    schema.EvidenceSynthetic,
		Client: schema.Client{
			Name:        "benchseal-synth",
			Version:     ModelVersion,
			Location:    "same-host",
			Boundary:    schema.BoundaryClientStreaming,
			Seed:        &seed,
			TokenCounts: "server-usage",
		},
		Hardware: schema.Hardware{
			Accelerator:      "none (synthetic queueing model)",
			AcceleratorCount: 1,
		},
		Engine: schema.Engine{
			Name:        "benchseal-synth-server",
			Version:     ModelVersion,
			Parallelism: schema.Parallelism{Tensor: 1},
			PrefixCache: schema.CacheDisabled,
		},
		Model: schema.Model{
			Name:      "synthetic/decoder-7b",
			Revision:  "synthetic-v" + ModelVersion,
			Precision: "bf16",
		},
		Decoding: schema.Decoding{
			Streaming:   true,
			Temperature: &zero,
			MaxTokens:   maxTokens,
			Endpoint:    "/v1/completions",
		},
		Workload: schema.Workload{
			SHA256:       workloadSum,
			Items:        items,
			Description:  "synthetic prompts with log-normal input and output lengths",
			InputTokens:  &schema.LengthDist{Kind: "lognormal", Min: 16, Max: 4096},
			OutputTokens: &schema.LengthDist{Kind: "lognormal", Min: 1, Max: maxTokens},
		},
		Load: schema.Load{
			Mode:           o.Mode,
			Warmup:         schema.Warmup{Requests: o.Warmup},
			Repeats:        o.Repeats,
			RequestTimeout: schema.Duration(requestTimeout),
		},
		SLO: schema.SLO{
			TTFT:     schema.Duration(500 * time.Millisecond),
			E2E:      schema.Duration(10 * time.Second),
			TPOT:     schema.Duration(60 * time.Millisecond),
			OneToken: schema.OneTokenPass,
		},
		Unknown: []string{"hardware.driver", "hardware.runtime"},
		Notes: map[string]string{
			"synth": fmt.Sprintf("server model v%s: %d batch slots, FIFO admission, prefill %v + %v/token, decode step %v + %v per running sequence; failures: %.1f%% error, %.1f%% cancelled, %.1f%% rejected at random, timeouts after %v; %.1f%% stalls",
				ModelVersion, slots, prefillBase, prefillPerToken, stepBase, stepPerSeq, pError*100, pCancel*100, pRejectRnd*100, requestTimeout, pStall*100),
		},
	}
	if o.Mode == schema.ModeRate {
		m.Load.MaxOutstanding = maxOutstanding
	}
	for _, p := range o.Points {
		pt := schema.Point{Name: o.pointName(p), Requests: per}
		if o.Mode == schema.ModeRate {
			pt.Rate = p
			pt.Arrival = schema.ArrivalPoisson
		} else {
			pt.Concurrency = int(p)
		}
		m.Load.Points = append(m.Load.Points, pt)
	}
	return m
}
