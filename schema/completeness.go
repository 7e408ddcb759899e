package schema

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// ScheduleToleranceNS is how far a recorded scheduled_ns (relative to its
// phase's first) may lie from the regenerated schedule: the schedule is
// computed in floating point, and a machine may round a last bit
// differently. Removing or inventing a request moves every later one by a
// whole inter-arrival gap, far more than this.
const ScheduleToleranceNS = 1000

// maxMissingRegenerated bounds how many requests past the records the
// schedule of an interrupted rate phase is regenerated to count its
// missing requests (8 bytes each).
const maxMissingRegenerated = 1 << 22

// generatedIndex returns k of an id "<point>.r<repeat>.<ph><k>" of
// GeneratorBenchsealV1, or false when id does not have that exact shape
// (k in canonical decimal).
func generatedIndex(id, point string, repeat int, ph byte) (int64, bool) {
	rest, ok := strings.CutPrefix(id, point)
	if !ok {
		return 0, false
	}
	rest, ok = strings.CutPrefix(rest, ".r"+strconv.Itoa(repeat)+".")
	if !ok || len(rest) < 2 || rest[0] != ph {
		return 0, false
	}
	k, err := strconv.ParseInt(rest[1:], 10, 64)
	if err != nil || k < 0 || strconv.FormatInt(k, 10) != rest[1:] {
		return 0, false
	}
	return k, true
}

// checkGenerated checks a record's id against GeneratorBenchsealV1 and
// remembers its request number (and, in rate mode, its schedule) for
// Finish.
func (c *RecordChecker) checkGenerated(cell int, rec *Record, add func(field, format string, args ...any)) {
	ph, gi := byte('m'), 2*cell
	if rec.Phase == PhaseWarmup {
		ph, gi = 'w', 2*cell+1
	}
	k, ok := generatedIndex(rec.ID, rec.Point, rec.Repeat, ph)
	if !ok {
		add("id", "%q does not follow load.generator %q: want \"%s.r%d.%c<k>\"", rec.ID, GeneratorBenchsealV1, rec.Point, rec.Repeat, ph)
		return
	}
	if c.m.Load.Points[cell/c.repeats].Arrival == ArrivalTrace && (rec.Item == nil || *rec.Item != k) {
		add("item", "request %d of a trace replay sends trace request %d (workload item %d), so its item must be %d", k, k, k, k)
	}
	if c.m.Workload.Sessions != nil && (rec.Item == nil || *rec.Item != k) {
		add("item", "request %d of a session run sends workload item %d (its session's turn), so its item must be %d", k, k, k)
	}
	s := c.shardOf(cell, k)
	if c.shards > 1 && rec.Shard != nil && *rec.Shard != int64(s) {
		add("shard", "is %d, but the split rule %q gives request %d of this phase to shard %d", *rec.Shard, ShardSplitV1, k, s)
	}
	g := &c.gen[gi*c.shards+s]
	if g.n == 0 || k > g.maxK {
		g.maxK = k
	}
	if g.n == 0 || rec.SentNS < g.lo {
		g.lo, g.loID = rec.SentNS, rec.ID
	}
	if g.n == 0 || rec.EndNS > g.hi {
		g.hi, g.hiID = rec.EndNS, rec.ID
	}
	if !c.rate && c.phaseDuration(cell, rec.Phase) > 0 {
		if g.n == 0 || rec.SentNS < g.firstSent {
			g.firstSent = rec.SentNS
		}
		g.ends = append(g.ends, rec.EndNS)
	}
	g.n++
	if c.rate {
		if rec.ScheduledNS == nil {
			add("scheduled_ns", "is missing: under load.generator %q every request of a rate-mode run records its schedule", GeneratorBenchsealV1)
		} else {
			g.sched = append(g.sched, kSched{k, *rec.ScheduledNS})
		}
	}
}

// phasePlan is what the manifest declares for one phase of a point.
type phasePlan struct {
	pi       int
	point    *Point
	repeat   int
	phase    string
	requests int
	duration Duration
	field    string // manifest path of the declared count
}

