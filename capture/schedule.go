// The workload's cells and when their requests are sent: closed-loop
// workers, open-loop schedules, planned cancellations.

package capture

import (
	"context"
	"fmt"
	"hash/fnv"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/plan"
	"github.com/benchseal/benchseal/schema"
)

// maxSyntheticPool bounds the distinct synthetic prompts of one shape;
// longer points cycle through them.
const maxSyntheticPool = 4096

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
	// ended and hard count the phase's ended requests and those failed
	// against Options.MaxErrorRate.
	ended, hard atomic.Int64
	// order hands the phase's records to the sink in request-number
	// order (see inOrder).
	order inOrder
	// shard is the process's shard (Count 0 or 1: not sharded); ks the
	// request numbers it sends of a closed-loop cell (see share).
	shard ShardSpec
	ks    []int
	// starts, in a session run, holds each session's first request number
	// and then the cell's request count (SessionRun.Starts); nil
	// otherwise.
	starts []int
	// firstSent is the earliest send time recorded in the phase so far
	// (math.MaxInt64 before the first): a closed loop bounded by its
	// duration runs until first send + duration (see runCell).
	firstSent atomic.Int64
}

// noteSent lowers firstSent to sent when it is earlier.
func (c *cell) noteSent(sent int64) {
	for {
		cur := c.firstSent.Load()
		if sent >= cur || c.firstSent.CompareAndSwap(cur, sent) {
			return
		}
	}
}

// inOrder releases a phase's records in request-number order: a record
// waits until every lower-numbered request of its phase has ended, so a
// capture killed at any instant leaves, per phase, a contiguous prefix of
// request numbers — what validate accepts of an interrupted
// schema.GeneratorBenchsealV1 run. It holds at most the requests in flight.
type inOrder struct {
	mu      sync.Mutex
	next    int
	pending map[int]*schema.Record
}

// release queues rec, request k, and calls emit for every record now next
// in order, under the lock (so emits keep that order).
func (o *inOrder) release(k int, rec *schema.Record, emit func(*schema.Record)) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if k != o.next {
		if o.pending == nil {
			o.pending = map[int]*schema.Record{}
		}
		o.pending[k] = rec
		return
	}
	emit(rec)
	o.next++
	for {
		r, ok := o.pending[o.next]
		if !ok {
			return
		}
		delete(o.pending, o.next)
		emit(r)
		o.next++
	}
}

// Streams of the seeded prompt generator besides the pools': the probe's
// prompt and a cell's warmup pool (with Plan.DistinctPrompts).
const (
	probeStream  = 0x70726f6265 // "probe"
	warmupStream = 0x7761726d   // "warm"
)

// pool is the items a point's phases send: their global indices.
type pool struct{ measure, warmup []int }

// buildWorkload makes the items, pre-encodes every request body and lays
// out the cells in run order.
func (r *runner) buildWorkload() ([]*cell, error) {
	o := r.o
	p := &o.Plan
	if pools, err := r.traceWorkload(); pools != nil || err != nil {
		return r.layCells(pools, nil, err)
	}
	if pools, err := r.sessionWorkload(); pools != nil || err != nil {
		return r.layCells(pools, nil, err)
	}
	if o.Prompts != nil && p.DistinctPrompts {
		return nil, errcond.Errorf(plan.ErrPlan, "invalid plan: distinct prompts per point × repeat are synthetic; a prompts file gives its own")
	}
	if o.Prompts != nil {
		pools, err := r.filePools()
		if err != nil {
			return nil, err
		}
		return r.layCells(pools, nil, nil)
	}
	pools, cellPools, err := r.syntheticPools()
	if err != nil {
		return nil, err
	}
	return r.layCells(pools, cellPools, nil)
}

