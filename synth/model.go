package synth

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/benchseal/benchseal/schema"
)

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

// item is one workload entry.
type item struct {
	input, output int64
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
		in := clamp(int64(math.Round(math.Exp(6.0+float64(0.7*g.rng.NormFloat64())))), 16, 4096)
		out := clamp(int64(math.Round(math.Exp(3.6+float64(0.8*g.rng.NormFloat64())))), 2, maxTokens)
		g.items[i] = item{input: in, output: out}
		fmt.Fprintf(&b, `{"item":%d,"input_tokens":%d,"max_tokens":%d,"prompt":"synthetic prompt %d"}`+"\n", i, in, out, i)
	}
	return b.String()
}

func clamp(v, lo, hi int64) int64 { return min(max(v, lo), hi) }

// run simulates every point: warmup, then the repeats.
func (g *gen) run(ctx context.Context) error {
	per, _, _ := g.opts.Split()
	for i, p := range g.opts.Points {
		name := g.opts.pointName(p)
		if g.opts.Warmup > 0 {
			if err := g.segment(ctx, name, p, 0, schema.PhaseWarmup, g.opts.Warmup); err != nil {
				return err
			}
		}
		for r := range g.opts.Repeats {
			if err := g.segment(ctx, name, p, r, schema.PhaseMeasure, per[i]); err != nil {
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
			lag := int64(50_000 + float64(g.rng.ExpFloat64()*100_000))
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
	in, target, multi, fate := g.drawItem()
	g.startRecord(point, repeat, phase, k, sent, scheduled, in)

	arrive := sent + int64(netDelay)
	srv.release(arrive)

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
	prefill := float64(prefillBase) + float64(float64(prefillPerToken)*float64(in)*(1+float64(0.02*batch)))
	t := begin + int64(prefill*(0.9+float64(0.2*rng.Float64())))
	step := float64(stepBase) + float64(float64(stepPerSeq)*batch)

	stopAt, hang, stallAt := g.drawFailure(fate, target)
	end, out := g.decode(sent, t, step, deadline, target, stopAt, stallAt, multi)
	if hang {
		g.rec.Status = schema.StatusTimeout
		g.rec.Error = "request timed out after 30s"
	}
	end = g.finishRecord(end, deadline, out)
	heap.Push(&srv.busy, end)
	heap.Push(&srv.outstanding, end)
	return end
}

// drawItem is request's first phase: the dataset item (its input tokens),
// the output length the server aims at (sometimes one token or an early
// EOS), whether it streams several tokens a chunk, and the fate that picks
// a rejection or failure. The draws keep their order, so a seed gives the
// same run.
func (g *gen) drawItem() (in, target int64, multi bool, fate float64) {
	rng := g.rng
	it := rng.IntN(len(g.items))
	g.itemv = int64(it)
	in = g.items[it].input
	target = g.items[it].output
	switch u := rng.Float64(); {
	case u < pOneToken:
		target = 1
	case u < pOneToken+pEarlyEOS:
		target = 1 + rng.Int64N(target)
	}
	multi = rng.Float64() < pMultiTok
	fate = rng.Float64()
	return in, target, multi, fate
}

// startRecord sets g.rec to an ok record of request k with no chunks yet:
// the ID ("<point>-w-<k>" for warmup, "<point>-r<repeat>-<k>" otherwise)
// is built in g.idbuf to spare an allocation a request.
func (g *gen) startRecord(point string, repeat int, phase string, k int, sent int64, scheduled *int64, in int64) {
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
}

// release drops from the server's heaps the requests that ended by
// arrive: their batch slots and admission places are free again.
func (srv *server) release(arrive int64) {
	for srv.busy.Len() > 0 && srv.busy[0] <= arrive {
		heap.Pop(&srv.busy)
	}
	for srv.outstanding.Len() > 0 && srv.outstanding[0] <= arrive {
		heap.Pop(&srv.outstanding)
	}
}

// drawFailure decides, from fate, whether the request fails part-way (an
// error or a client cancel after some tokens, set on g.rec) or hangs, the
// token it stops at (target+1: none), and the token before which the
// server stalls (-1: none).
func (g *gen) drawFailure(fate float64, target int64) (stopAt int64, hang bool, stallAt int64) {
	rng := g.rng
	stopAt = target + 1
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
	if fate >= pRejectRnd+pError+pCancel && fate < pRejectRnd+pError+pCancel+pHang {
		// The server stops streaming and the client times out.
		hang = true
		stopAt = rng.Int64N(target + 1)
	}
	stallAt = -1
	if rng.Float64() < pStall {
		stallAt = rng.Int64N(target)
	}
	return stopAt, hang, stallAt
}

// decode streams the tokens from the first at t, one step apart, into
// g.chunk and g.toks until target, stopAt or the deadline (a timeout, set
// on g.rec). It returns the last chunk's arrival (t without chunks) and
// the tokens sent.
func (g *gen) decode(sent, t int64, step float64, deadline, target, stopAt, stallAt int64, multi bool) (end, out int64) {
	rng := g.rng
	var pending int64
	chunkSize := int64(1)
	if multi {
		chunkSize = 1 + rng.Int64N(4)
	}
	end = t
	for tok := int64(0); tok < target && tok < stopAt; tok++ {
		if tok > 0 {
			t += int64(step * (0.85 + float64(0.3*rng.Float64())))
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
	return end, out
}

// finishRecord is request's last phase: the end time by status (an ok
// stream's final usage chunk, a timeout's deadline, a failure's close),
// the chunks and output tokens on g.rec. It returns the end time.
func (g *gen) finishRecord(end, deadline, out int64) int64 {
	switch g.rec.Status {
	case schema.StatusOK:
		end += 100_000 + g.rng.Int64N(400_000) // the final usage chunk and [DONE]
	case schema.StatusTimeout:
		end = deadline
	default:
		end += g.rng.Int64N(5_000_000)
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
	return end
}

func appendPadded(b []byte, v, width int) []byte {
	s := strconv.Itoa(v)
	for i := len(s); i < width; i++ {
		b = append(b, '0')
	}
	return append(b, s...)
}