// checkCompleteness runs, in Finish, the checks that no declared work is
// missing: a point (or warmup) with a request count and no duration has
// exactly that many records in every repeat, fewer only when the run is
// marked incomplete; under GeneratorBenchsealV1 the request numbers are
// contiguous from 0, in rate mode the schedule is the one regenerated from
// the seed, and an incomplete run holds only what an interruption can
// leave (see checkInterruption).
func (c *RecordChecker) checkCompleteness(add func(field, format string, args ...any)) {
	// GeneratorBenchsealV1 phases in run order, one list per shard: each
	// shard runs the whole plan in that order, and is interrupted once.
	order := make([][]phaseState, c.shards)
	S := c.shards
	for r := range c.repeats {
		for i := range c.m.Load.Points {
			p := &c.m.Load.Points[i]
			cell := i*c.repeats + r
			if c.gen != nil && c.warmup {
				wp := phasePlan{pi: i, point: p, repeat: r, phase: PhaseWarmup, requests: c.m.Load.Warmup.Requests,
					duration: c.m.Load.Warmup.Duration, field: "load.warmup.requests"}
				c.checkCount(add, &wp, c.warmed[cell])
				gi := (2*cell + 1) * S
				for s, st := range c.checkGeneratedPhase(add, &wp, c.gen[gi:gi+S]) {
					order[s] = append(order[s], phaseState{wp, st, &c.gen[gi+s]})
				}
			}
			mp := phasePlan{pi: i, point: p, repeat: r, phase: PhaseMeasure, requests: p.Requests, duration: p.Duration,
				field: "load.points[" + strconv.Itoa(i) + "].requests"}
			c.checkCount(add, &mp, c.measured[cell])
			if c.gen != nil {
				gi := 2 * cell * S
				for s, st := range c.checkGeneratedPhase(add, &mp, c.gen[gi:gi+S]) {
					order[s] = append(order[s], phaseState{mp, st, &c.gen[gi+s]})
				}
			}
		}
	}
	for s := range order {
		if c.shardIdx >= 0 && s != c.shardIdx {
			continue
		}
		if !c.checkRunOrder(add, order[s], s) || !c.checkInterruption(add, order[s], s) {
			return
		}
	}
	c.countUnsent()
}

// checkRunOrder checks that the phases of a GeneratorBenchsealV1 run (one
// shard's, on that shard's clock) did not overlap in time: capture runs
// them one after another in run order (repeat by repeat, point by point,
// warmup before measure) and starts a phase only after every request of
// the one before has ended (runCell waits for them), so every record of a
// phase ends no later than the first send of the next phase that has
// records. A measured request sent before a warmup request of its point ×
// repeat ended was not measured after the warmup: which requests are
// "warmup" was chosen afterwards. It returns false when it reported a
// problem.
func (c *RecordChecker) checkRunOrder(add func(field, format string, args ...any), order []phaseState, shard int) bool {
	var prev *phaseState
	for i := range order {
		ps := &order[i]
		if ps.g.n == 0 {
			continue
		}
		if prev != nil && ps.g.lo < prev.g.hi {
			who := ""
			if c.shards > 1 {
				who = " in " + shardDesc(shard, c.shards)
			}
			add("sent_ns", "%s: request %q was sent at %d ns, before request %q of %s ended (end_ns %d)%s: under load.generator %q the phases run one after another (repeat by repeat, point by point, warmup before measure), each starting after every request of the one before has ended",
				ps.pp.what(), ps.g.loID, ps.g.lo, prev.g.hiID, prev.pp.what(), prev.g.hi, who, GeneratorBenchsealV1)
			return false
		}
		prev = ps
	}
	return true
}

// Phase states of a GeneratorBenchsealV1 phase.
const (
	phaseEmpty = iota
	phasePartial
	phaseComplete
)

type phaseState struct {
	pp    phasePlan
	state int
	g     *genCell // the shard's counters of the phase
}