// filePools makes the items from the prompts file (Options.Prompts), in
// an order drawn from the seed, every point's measure pool in that order
// and its warmup pool in reverse. A point may not set input_tokens (the
// prompts' lengths are their own). buildWorkload's prompts-file branch.
func (r *runner) filePools() ([]pool, error) {
	o := r.o
	p := &o.Plan
	pools := make([]pool, len(p.Points))
	for i := range p.Points {
		if p.Points[i].InputTokens != 0 && p.Points[i].InputTokens != p.InputTokens {
			return nil, errcond.Errorf(plan.ErrPlan, "invalid plan: point %s sets input_tokens, but prompts come from a file", p.Points[i].Name)
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
	return pools, nil
}

// promptShape is the token lengths a synthetic prompt is generated for:
// points of one shape share its pool.
type promptShape struct{ in, out int }

// syntheticPoolSize is how many distinct synthetic prompts a point's
// measure pool holds: its request count, at most maxSyntheticPool (and
// that many for a duration-bounded point).
func syntheticPoolSize(pt *schema.Point) int {
	n := pt.Requests
	if n == 0 || n > maxSyntheticPool {
		n = maxSyntheticPool
	}
	return n
}

// syntheticPools makes the seeded synthetic items: one pool per prompt
// shape shared by the points of that shape, or, with
// Plan.DistinctPrompts, one per point × repeat (cellPools) and a probe
// prompt. buildWorkload's branch without a prompts file.
func (r *runner) syntheticPools() (pools []pool, cellPools [][]pool, err error) {
	p := &r.o.Plan
	need := map[promptShape]int{}
	var order []promptShape
	for i := range p.Points {
		pt := &p.Points[i]
		s := promptShape{pt.InputTokens, pt.OutputTokens}
		if s.in == 0 {
			return nil, nil, errcond.Errorf(plan.ErrPlan, "invalid plan: point %s: no prompts file and no input_tokens for synthetic prompts", pt.Name)
		}
		if _, ok := need[s]; !ok {
			order = append(order, s)
		}
		need[s] = max(need[s], syntheticPoolSize(pt))
	}
	warmN := p.Warmup.Requests
	if warmN == 0 && p.Warmup.Duration > 0 {
		warmN = 256
	}
	warmN = min(warmN, maxSyntheticPool)
	made := r.shapePools(order, need, warmN)
	pools = make([]pool, len(p.Points))
	for i, pt := range p.Points {
		pools[i] = made[promptShape{pt.InputTokens, pt.OutputTokens}]
	}
	if p.DistinctPrompts {
		cellPools = r.cellPools(warmN)
	}
	return pools, cellPools, nil
}

// addItems appends items to the run's and returns their global indices.
// The pools' one way to grow r.items, so indices stay in step.
func (r *runner) addItems(items []Item) (idx []int) {
	for _, it := range items {
		idx = append(idx, len(r.items))
		r.items = append(r.items, it)
	}
	return idx
}

// shapePools makes each shape's pool, in order (need: its measure pool's
// size, warmN the warmup pool's), from a stream named by the shape. With
// Plan.DistinctPrompts it makes only the probe prompt, of the first
// shape: cellPools makes the pools.
func (r *runner) shapePools(order []promptShape, need map[promptShape]int, warmN int) map[promptShape]pool {
	p := &r.o.Plan
	made := map[promptShape]pool{}
	for k, s := range order {
		h := fnv.New64a()
		fmt.Fprintf(h, "%d/%d", s.in, s.out)
		st := h.Sum64()
		if p.DistinctPrompts {
			// One probe prompt of the first shape; the pools are
			// made per cell by cellPools.
			if k == 0 {
				r.probe = &r.synthetic(uint64(p.Seed), st^probeStream, 1, s.in, s.out)[0]
			}
			continue
		}
		var pl pool
		pl.measure = r.addItems(r.synthetic(uint64(p.Seed), st, need[s], s.in, s.out))
		if warmN > 0 {
			pl.warmup = r.addItems(r.synthetic(uint64(p.Seed), st+1+uint64(k)<<32, warmN, s.in, s.out))
		}
		made[s] = pl
	}
	return made
}

// cellPools makes, with Plan.DistinctPrompts, the pools of each point ×
// repeat from a stream named by the shape, point and repeat (warmN: the
// warmup pool's size), so no two cells send the same prompt.
func (r *runner) cellPools(warmN int) [][]pool {
	p := &r.o.Plan
	cellPools := make([][]pool, len(p.Points))
	for i := range p.Points {
		pt := &p.Points[i]
		s := promptShape{pt.InputTokens, pt.OutputTokens}
		n := syntheticPoolSize(pt)
		for rep := range p.Repeats {
			h := fnv.New64a()
			fmt.Fprintf(h, "%d/%d/point%d/repeat%d", s.in, s.out, i, rep)
			st := h.Sum64()
			var pl pool
			pl.measure = r.addItems(r.synthetic(uint64(p.Seed), st, n, s.in, s.out))
			if warmN > 0 {
				pl.warmup = r.addItems(r.synthetic(uint64(p.Seed), st^warmupStream, warmN, s.in, s.out))
			}
			cellPools[i] = append(cellPools[i], pl)
		}
	}
	return cellPools
}

// layCells encodes every item's request body and lays out the cells in run
// order, each point's from its pool (of each repeat: cellPools, when not
// nil); err, when not nil, is returned as is.
func (r *runner) layCells(pools []pool, cellPools [][]pool, err error) ([]*cell, error) {
	if err != nil {
		return nil, err
	}
	o := r.o
	p := &o.Plan
	if len(r.items) == 0 {
		return nil, errEmptyWorkload
	}
	r.bodies = make([][]byte, len(r.items))
	for i := range r.items {
		b, err := RequestBody(o.Request, &r.items[i])
		if err != nil {
			return nil, fmt.Errorf("capture failed: %w", err)
		}
		r.bodies[i] = b
	}

	var cells []*cell
	for rep := 0; rep < p.Repeats; rep++ {
		for i := range p.Points {
			pt := &p.Points[i]
			if cellPools != nil {
				pools[i] = cellPools[i][rep]
			}
			stream := uint64(i)<<20 | uint64(rep)<<8
			if p.Warmup.Requests > 0 || p.Warmup.Duration > 0 {
				w := &cell{idx: i, pt: pt, repeat: rep, phase: schema.PhaseWarmup,
					n: p.Warmup.Requests, dur: time.Duration(p.Warmup.Duration), items: pools[i].warmup}
				if len(w.items) == 0 {
					w.items = pools[i].measure
				}
				r.layout(w, stream|1)
				if o.Shard != nil {
					w.share(p.Mode, *o.Shard)
				}
				cells = append(cells, w)
			}
			c := &cell{idx: i, pt: pt, repeat: rep, phase: schema.PhaseMeasure,
				n: pt.Requests, dur: time.Duration(pt.Duration), items: pools[i].measure}
			if o.Sessions != nil {
				c.starts = o.Sessions.Starts
			}
			r.layout(c, stream|2)
			if o.Shard != nil {
				c.share(p.Mode, *o.Shard)
			}
			cells = append(cells, c)
		}
	}
	return cells, nil
}

// traceWorkload makes the items and the one pool of a trace replay (nil
// when the run replays no trace): every trace request once, in trace
// order.
func (r *runner) traceWorkload() ([]pool, error) {
	o, p := r.o, &r.o.Plan
	for _, pt := range p.Points {
		if pt.Arrival == schema.ArrivalTrace && o.Trace == nil {
			return nil, errcond.Errorf(plan.ErrPlan, "invalid plan: point %s: arrival %q needs a trace (capture --trace)", pt.Name, schema.ArrivalTrace)
		}
	}
	if o.Trace == nil {
		return nil, nil
	}
	if o.Prompts != nil || p.DistinctPrompts {
		return nil, errcond.Errorf(plan.ErrPlan, "invalid plan: a trace replay makes its own prompts; drop the prompts file and distinct prompts")
	}
	if len(p.Points) != 1 || p.Points[0].Arrival != schema.ArrivalTrace || p.Points[0].Requests != len(o.Trace.Items) {
		return nil, errcond.Errorf(plan.ErrPlan, "invalid plan: a trace replay is one point with arrival %q and the trace's %d requests", schema.ArrivalTrace, len(o.Trace.Items))
	}
	r.items = slices.Clone(o.Trace.Items)
	measure := make([]int, len(r.items))
	for i := range measure {
		measure[i] = i
	}
	return []pool{{measure: measure}}, nil
}

// sessionWorkload makes the items and the one pool of a session run (nil
// when the run has no sessions): every turn once, in session order, so
// request k of a phase sends item k.
func (r *runner) sessionWorkload() ([]pool, error) {
	o, p := r.o, &r.o.Plan
	if o.Sessions == nil {
		return nil, nil
	}
	switch {
	case o.Prompts != nil || p.DistinctPrompts || o.Trace != nil:
		return nil, errcond.Errorf(plan.ErrPlan, "invalid plan: a session run sends its conversations; drop the prompts file, the trace and distinct prompts")
	case p.Warmup.Requests > 0 || p.Warmup.Duration > 0:
		return nil, errcond.Errorf(plan.ErrPlan, "invalid plan: a session run has no warmup")
	case o.Shard != nil:
		return nil, errcond.Errorf(plan.ErrPlan, "invalid plan: a session run is not sharded")
	case o.Request.API != "" && o.Request.API != APIChat:
		return nil, errcond.Errorf(plan.ErrPlan, "invalid plan: a session run sends chat messages: use --api chat")
	}
	for _, pt := range p.Points {
		if pt.Requests != len(o.Sessions.Items) || pt.Duration != 0 {
			return nil, errcond.Errorf(plan.ErrPlan, "invalid plan: point %s: a session run sends the sessions' %d turns", pt.Name, len(o.Sessions.Items))
		}
	}
	r.items = slices.Clone(o.Sessions.Items)
	measure := make([]int, len(r.items))
	for i := range measure {
		measure[i] = i
	}
	pools := make([]pool, len(p.Points))
	for i := range pools {
		pools[i] = pool{measure: measure}
	}
	return pools, nil
}

// runSessions runs a session cell: each worker takes the next session and
// sends its turns one after another, each when the one before ended (a
// turn carries the previous turns' history); the workers start together,
// as in runCell.
func (r *runner) runSessions(ctx context.Context, c *cell, wg *sync.WaitGroup) {
	var next atomic.Int64
	sessions := len(c.starts) - 1
	go1 := make(chan struct{})
	var ready sync.WaitGroup
	for range c.workers() {
		ready.Add(1)
		wg.Go(func() {
			ready.Done()
			<-go1
			for ctx.Err() == nil {
				s := int(next.Add(1) - 1)
				if s >= sessions {
					return
				}
				for k := c.starts[s]; k < c.starts[s+1] && ctx.Err() == nil; k++ {
					r.do(c, k, k, nil)
				}
			}
		})
	}
	ready.Wait()
	close(go1)
}

// runSessionArrivals runs a session cell whose sessions arrive at a rate:
// session s starts at its scheduled offset c.sched[s] (turn 0's
// scheduled_ns), and each later turn is sent when the turn before it ended,
// its scheduled_ns that end (so its send lag is the client's delay in
// sending it). Sessions overlap as their arrivals and lengths make them;
// max_outstanding does not apply (a session's turn is never dropped: its
// successors carry its history).
func (r *runner) runSessionArrivals(ctx context.Context, c *cell, start int64, wg *sync.WaitGroup) {
	defer lockSenderThread()()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for s := range len(c.starts) - 1 {
		target := start + c.sched[s]
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
		r.inflight.Add(1)
		wg.Go(func() {
			sched := target
			for k := c.starts[s]; k < c.starts[s+1] && ctx.Err() == nil; k++ {
				if k > c.starts[s] {
					r.inflight.Add(1)
				}
				at := sched
				sched = r.do(c, k, k, &at)
			}
		})
	}
}

// layout precomputes a cell's schedule and cancellations from the seed.
func (r *runner) layout(c *cell, stream uint64) {
	p := &r.o.Plan
	c.stats = &cellAcc{byStatus: map[string]int64{}}
	if p.Mode == schema.ModeRate {
		// Repeats use the same schedule, so they differ only by the server.
		sched := uint64(c.idx)<<20 | uint64(len(c.phase))
		switch {
		case c.starts != nil:
			// A session run schedules its sessions' first turns: one
			// offset per session (SessionArrivals).
			c.sched = Schedule(c.pt.Arrival, c.pt.Rate, c.pt.Burstiness, len(c.starts)-1, 0, p.Seed, sched)
		case c.pt.Arrival == schema.ArrivalTrace:
			c.sched = schema.TraceSchedule(r.traceNS(), r.o.Trace.Source.Speedup)
		default:
			c.sched = Schedule(c.pt.Arrival, c.pt.Rate, c.pt.Burstiness, c.n, c.dur, p.Seed, sched)
		}
		if c.starts == nil {
			c.n = len(c.sched)
		}
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

// synthetic returns n synthetic items of the shape in/out, or with the
// plan's length distributions drawn for each item (Plan.InputLengths,
// OutputLengths).
func (r *runner) synthetic(seed, stream uint64, n, in, out int) []Item {
	p := &r.o.Plan
	if p.InputLengths == nil && p.OutputLengths == nil {
		return SyntheticItems(seed, stream, n, in, out)
	}
	di, do := LengthSpec{Kind: LengthFixed, Lo: in, Hi: in}, LengthSpec{Kind: LengthFixed, Lo: out, Hi: out}
	if p.InputLengths != nil {
		di = *p.InputLengths
	}
	if p.OutputLengths != nil {
		do = *p.OutputLengths
	}
	return drawnItems(seed, stream, n, di, do)
}

// traceNS returns the trace times of a trace replay's items, in order.
func (r *runner) traceNS() []int64 {
	ns := make([]int64, len(r.o.Trace.Items))
	for i, it := range r.o.Trace.Items {
		ns[i] = *it.TraceNS
	}
	return ns
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

// runCell sends one phase and waits for its requests to end.
// cellNumbers returns the number progress shows for each cell, 1-based
// among the measured cells: a measure cell its own, a warmup cell that of
// the measure cell it warms (the next one), and the count of measured
// cells.
func cellNumbers(cells []*cell) ([]int, int) {
	nos := make([]int, len(cells))
	n := 0
	for i, c := range cells {
		if c.phase == schema.PhaseMeasure {
			n++
			nos[i] = n
		}
	}
	next := n // a trailing warmup (none is laid) would show the last
	for i := len(cells) - 1; i >= 0; i-- {
		if cells[i].phase == schema.PhaseMeasure {
			next = nos[i]
		} else {
			nos[i] = next
		}
	}
	return nos, n
}

func (r *runner) runCell(ctx context.Context, c *cell, cellNo int) {
	r.setCurrent(c, cellNo)
	c.firstSent.Store(math.MaxInt64)
	start := r.now()
	var wg sync.WaitGroup
	if c.starts != nil && c.sched != nil {
		r.runSessionArrivals(ctx, c, start, &wg)
	} else if c.sched != nil {
		r.runOpenLoop(ctx, c, start, &wg)
	} else if c.starts != nil {
		r.runSessions(ctx, c, &wg)
	} else {
		var next atomic.Int64
		n := c.count()
		// The workers start together: each waits until all are
		// running, so none has sent a whole stream of requests before
		// the last one starts (the scheduler favours a goroutine its
		// response just woke), and the phase reaches its concurrency,
		// as validate checks under schema.GeneratorBenchsealV1.
		go1 := make(chan struct{})
		var ready sync.WaitGroup
		for range c.workers() {
			ready.Add(1)
			wg.Go(func() {
				ready.Done()
				<-go1
				// A phase bounded by its duration ends at its first
				// send + duration, judged by the end_ns each worker's
				// last request recorded: so every worker's last
				// request ends after that deadline, exactly what
				// validate checks (schema: a phase cut short is
				// missing work). The deadline is checked before a
				// request number is taken, so the numbers sent are
				// contiguous (validate checks it under
				// schema.GeneratorBenchsealV1).
				sentOne, lastEnd := false, int64(0)
				for ctx.Err() == nil {
					if c.dur > 0 && sentOne && lastEnd >= c.firstSent.Load()+int64(c.dur) {
						return
					}
					j := int(next.Add(1) - 1)
					if n > 0 && j >= n {
						return
					}
					lastEnd, sentOne = r.do(c, c.kAt(j), j, nil), true
				}
			})
		}
		ready.Wait()
		close(go1)
	}
	wg.Wait()
}

// preciseWindow is how much of each wait before an open-loop send is
// spent in preciseSleep rather than on a runtime timer (whose wakeups are
// quantised to milliseconds).
const preciseWindow = 2 * time.Millisecond

func (r *runner) runOpenLoop(ctx context.Context, c *cell, start int64, wg *sync.WaitGroup) {
	capN := int64(r.maxOutstanding())
	defer lockSenderThread()()
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for j := range c.count() {
		k := c.kAt(j)
		target := start + c.sched[k]
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
			r.finish(c, j, rec)
			continue
		}
		r.inflight.Add(1)
		wg.Go(func() {
			r.do(c, k, j, &sched)
		})
	}
}
