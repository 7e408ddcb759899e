// Sharded capture: one seeded plan split over several client processes.

package capture

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/plan"
	"github.com/benchseal/benchseal/schema"
)

// ShardSpec selects one shard of a sharded capture: Index of Count
// processes, each generating the whole seeded plan and sending its share
// under schema.ShardSplitV1.
type ShardSpec struct {
	Index, Count int
}

// ParseShard reads "I/N" (0 ≤ I < N ≤ schema.MaxShards).
func ParseShard(v string) (ShardSpec, error) {
	a, b, ok := strings.Cut(v, "/")
	i, err1 := strconv.Atoi(a)
	n, err2 := strconv.Atoi(b)
	if !ok || err1 != nil || err2 != nil {
		return ShardSpec{}, errcond.Errorf(plan.ErrPlan, "invalid plan: shard %q: want I/N, e.g. 0/4", v)
	}
	s := ShardSpec{Index: i, Count: n}
	return s, s.check()
}

func (s ShardSpec) check() error {
	if s.Count < 1 || s.Count > schema.MaxShards || s.Index < 0 || s.Index >= s.Count {
		return errcond.Errorf(plan.ErrPlan, "invalid plan: shard %d/%d: want 0 ≤ index < count ≤ %d", s.Index, s.Count, schema.MaxShards)
	}
	return nil
}

// CheckShardable refuses a plan that cannot run split into shards
// processes: a closed loop bounded only by a duration has no global
// request numbers, and one with fewer workers than shards leaves a shard
// idle. capture.Run checks it; k8s job checks it before rendering a Job,
// so the rule is one.
func CheckShardable(p *Plan, shards int) error {
	if p.Mode != schema.ModeConcurrency {
		return nil
	}
	if err := CheckShardCount(p, shards); err != nil {
		return err
	}
	for _, pt := range p.Points {
		if pt.Requests == 0 {
			return errcond.Errorf(plan.ErrPlan, "invalid plan: point %s: a sharded closed-loop point needs a request count (nothing numbers a duration-bounded closed loop's requests across shards)", pt.Name)
		}
	}
	if p.Warmup.Duration > 0 && p.Warmup.Requests == 0 {
		return errcond.Errorf(plan.ErrPlan, "invalid plan: warmup: a sharded closed-loop warmup needs a request count")
	}
	return nil
}

// CheckShardCount refuses to split a closed-loop plan into more shards
// than its smallest point has workers: a shard without a worker would
// send nothing and leave a run with no records.
func CheckShardCount(p *Plan, shards int) error {
	if p.Mode != schema.ModeConcurrency {
		return nil
	}
	for i, pt := range p.Points {
		if shards > pt.Concurrency {
			name := pt.Name
			if name == "" {
				name = fmt.Sprintf("%d", i)
			}
			return errcond.Errorf(plan.ErrPlan, "invalid plan: %d shards, but closed-loop point %q has concurrency %d: each shard needs at least one worker (use at most %s)",
				shards, name, pt.Concurrency, digits.Count(pt.Concurrency, "shard", "shards"))
		}
	}
	return nil
}

// share sets the cell's part of a sharded capture: the request numbers
// this shard sends (schema.ShardOf), in order. Open loop keeps the whole
// schedule and takes every count-th arrival.
func (c *cell) share(mode string, s ShardSpec) {
	c.shard = s
	if s.Count <= 1 {
		return
	}
	if mode == schema.ModeRate {
		return // kAt is arithmetic
	}
	c.ks = make([]int, 0, schema.ShardRequests(mode, c.pt.Concurrency, s.Count, s.Index, int64(c.n)))
	for k := range c.n {
		if schema.ShardOf(mode, c.pt.Concurrency, s.Count, int64(k)) == s.Index {
			c.ks = append(c.ks, k)
		}
	}
}

// count returns how many requests this process sends in the cell (0:
// until its duration ends).
func (c *cell) count() int {
	switch {
	case c.shard.Count <= 1:
		return c.n
	case c.ks != nil:
		return len(c.ks)
	}
	return int(schema.ShardRequests(schema.ModeRate, 0, c.shard.Count, c.shard.Index, int64(c.n)))
}