// checkInterruption checks that an incomplete GeneratorBenchsealV1 run
// holds only what an interruption can leave. capture runs the phases in
// one order (repeat by repeat, point by point, warmup before measure) and
// writes each phase's records in request-number order, so a run stopped at
// any instant has every phase before the stop complete, the phase it
// stopped in holding a contiguous prefix of its requests (the ones in
// flight recorded as cancelled, or lost with a kill and counted missing),
// and no record after it. Anything else — a hole, a short phase followed
// by a later one — is work removed, not an interruption. In a sharded run
// each shard (its share of every phase) is checked so; a shard never run
// is one interrupted before its first request. It returns false when it
// reported a problem.
func (c *RecordChecker) checkInterruption(add func(field, format string, args ...any), order []phaseState, shard int) bool {
	if !c.m.Incomplete {
		return true
	}
	stop := -1
	for i, ps := range order {
		switch {
		case stop < 0 && ps.state != phaseComplete:
			stop = i
		case stop >= 0 && ps.state != phaseEmpty:
			who := ""
			if c.shards > 1 {
				who = " of " + shardDesc(shard, c.shards)
			}
			add("", "incomplete run: %s has records%s, but %s before it in run order (repeat by repeat, point by point, warmup first) is not complete: an interruption stops a run once, so this is work removed", ps.pp.what(), who, order[stop].pp.what())
			return false
		}
	}
	return true
}

func (pp *phasePlan) what() string {
	return fmt.Sprintf("point %q repeat %d (%s)", pp.point.Name, pp.repeat, pp.phase)
}

// share returns how many of a phase's n requests the run holds when
// complete: all of them, or a shard run's share.
func (c *RecordChecker) share(pp *phasePlan, n int64) int64 {
	if c.shardIdx < 0 {
		return n
	}
	return ShardRequests(c.m.Load.Mode, pp.point.Concurrency, c.shards, c.shardIdx, n)
}

// checkCount compares the records of a phase with its declared count (a
// shard run's: its share of it).
func (c *RecordChecker) checkCount(add func(field, format string, args ...any), pp *phasePlan, have int64) {
	n := int64(pp.requests)
	if n <= 0 {
		return
	}
	n = c.share(pp, n)
	if have < n && pp.duration == 0 && pp.phase == PhaseMeasure {
		c.sum.Missing += n - have
	}
	what := PhaseName(c.m, pp.point.Name, pp.repeat, pp.phase)
	switch {
	case have > n:
		add(pp.field, "%s has %d records, more than the %d declared", what, have, n)
	case pp.duration == 0 && have > 0: // a phase without records: Finish says so
		if msg := MissingWork(c.m, what, have, n); msg != "" {
			add(pp.field, "%s", msg)
		}
	}
}

// PhaseName names a phase of a point × repeat of run m in a problem:
// point "c4" repeat 0 (measure), in a shard run followed by whose run it
// is.
func PhaseName(m *Manifest, point string, repeat int, phase string) string {
	what := (&phasePlan{point: &Point{Name: point}, repeat: repeat, phase: phase}).what()
	if m.Shard != nil {
		what += " in the run of " + shardDesc(m.Shard.Index, m.ShardCount())
	}
	return what
}

// MissingWork is the rule "no work removed" (docs/format.md) for a phase
// whose manifest declares a request count and no duration, named what
// (PhaseName), holding have records of the declared (a shard run: its
// share): fewer are valid only in a run marked incomplete, where the
// missing requests are counts.not_sent and misses in SLO attainment (see
// replay). It returns the problem's message, or "" when there is none.
// validate and replay both apply it.
func MissingWork(m *Manifest, what string, have, declared int64) string {
	if have >= declared || m.Incomplete {
		return ""
	}
	return fmt.Sprintf("%s has %d records, the manifest declares %d: %d request(s) are missing (a run missing work is valid only when marked incomplete, "+
		"and then they count as not sent (counts.not_sent) and as misses in SLO attainment: manifest fields incomplete and incomplete_reason, "+
		"on import --set incomplete=true --set incomplete_reason=WHY)", what, have, declared, declared-have)
}

