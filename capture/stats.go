// Per-cell statistics and progress snapshots of a running capture.

package capture

import (
	"slices"
	"sync"
	"time"

	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/stats"
)

// CellStats summarises one measured (point, repeat) cell.
type CellStats struct {
	Point    string
	Repeat   int
	Requests int64
	ByStatus map[string]int64
	Chunks   int64
	// OfferedRate is a rate point's rate, or in a shard run this shard's
	// share of it (Cell.offeredRate). AchievedRate is, for a rate
	// point, sends per second over the span of sends; for a concurrency
	// point, requests ended per second of the cell.
	OfferedRate, AchievedRate float64
	// SendLag is sent_ns − scheduled_ns over measured requests of a rate
	// point: p50, p99 and max (ns).
	SendLagP50, SendLagP99, SendLagMax int64
	Duration                           time.Duration
}

type cellAcc struct {
	mu       sync.Mutex
	byStatus map[string]int64
	chunks   int64
	lags     []int64
	first    int64
	last     int64
	// lastEnd is the latest end of the requests counted in first and n.
	lastEnd int64
	n       int64
}

// window is the span from the cell's first send to its last answer (the
// measured window replay computes the rates over), 0 before two ends.
func (a *cellAcc) window() time.Duration {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.n == 0 || a.lastEnd <= a.first {
		return 0
	}
	return time.Duration(a.lastEnd - a.first)
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
		a.lastEnd = max(a.lastEnd, rec.EndNS)
		a.n++
	}
}

func (r *runner) setCurrent(c *cell, cellNo int) {
	r.cur.Lock()
	now := r.now()
	if cellNo != r.cur.cell {
		r.cur.cellStart = now
	}
	r.cur.point, r.cur.phase, r.cur.cell, r.cur.repeat = c.pt.Name, c.phase, cellNo, c.repeat
	r.cur.rate = c.offeredRate()
	r.cur.phaseStart = now
	r.cur.requests = int64(c.count())
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
		InFlight: r.inflight.Load(), OfferedRate: r.cur.rate, Requests: r.cur.requests,
		Elapsed: time.Duration(now), PhaseElapsed: time.Duration(max(0, now-r.cur.phaseStart)), Remaining: -1, RunRemaining: -1, Final: final,
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
	switch left := p.Cells - p.Cell; {
	case p.Remaining < 0:
	case left == 0:
		p.RunRemaining = p.Remaining
	case p.Cell > 1:
		perCell := float64(r.cur.cellStart) / float64(p.Cell-1)
		p.RunRemaining = p.Remaining + time.Duration(perCell*float64(left))
	}
	return p
}

func (a *cellAcc) summary(c *cell, d time.Duration) CellStats {
	a.mu.Lock()
	defer a.mu.Unlock()
	s := CellStats{Point: c.pt.Name, Repeat: c.repeat, ByStatus: map[string]int64{}, Chunks: a.chunks,
		OfferedRate: c.offeredRate(), Duration: d}
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

// nearestRank is the nearest-rank p-th percentile of sorted v (the rule
// replay's percentiles follow).
func nearestRank(v []int64, p int64) int64 {
	return v[stats.NearestRank(int64(len(v)), p, 100)-1]
}