// offeredRate is the rate this process is offered in the cell: the
// point's rate, or in a shard run the rate times the shard's share of the
// schedule's arrivals (schema.ShardRateShare), so a shard's achieved rate is set against the load it
// was given, not the whole point's (0 in concurrency mode).
func (c *cell) offeredRate() float64 {
	k, of := schema.ShardRateShare(c.shard.Count, c.shard.Index, int64(c.n))
	return c.pt.Rate * float64(k) / float64(of)
}

// kAt returns the request number of this process's j-th request.
func (c *cell) kAt(j int) int {
	switch {
	case c.shard.Count <= 1:
		return j
	case c.ks != nil:
		return c.ks[j]
	}
	return c.shard.Index + j*c.shard.Count
}

// workers returns the closed-loop workers this process runs for the cell.
func (c *cell) workers() int {
	return schema.ShardWorkers(c.pt.Concurrency, max(c.shard.Count, 1), c.shard.Index)
}

// Bounds of a common start (CheckStartAt): a start further in the past is
// a mistake (the run would be recorded as that late), one further ahead
// a process that waits for weeks.
const (
	MaxStartPast   = 24 * time.Hour
	MaxStartFuture = 30 * 24 * time.Hour
)

// CheckStartAt refuses a common start more than MaxStartPast before now or
// more than MaxStartFuture after it.
func CheckStartAt(at, now time.Time) error {
	switch {
	case at.Before(now.Add(-MaxStartPast)):
		return fmt.Errorf("start %s is more than a day in the past (now %s)", at.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	case at.After(now.Add(MaxStartFuture)):
		return fmt.Errorf("start %s is more than 30 days ahead (now %s)", at.UTC().Format(time.RFC3339), now.UTC().Format(time.RFC3339))
	}
	return nil
}

// sleepUntil sleeps until at (the common start of all shards, the end of
// the counter lag after a warmup); it returns early with ctx's error.
func sleepUntil(ctx context.Context, at time.Time) error {
	d := time.Until(at)
	if d <= 0 {
		return nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// shardManifest states the shard in m (after markStart took the epoch).
func (r *runner) shardManifest(m *schema.Manifest, clk *schema.Clock) {
	o := r.o
	if o.Shard == nil && o.StartAt.IsZero() {
		return
	}
	s := ShardSpec{Index: 0, Count: 1}
	if o.Shard != nil {
		s = *o.Shard
	}
	sh := &schema.Shard{Index: s.Index, Count: s.Count, Clock: clk}
	if !o.StartAt.IsZero() {
		sh.StartAt = o.StartAt.UTC().Format(time.RFC3339Nano)
		sh.LateNS, _ = schema.ShardLateNS(m.EpochUnixNS, o.StartAt) // fits: CheckStartAt bounds the start
	}
	m.Shard = sh
	if s.Count > 1 {
		split := "open loop: every shard generates the whole seeded schedule and sends arrival k of a phase when k mod " + strconv.Itoa(s.Count) + " = " + strconv.Itoa(s.Index)
		if o.Plan.Mode == schema.ModeConcurrency {
			var b strings.Builder
			for i, pt := range o.Plan.Points {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "%s %d of %d", pt.Name, schema.ShardWorkers(pt.Concurrency, s.Count, s.Index), pt.Concurrency)
			}
			split = "closed loop: worker w of a point belongs to shard w mod " + strconv.Itoa(s.Count) + " and request k to the shard of worker k mod concurrency; this shard's workers: " + b.String()
		}
		if o.Plan.MaxOutstanding > 0 {
			split += fmt.Sprintf("; max_outstanding split likewise: this shard caps at %d", r.maxOutstanding())
		}
		setNote(m, "shard", split)
	}
}

// maxOutstanding is this process's cap on requests in flight (0: none):
// its share of the plan's.
func (r *runner) maxOutstanding() int {
	n := r.o.Plan.MaxOutstanding
	if n <= 0 || r.o.Shard == nil {
		return n
	}
	return max(1, schema.ShardWorkers(n, r.o.Shard.Count, r.o.Shard.Index))
}