// checkGeneratedPhase checks the request numbers and the schedule of one
// phase of a GeneratorBenchsealV1 run, given its counters per shard (one
// when not sharded), and returns per shard whether its share of the phase
// is empty, partial or complete. Request numbers are contiguous from 0 in
// each shard's share (ShardOf) even in an incomplete run (capture writes
// them in order). A share is complete when it has all of the declared
// count's, in rate mode all of the schedule regenerated from the seed; a
// closed-loop phase bounded only by its duration (never sharded) is
// complete once it has records (nothing fixes its count).
func (c *RecordChecker) checkGeneratedPhase(add func(field, format string, args ...any), pp *phasePlan, gs []genCell) []int {
	states := make([]int, len(gs))
	var total, maxK int64 = 0, -1
	for _, g := range gs {
		total += g.n
		if g.n > 0 {
			maxK = max(maxK, g.maxK)
		}
	}
	if total == 0 {
		return states
	}
	n := int64(pp.requests)
	c.checkRequestNumbers(add, pp, gs, n, maxK)
	// A closed-loop phase bounded by its duration (never sharded) must
	// have run it.
	durationShort := false
	if g := &gs[0]; len(gs) == 1 && g.ends != nil {
		durationShort = !c.checkRanDuration(add, pp, g)
	}
	for s := range gs {
		gs[s].ends = nil
	}
	// length is the phase's number of requests when known (-1: not).
	length := int64(-1)
	if n > 0 && pp.duration == 0 {
		length = n
	}
	walk := c.phaseWalk(add, pp, gs, n)
	if walk != nil {
		length = walk.length
	}
	c.phaseStates(states, pp, gs, length, durationShort)
	if walk == nil {
		return states
	}
	if expect := c.share(pp, length); expect > total {
		c.scheduleBeyondRecords(add, pp, walk, expect, total, n, len(gs))
	}
	for s := range gs {
		walk.report(add, c, pp, s)
		gs[s].sched = nil
	}
	return states
}

// checkRequestNumbers checks one phase's request numbers against its
// records (gs its counters per shard, n its declared count or 0, maxK
// its highest number): none beyond the declared count, and in each
// shard's share none repeated or missing before the highest.
// checkGeneratedPhase's first phase.
func (c *RecordChecker) checkRequestNumbers(add func(field, format string, args ...any), pp *phasePlan, gs []genCell, n, maxK int64) {
	mode, conc, S := c.m.Load.Mode, pp.point.Concurrency, len(gs)
	if n > 0 && maxK >= n {
		add("id", "%s has request number %d, beyond the %d declared (%s)", pp.what(), maxK, n, pp.field)
	}
	for s := range gs {
		g := &gs[s]
		if g.n == 0 {
			continue
		}
		want, whose := g.maxK+1, ""
		if S > 1 {
			want, whose = ShardRequests(mode, conc, S, s, g.maxK+1), shardDesc(s, S)+"'s "
		}
		switch {
		case g.n > want: // more records than numbers: some number repeats
			add("id", "%s: %srequest numbers run to %d, which leaves room for %d records, but %d exist (a request number is repeated)", pp.what(), whose, g.maxK, want, g.n)
		case g.n < want && S == 1:
			add("id", "%s: request numbers run to %d (%d requests, counting from 0) but only %d records exist: %d request(s) are missing (an interruption leaves a contiguous prefix of request numbers)", pp.what(), g.maxK, want, g.n, want-g.n)
		case g.n < want:
			add("id", "%s: %s's request numbers run to %d, so it had %d requests to send before, but only %d records exist: %d request(s) are missing (an interruption leaves each shard a contiguous prefix of its requests)", pp.what(), shardDesc(s, S), g.maxK, want, g.n, want-g.n)
		}
	}
}

// phaseStates sets states[s] to whether shard s's share of the phase is
// empty, partial or complete (length: the phase's number of requests,
// -1 when unknown; durationShort: a duration-bounded phase stopped
// short), for the shards this checker reads. The state rule of
// checkGeneratedPhase, apart from its checks.
func (c *RecordChecker) phaseStates(states []int, pp *phasePlan, gs []genCell, length int64, durationShort bool) {
	mode, conc := c.m.Load.Mode, pp.point.Concurrency
	for s := range gs {
		g := &gs[s]
		if c.shardIdx >= 0 && s != c.shardIdx {
			continue
		}
		switch {
		case g.n == 0:
			states[s] = phaseEmpty
		case durationShort:
			states[s] = phasePartial
		case length < 0 || g.n >= ShardRequests(mode, conc, c.shards, s, length):
			states[s] = phaseComplete
		default:
			states[s] = phasePartial
		}
	}
}

// scheduleBeyondRecords handles a rate phase whose regenerated schedule
// (walk) expects more requests than the total recorded (expect > total;
// n the declared count or 0, S the shards counted in gs): a problem in a
// complete run, else the missing counted now or, for the phase an
// interruption stopped in, once checkInterruption allows it. Split from
// checkGeneratedPhase: the accounting of missing work is its own phase.
func (c *RecordChecker) scheduleBeyondRecords(add func(field, format string, args ...any), pp *phasePlan, walk *scheduleWalk, expect, total, n int64, S int) {
	switch {
	case !c.m.Incomplete:
		add("scheduled_ns", "%s: the schedule regenerated from %s has more than the %d requests recorded: work is missing", pp.what(), scheduleSource(pp), total)
	case pp.duration == 0 || pp.phase != PhaseMeasure:
		// checkCount counts the missing of a count-bounded phase.
	case !walk.cut:
		c.sum.Missing += expect - total
	default:
		// The phase an interruption stopped in counts its unsent
		// requests as missing, and its schedule goes on past what
		// the records needed: count the rest once checkInterruption
		// shows this is a phase an interruption can stop in (a
		// publisher could cut every phase short).
		have := total * int64(max(S, c.shards))
		want := have + maxMissingRegenerated
		if n > 0 {
			want = min(want, n)
		}
		c.unsent = append(c.unsent, unsentCount{pp: *pp, total: total, want: want})
	}
}

// phaseWalk compares a rate phase's records with its regenerated
// schedule (nil: none to regenerate, or it cannot be, which it reports).
func (c *RecordChecker) phaseWalk(add func(field, format string, args ...any), pp *phasePlan, gs []genCell, n int64) *scheduleWalk {
	if _, problem := c.phaseScheduler(pp); problem != "" {
		add("scheduled_ns", "%s: %s", pp.what(), problem)
		return nil
	}
	if !c.rate || c.m.Client.Seed == nil || c.m.Workload.Sessions != nil {
		// A session run's schedule is its sessions' arrivals, checked
		// by checkSessionArrivals.
		return nil
	}
	return c.walkSchedule(pp, gs, c.scheduleNeed(gs, n))
}

// unsentCount is a phase an interruption may have stopped in whose
// unsent requests are counted once the run order is checked: the
// schedule regenerated up to want offsets, less the total recorded.
type unsentCount struct {
	pp    phasePlan
	total int64
	want  int64
}

// countUnsent adds to the summary's missing the unsent requests of the
// phases an interruption stopped in, streaming their schedules (bounded by
// maxMissingRegenerated past the records each).
func (c *RecordChecker) countUnsent() {
	for _, u := range c.unsent {
		pp := &u.pp
		g, _ := c.phaseScheduler(pp)
		length := int64(0)
		for length < u.want {
			if _, ok := g.next(); !ok {
				break
			}
			length++
		}
		if expect := c.share(pp, length); expect > u.total {
			c.sum.Missing += expect - u.total
		}
	}
	c.unsent = nil
}

// phaseScheduler returns the generator of a rate phase's schedule: from
// client.seed, or for a trace replay from the workload items' trace_ns.
// problem says why a trace replay's schedule cannot be regenerated ("":
// it can, or the phase is no trace replay).
func (c *RecordChecker) phaseScheduler(pp *phasePlan) (g *scheduler, problem string) {
	if pp.point.Arrival != ArrivalTrace {
		if !c.rate || c.m.Client.Seed == nil {
			return nil, ""
		}
		return newScheduler(pp.point.Arrival, pp.point.Rate, pp.point.Burstiness, time.Duration(pp.duration),
			*c.m.Client.Seed, scheduleStream(pp)), ""
	}
	t := c.m.Workload.Trace
	if t == nil {
		return nil, "arrival " + ArrivalTrace + " without workload.trace"
	}
	if c.workload == nil {
		return nil, "a trace replay's schedule is regenerated from " + WorkloadFile + ", which the run does not ship"
	}
	ns, ok := c.workload.TraceNS()
	switch {
	case !ok:
		return nil, "a trace replay's schedule is regenerated from the trace_ns of every workload item, in order, but " + WorkloadFile + " does not give one for every item"
	case len(ns) != t.Requests:
		return nil, fmt.Sprintf("workload.trace declares %d requests, but %s has %d items with trace_ns", t.Requests, WorkloadFile, len(ns))
	}
	return &scheduler{arrival: ArrivalTrace, trace: ns, speedup: t.Speedup}, ""
}

// scheduleSource names what a rate phase's schedule is regenerated from.
func scheduleSource(pp *phasePlan) string {
	if pp.point.Arrival == ArrivalTrace {
		return "the replayed trace (" + WorkloadFile + " trace_ns ÷ workload.trace.speedup)"
	}
	return "client.seed"
}

// scheduleStream is the random stream capture draws a phase's schedule
// from.
func scheduleStream(pp *phasePlan) uint64 { return uint64(pp.pi)<<20 | uint64(len(pp.phase)) }

// scheduleNeed returns how many offsets of a rate phase's schedule its
// records need: up to each checked shard's next request number after its
// records (so a schedule longer than the records shows), never beyond the
// declared count n (when n > 0). A request number or count is the
// publisher's and bounds nothing here; the records do: a shard's g.n
// records, contiguous in its share, reach request number s + (g.n−1)·S at
// most, and a larger one was reported (checkGeneratedPhase). So the walk
// is O(records × shards) in time (shards ≤ MaxShards) and holds nothing
// per offset.
func (c *RecordChecker) scheduleNeed(gs []genCell, n int64) int64 {
	S := int64(len(gs))
	need := int64(0)
	for s := range gs {
		if gs[s].n == 0 && c.shardIdx >= 0 && s != c.shardIdx {
			continue
		}
		// In rate mode ShardOf gives request k to shard k mod S.
		need = max(need, int64(s)+gs[s].n*S+1)
	}
	if n > 0 {
		need = min(need, n)
	}
	return need
}

// scheduleWalk is the outcome of comparing the recorded schedules of a
// rate phase's shares with the one regenerated from the seed.
type scheduleWalk struct {
	// length is the number of offsets regenerated: the whole schedule
	// when cut is false, else the first length of a longer one.
	length int64
	cut    bool
	bad    []int    // per shard, the records off the schedule
	first  []string // per shard, the first of them
}

// walkSchedule regenerates the first need offsets of a rate phase's
// schedule one at a time and compares each shard's recorded scheduled
// times with them, relative to the share's first request: shards start
// their phases on their own clocks, so only offsets within a shard are
// fixed by the seed.
func (c *RecordChecker) walkSchedule(pp *phasePlan, gs []genCell, need int64) *scheduleWalk {
	S := len(gs)
	w := &scheduleWalk{bad: make([]int, S), first: make([]string, S)}
	next := make([]int, S)      // per shard, its first record not yet compared
	baseExp := make([]int64, S) // per shard, the regenerated offset of its first record
	for s := range gs {
		slices.SortFunc(gs[s].sched, func(a, b kSched) int { return cmp.Compare(a.k, b.k) })
	}
	g, _ := c.phaseScheduler(pp)
	for w.length < need {
		t, ok := g.next()
		if !ok {
			break
		}
		k := w.length
		w.length++
		s := ShardOf(c.m.Load.Mode, pp.point.Concurrency, S, k)
		recs := gs[s].sched
		if next[s] < len(recs) && recs[next[s]].k == k && next[s] == 0 {
			baseExp[s] = t
		}
		for ; next[s] < len(recs) && recs[next[s]].k == k; next[s]++ {
			e, base := recs[next[s]], recs[0]
			got, exp := e.s-base.s, t-baseExp[s]
			if d := got - exp; d > ScheduleToleranceNS || d < -ScheduleToleranceNS {
				w.bad[s]++
				if w.first[s] == "" {
					w.first[s] = fmt.Sprintf("request %d is scheduled %d ns after request %d, the regenerated schedule says %d ns", e.k, got, base.k, exp)
				}
			}
		}
	}
	w.cut = w.length == need
	for s := range gs {
		// Records past the regenerated schedule: past its end, or
		// numbered beyond what the records allow (reported apart).
		if rest := len(gs[s].sched) - next[s]; rest > 0 {
			if w.first[s] == "" {
				w.first[s] = fmt.Sprintf("request %d is beyond the regenerated schedule of %d requests", gs[s].sched[next[s]].k, w.length)
			}
			w.bad[s] += rest
		}
	}
	return w
}

// report adds the problem of shard s's records off the schedule, if any.
func (w *scheduleWalk) report(add func(field, format string, args ...any), c *RecordChecker, pp *phasePlan, s int) {
	if w.bad[s] == 0 {
		return
	}
	who := ""
	if c.shards > 1 {
		who = " (" + shardDesc(s, c.shards) + ")"
	}
	add("scheduled_ns", "%s%s: %d request(s) off the schedule regenerated from %s (load.generator %q), e.g. %s", pp.what(), who, w.bad[s], scheduleSource(pp), GeneratorBenchsealV1, w.first[s])
}

// DurationEndToleranceNS is how long before the end of its declared
// duration the last requests of a closed-loop phase may end: none. capture's
// workers stop when the end_ns of their last request reaches the phase's
// first send + duration (so a loaded client cannot end a worker early),
// which is the deadline checked here; the allowance only absorbs rounding.
const DurationEndToleranceNS = int64(time.Microsecond)

// phaseDuration returns the declared duration of the phase of cell.
func (c *RecordChecker) phaseDuration(cell int, phase string) Duration {
	if phase == PhaseWarmup {
		return c.m.Load.Warmup.Duration
	}
	return c.m.Load.Points[cell/c.repeats].Duration
}

// checkRanDuration checks that a closed-loop phase bounded by its duration
// ran that long: capture's workers each send until the deadline (first
// send + duration), so every worker's last request ends after it. Fewer
// than min(concurrency, records) requests ending after the deadline (less
// DurationEndToleranceNS) means the phase was cut short: an incomplete run
// may stop there, a complete one is missing work. It reports whether the
// phase is complete.
func (c *RecordChecker) checkRanDuration(add func(field, format string, args ...any), pp *phasePlan, g *genCell) bool {
	if pp.requests > 0 && g.n >= int64(pp.requests) {
		return true // the count ended it first
	}
	deadline := g.firstSent + int64(pp.duration) - DurationEndToleranceNS
	late := int64(0)
	for _, e := range g.ends {
		if e >= deadline {
			late++
		}
	}
	want := min(int64(pp.point.Concurrency), g.n)
	if late >= want {
		return true
	}
	if !c.m.Incomplete {
		add("end_ns", "%s: only %d request(s) end after the phase's declared duration of %s (less %s of rounding) from its first send, but each of its %d concurrent workers sends until then: the phase was cut short, so work is missing",
			pp.what(), late, time.Duration(pp.duration), time.Duration(DurationEndToleranceNS), pp.point.Concurrency)
	}
	return false
}

// UnverifiedCompleteness lists, one sentence each, the checks that no work
// was removed (or relabelled) which the records of a run under m cannot
// get: without load.generator nothing fixes the request ids, the schedule
// or the run order (so not which requests are warmup), the offered load is
// bounded only from above (closed loop, measured send and end times) or
// not at all, and a point with neither a request count nor a duration
// bounds nothing; an open-loop run without server-metrics scrapes has
// only the records to place its sends in time (serverTally checks them
// against the scrapes). verify prints each beside its verdict as
// UNVERIFIED.
func UnverifiedCompleteness(m *Manifest) []string {
	if m.ExternalReference() {
		return nil
	}
	var out []string
	if m.Load.Generator == "" {
		out = append(out, "no load.generator: request ids were not checked contiguous, no schedule was regenerated from a seed, "+
			"and requests removed from a point without a request count (or from an incomplete run) cannot be detected")
	}
	gen := m.Load.Generator == GeneratorBenchsealV1
	if !gen && (m.Load.Warmup.Requests > 0 || m.Load.Warmup.Duration > 0) {
		out = append(out, "warmup boundary: without load.generator nothing fixes the run order, so the records were not checked to "+
			"send warmup before measure: which requests count as warmup (left out of every metric) is the publisher's word")
	}
	if !gen && max(m.Load.Repeats, 1)*len(m.Load.Points) > 1 {
		out = append(out, "repeats: without load.generator the points × repeats were not checked to be measurements of their own "+
			"(one copied from another, shifted in time, is not detected)")
	}
	switch {
	case m.Imported() && m.Load.Mode == ModeConcurrency:
		out = append(out, "offered load: an import's declared concurrency is the tool's own setting (re-derived from its files), "+
			"not checked against the requests in flight, which some tools let exceed it")
	case offeredChecked(m) && !gen:
		out = append(out, "offered load: the declared concurrency of each point is checked only as an upper bound (never more "+
			"requests in flight than declared); without load.generator nothing shows a point ran at it rather than below it")
	case m.Load.Mode == ModeConcurrency && !offeredChecked(m):
		out = append(out, "offered load: sent_ns and end_ns are not both measured, so the declared concurrency of each point "+
			"was not checked against the requests in flight")
	case m.Load.Mode == ModeRate && !gen:
		out = append(out, "offered load: without load.generator no schedule was regenerated, so the declared rate of each "+
			"point was not checked against the send times")
	}
	if m.Load.Mode == ModeRate && !m.Imported() && !hasScrapes(m) {
		out = append(out, "open-loop timing: no server-metrics scrapes, so nothing but the records places the sends in time: "+
			"a run moved onto a denser schedule of the same seed (its rate relabelled, every latency kept) is not detected")
	}
	switch {
	case !m.Imported() && !hasScrapes(m):
		out = append(out, "server counters: no server-metrics scrapes, so the records' request, input-token and output-token "+
			"counts were not cross-checked against the engine's own counters: they are the signer's word")
	case !m.Imported() && countFromNS(m.ServerMetrics.Scrapes) == 0:
		out = append(out, "scrape timing: no scrape states from_ns (when its request was sent), so the records were not checked "+
			"to end before the scrape after their point was sent, nor that scrape to follow the last end within "+nsSeconds(AfterScrapeSlackNS)+": "+
			"a run re-laid onto a denser schedule (closed loop at more workers, open loop at a higher rate) is not detected")
	}
	for i, p := range m.Load.Points {
		if p.Requests == 0 && p.Duration == 0 && m.Load.Duration == 0 {
			out = append(out, fmt.Sprintf("load.points[%d] %q declares neither requests nor duration: nothing bounds its work, so no missing request can be detected", i, p.Name))
		}
	}
	return out
}

// hasScrapes reports whether m lists a server-metrics scrape that was
// stored (not failed).
func hasScrapes(m *Manifest) bool {
	if m.ServerMetrics == nil {
		return false
	}
	for _, s := range m.ServerMetrics.Scrapes {
		if s.Error == "" {
			return true
		}
	}
	return false
}
