package replay

import (
	"fmt"
	"math/big"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/servermetrics"
)

// queueSim is a synthetic server: slots requests run at once, the others
// wait in one FIFO queue; a request's service takes svc ns.
type queueSim struct {
	free []int64 // when each slot frees
}

func newQueueSim(slots int) *queueSim { return &queueSim{free: make([]int64, slots)} }

// serve returns when a request arriving at t with service svc ends.
func (q *queueSim) serve(t, svc int64) int64 {
	i := 0
	for j, f := range q.free {
		if f < q.free[i] {
			i = j
		}
	}
	end := max(t, q.free[i]) + svc
	q.free[i] = end
	return end
}

// openLoopRun is a rate-mode point: Poisson arrivals at rates[i] for
// counts[i] requests each (in turn), served by a 4-slot server with
// 100 ms ± 20 ms service (capacity about 40 req/s). lag(i) is request i's
// send lag.
func openLoopRun(seed uint64, rates []float64, counts []int, lag func(i int) int64) *memRun {
	rng := rand.New(rand.NewPCG(seed, 13))
	q := newQueueSim(4)
	var recs []*schema.Record
	t := int64(0)
	for k, rate := range rates {
		for range counts[k] {
			t += int64(rng.ExpFloat64() / rate * 1e9)
			i := len(recs)
			sched := t
			sent := sched + lag(i)
			end := q.serve(sent, 80e6+int64(rng.IntN(40e6)))
			recs = append(recs, &schema.Record{ID: fmt.Sprintf("p.r0.m%d", i), Point: "p", Phase: schema.PhaseMeasure, ScheduledNS: &sched, SentNS: sent, EndNS: end,
				ChunksNS: []int64{(end - sent) / 2, end - sent}, OutputTokens: 2, InputTokens: 10, Status: schema.StatusOK})
		}
	}
	slices.SortFunc(recs, func(a, b *schema.Record) int { return int(a.SentNS - b.SentNS) })
	m := manifest(schema.Point{Name: "p", Rate: rates[0], Arrival: schema.ArrivalPoisson})
	return &memRun{m: m, recs: recs}
}

// closedLoopRun is a concurrency-mode point: workers send back to back
// (1 ms apart) to a server of slots slots with 100 ms ± 20 ms service.
func closedLoopRun(seed uint64, workers, slots, n int) *memRun {
	rng := rand.New(rand.NewPCG(seed, 17))
	q := newQueueSim(slots)
	next := make([]int64, workers)
	var recs []*schema.Record
	for i := range n {
		w := 0
		for j := range next {
			if next[j] < next[w] {
				w = j
			}
		}
		sent := next[w]
		end := q.serve(sent, 80e6+int64(rng.IntN(40e6)))
		next[w] = end + 1e6
		recs = append(recs, &schema.Record{ID: fmt.Sprintf("p.r0.m%d", i), Point: "p", Phase: schema.PhaseMeasure, SentNS: sent, EndNS: end,
			ChunksNS: []int64{(end - sent) / 2, end - sent}, OutputTokens: 2, InputTokens: 10, Status: schema.StatusOK})
	}
	slices.SortFunc(recs, func(a, b *schema.Record) int { return int(a.SentNS - b.SentNS) })
	m := manifest(schema.Point{Name: "p", Concurrency: workers})
	m.Load.Mode = schema.ModeConcurrency
	return &memRun{m: m, recs: recs}
}

func noLag(int) int64 { return int64(0) }

func overloadOf(t *testing.T, run *memRun) *Overload {
	t.Helper()
	o := mustReplay(t, run, Options{}).Results[0].Overload
	if o == nil {
		t.Fatal("no overload result")
	}
	return o
}

func wantFlag(t *testing.T, what string, f Flag, want *bool) {
	t.Helper()
	switch {
	case want == nil && f.Set != nil:
		t.Errorf("%s = %v (%s), want null", what, *f.Set, f.Why)
	case want != nil && (f.Set == nil || *f.Set != *want):
		t.Errorf("%s = %v (%s), want %v", what, f.Value(), f.Why, *want)
	}
	if f.Why == "" {
		t.Errorf("%s has no reason", what)
	}
}

// An open loop pushed past its capacity halfway through (24 req/s, then
// 60 req/s against about 40) is flagged overloaded, with the evidence;
// the same server at a steady 24 req/s is not, for any of 20 seeds.
func TestOverloadOpenLoopOnsetDetectedStableNot(t *testing.T) {
	for seed := range uint64(20) {
		o := overloadOf(t, openLoopRun(seed, []float64{24, 60}, []int{300, 300}, noLag))
		wantFlag(t, fmt.Sprintf("seed %d onset: overloaded", seed), o.Overloaded, ptr(true))
		if !o.Outstanding.Significant() || !strings.Contains(o.Overloaded.Why, "arrivals exceeded completions") {
			t.Errorf("seed %d onset: outstanding %+v, why %q", seed, o.Outstanding, o.Overloaded.Why)
		}
		wantFlag(t, "onset: generator-limited", o.GeneratorLimited, ptr(false))

		s := overloadOf(t, openLoopRun(seed, []float64{24}, []int{600}, noLag))
		wantFlag(t, fmt.Sprintf("seed %d stable: overloaded", seed), s.Overloaded, ptr(false))
		wantFlag(t, "stable: generator-limited", s.GeneratorLimited, ptr(false))
		if c, a := s.CompletionRate.Rat(), s.FitArrivalRate.Rat(); c == nil || a == nil || s.Arrivals < 300 {
			t.Errorf("seed %d stable: rates %v %v, arrivals %d", seed, c, a, s.Arrivals)
		}
		if r, _ := s.OfferedRate.Float64(); r != 24 || s.Loop != LoopOpen {
			t.Errorf("offered %v loop %q", s.OfferedRate, s.Loop)
		}
	}
}

// A closed loop cannot pile up requests at the client: completions keep
// up with arrivals and the outstanding count stays at the concurrency
// whether or not the server keeps up, so without the server's waiting
// queue the verdict is unknown — not "no", which a server with fewer
// slots than workers (4 for 8) would make false; generator-limited does
// not apply.
func TestOverloadClosedLoopWithoutQueueIsUnknownGeneratorNotApplicable(t *testing.T) {
	for _, slots := range []int{16, 4} {
		o := overloadOf(t, closedLoopRun(3, 8, slots, 800))
		wantFlag(t, fmt.Sprintf("%d slots: overloaded", slots), o.Overloaded, nil)
		wantFlag(t, "generator-limited", o.GeneratorLimited, nil)
		if !strings.Contains(o.GeneratorLimited.Why, "not applicable") || o.Loop != LoopClosed || !o.OfferedRate.IsNull() ||
			!strings.Contains(o.Overloaded.Why, "a closed loop cannot pile requests up at the client") {
			t.Errorf("closed loop: %+v", o)
		}
		if p, _ := o.OutstandingPeak.Float64(); p != 8 {
			t.Errorf("peak = %v, want 8", o.OutstandingPeak)
		}
	}
}

// A closed loop whose server slows down halfway (its waiting queue goes
// from 0 to 6 and stays) is flagged overloaded by the server's
// waiting-queue trend; the same queue flat at 0 leaves it not flagged.
func TestOverloadClosedLoopQueueOnsetDetectedByServerTrend(t *testing.T) {
	for _, tc := range []struct {
		name  string
		queue func(frac float64) float64
		want  bool
	}{
		{"onset", func(f float64) float64 {
			if f < 0.5 {
				return 0
			}
			return 6
		}, true},
		{"flat", func(float64) float64 { return 0 }, false},
	} {
		res := mustReplay(t, closedLoopRun(5, 8, 16, 800), Options{})
		p := res.Results[0]
		o := p.Overload
		sc := &ServerColumn{Column: &servermetrics.Column{Engine: servermetrics.EngineVLLM}}
		for i := range 21 { // a scrape every 5 % of the fit window
			at := o.FitStartNS + (o.FitEndNS-o.FitStartNS)*int64(i)/20
			sc.waiting = append(sc.waiting, gaugeAt{at, tc.queue(float64(i) / 20)})
		}
		p.Server = sc
		o.Overloaded = Flag{}
		decideOverload(p)
		wantFlag(t, tc.name+": overloaded", o.Overloaded, &tc.want)
		if o.Queue == nil || (tc.want && !strings.Contains(o.Overloaded.Why, "waiting queue rose")) {
			t.Errorf("%s: queue %+v, why %q", tc.name, o.Queue, o.Overloaded.Why)
		}
	}
}

// A client that sends 5 % of its requests 30 ms late did not keep the
// schedule: generator-limited, with the p99 in the evidence.
func TestGeneratorLimitedWhenSendLagP99AboveBound(t *testing.T) {
	late := func(i int) int64 {
		if i%20 == 0 {
			return 30e6
		}
		return 200e3
	}
	o := overloadOf(t, openLoopRun(1, []float64{24}, []int{600}, late))
	wantFlag(t, "generator-limited", o.GeneratorLimited, ptr(true))
	if !strings.Contains(o.GeneratorLimited.Why, "send_lag p99 30.000 ms > 10.000 ms") {
		t.Errorf("why = %q", o.GeneratorLimited.Why)
	}
	// A lag that grows steadily by 40 ms over the point also is, though
	// most requests stay under the bound... as long as p99 does not
	// already say so, the trend does.
	grow := func(i int) int64 { return int64(i) * 15e3 } // 0 … 9 ms
	g := overloadOf(t, openLoopRun(1, []float64{24}, []int{600}, grow))
	wantFlag(t, "growing lag below the bound", g.GeneratorLimited, ptr(false))
	if !g.SendLag.Significant() {
		t.Errorf("send-lag trend %+v, want significant", g.SendLag)
	}
}

// Fields the source did not measure make the flags null with the reason,
// never false; too few requests too.
func TestOverloadFlagsNullWhenNotMeasured(t *testing.T) {
	run := openLoopRun(2, []float64{24}, []int{600}, noLag)
	run.m.Provenance = &schema.Provenance{}
	run.m.Provenance.Set(schema.FieldSent, schema.FieldAbsent, "every request placed at 0")
	o := overloadOf(t, run)
	wantFlag(t, "overloaded", o.Overloaded, nil)
	wantFlag(t, "generator-limited", o.GeneratorLimited, nil)
	if !strings.Contains(o.Overloaded.Why, "sent_ns not measured") || !o.ArrivalRate.IsNull() || !o.OutstandingPeak.IsNull() {
		t.Errorf("overload %+v", o)
	}
	res := mustReplay(t, run, Options{})
	if _, why := res.Resolve("p", 0, "overload.overloaded"); !strings.Contains(why, "sent_ns not measured") {
		t.Errorf("claim reason %q", why)
	}

	few := openLoopRun(2, []float64{24}, []int{12}, noLag)
	f := overloadOf(t, few)
	wantFlag(t, "few: overloaded", f.Overloaded, nil)
	if !strings.Contains(f.Overloaded.Why, "to judge") {
		t.Errorf("why %q", f.Overloaded.Why)
	}
	// Without scheduled_ns an open loop's lag is unknown.
	for _, r := range few.recs {
		r.ScheduledNS = nil
	}
	wantFlag(t, "no schedule: generator-limited", overloadOf(t, few).GeneratorLimited, nil)
}

// The flags are claimable as 1/0 and resolve through the claim paths.
func TestOverloadClaimPaths(t *testing.T) {
	res := mustReplay(t, openLoopRun(0, []float64{24, 60}, []int{300, 300}, noLag), Options{})
	for _, k := range OverloadKeys {
		if err := schema.CheckClaimMetric("benchseal", "overload."+k); err != nil {
			t.Errorf("%s: %v", k, err)
		}
		if _, ok := res.Results[0].Lookup("overload." + k); !ok {
			t.Errorf("overload.%s does not resolve", k)
		}
	}
	if v, why := res.Resolve("p", 0, "overload.overloaded"); why != "" || v.Rat().Cmp(Int(1).Rat()) != 0 {
		t.Errorf("overload.overloaded = %v (%s), want 1", v, why)
	}
	if err := schema.CheckClaimMetric("benchseal", "overload.nope"); err == nil {
		t.Error("overload.nope accepted")
	}
}

// A claim about an overloaded point carries the flag, whatever its
// outcome; one about a steady point carries none; the flag itself can be
// claimed (1) and checked.
func TestClaimOnAnOverloadedPointShowsTheFlag(t *testing.T) {
	over := openLoopRun(0, []float64{24, 60}, []int{300, 300}, noLag)
	res := mustReplay(t, over, Options{})
	tp, _ := res.Results[0].Scalars["request_throughput"].Float64()
	claims := &schema.Claims{Schema: schema.ClaimsSchemaV1, Definitions: "benchseal", Tolerance: 1e-9, Points: []schema.PointClaim{{Point: "p", Metrics: []schema.Claim{
		{Metric: "request_throughput", Value: tp}, {Metric: "overload.overloaded", Value: 1}, {Metric: "overload.generator_limited", Value: 1},
	}}}}
	over.c = claims
	checks, err := ClaimChecker{}.CheckClaims(t.Context(), over)
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []string{schema.ClaimMatched, schema.ClaimMatched, schema.ClaimMismatched} {
		if c := checks[i]; c.Outcome != want || !slices.Equal(c.Flags, []string{"overloaded"}) {
			t.Errorf("claim %s: outcome %s flags %v, want %s with [overloaded]", c.Metric, c.Outcome, c.Flags, want)
		}
	}
	steady := openLoopRun(0, []float64{24}, []int{600}, noLag)
	steady.c = &schema.Claims{Schema: schema.ClaimsSchemaV1, Definitions: "benchseal", Tolerance: 1e-9, Points: []schema.PointClaim{{Point: "p", Metrics: []schema.Claim{{Metric: "overload.overloaded", Value: 0}}}}}
	checks, err = ClaimChecker{}.CheckClaims(t.Context(), steady)
	if err != nil || checks[0].Outcome != schema.ClaimMatched || len(checks[0].Flags) != 0 {
		t.Errorf("steady: %+v, %v", checks, err)
	}
}

// Hostile times (a run spanning most of int64, ends before sends) give
// numbers or nulls with reasons, never a panic.
func TestOverloadSurvivesExtremeTimes(t *testing.T) {
	const big = int64(1) << 62
	run := openLoopRun(4, []float64{24}, []int{40}, noLag)
	run.recs[0].SentNS, run.recs[0].EndNS = 0, big
	run.recs[1].EndNS = run.recs[1].SentNS - 5
	last := run.recs[len(run.recs)-1]
	last.SentNS, last.EndNS = big, big+10
	sch := int64(-big)
	last.ScheduledNS = &sch
	o := overloadOf(t, run)
	if o.Overloaded.Why == "" || o.GeneratorLimited.Why == "" {
		t.Errorf("flags without reasons: %+v", o)
	}
}

// The publisher's default claims assert each point's flags where they are
// decided, and leave them out where they are null.
func TestPublishedClaimsAssertTheFlags(t *testing.T) {
	c := mustReplay(t, openLoopRun(0, []float64{24, 60}, []int{300, 300}, noLag), Options{}).Claims(nil, DefaultClaimTolerance)
	got := map[string]float64{}
	for _, m := range c.Points[0].Metrics {
		got[m.Metric] = m.Value
	}
	if got["overload.overloaded"] != 1 || got["overload.generator_limited"] != 0 {
		t.Errorf("claims %v", got)
	}
	c = mustReplay(t, closedLoopRun(1, 4, 4, 200), Options{}).Claims(nil, DefaultClaimTolerance)
	for _, m := range c.Points[0].Metrics {
		if m.Metric == "overload.generator_limited" {
			t.Errorf("a null flag was claimed: %+v", m)
		}
	}
}

// Leaving requests out never makes a point look as if it kept up: a
// steady point of an incomplete run with requests missing is undecided,
// and an overloaded one stays flagged.
func TestOverloadOfAnIncompleteRunNeverClearsAPoint(t *testing.T) {
	for _, tc := range []struct {
		rates  []float64
		counts []int
		want   *bool
	}{{[]float64{24}, []int{600}, nil}, {[]float64{24, 60}, []int{300, 300}, ptr(true)}} {
		run := openLoopRun(6, tc.rates, tc.counts, noLag)
		run.m.Load.Points[0].Requests = 700
		run.m.Incomplete, run.m.IncompleteReason = true, "interrupted"
		wantFlag(t, fmt.Sprintf("incomplete %v", tc.rates), overloadOf(t, run).Overloaded, tc.want)
	}
}

// shedRun is a rate-mode point against the 4-slot server of openLoopRun
// that sheds load: a request arriving while capN are outstanding is
// rejected (by the client's own cap when client, else by a server 429
// after 1 ms), and a seeded share reject of the others is rejected at
// random (a 429 unrelated to load).
func shedRun(seed uint64, rate float64, n, capN int, client bool, reject float64) *memRun {
	rng := rand.New(rand.NewPCG(seed, 19))
	q := newQueueSim(4)
	var recs []*schema.Record
	var ends []int64
	t := int64(0)
	for i := range n {
		t += int64(rng.ExpFloat64() / rate * 1e9)
		sched := t
		out := 0
		for _, e := range ends {
			if e > t {
				out++
			}
		}
		rec := &schema.Record{ID: fmt.Sprintf("p.r0.m%d", i), Point: "p", Phase: schema.PhaseMeasure, ScheduledNS: &sched, SentNS: t, InputTokens: 10, ChunksNS: []int64{}}
		switch {
		case out >= capN && client:
			rec.EndNS, rec.Status, rec.Error = t, schema.StatusRejected, fmt.Sprintf("client: %d requests outstanding (max_outstanding); not sent", capN)
		case out >= capN || rng.Float64() < reject:
			rec.EndNS, rec.Status, rec.Error = t+1e6, schema.StatusRejected, "429"
		default:
			end := q.serve(t, 80e6+int64(rng.IntN(40e6)))
			rec.EndNS, rec.Status, rec.OutputTokens = end, schema.StatusOK, 2
			rec.ChunksNS = []int64{(end - t) / 2, end - t}
			ends = append(ends, end)
		}
		recs = append(recs, rec)
	}
	m := manifest(schema.Point{Name: "p", Rate: rate, Arrival: schema.ArrivalPoisson})
	return &memRun{m: m, recs: recs}
}

// A point that sheds the load it cannot serve — the client refusing to
// send past its cap, or the server answering 429 — is overloaded:
// rejected requests are arrivals that were not served, not completions
// that kept up. The flag is claimed as 1. A steady point with 2 % of
// random 429s stays not overloaded, for 20 seeds.
func TestOverloadedWhenTheLoadIsShedByRejection(t *testing.T) {
	for _, client := range []bool{true, false} {
		run := shedRun(1, 120, 1500, 8, client, 0)
		res := mustReplay(t, run, Options{})
		o := res.Results[0].Overload
		wantFlag(t, fmt.Sprintf("client %v: overloaded", client), o.Overloaded, ptr(true))
		if !strings.Contains(o.Overloaded.Why, "rejected") || o.Completions*2 > o.Arrivals {
			t.Errorf("client %v: completions %d of %d arrivals, why %q", client, o.Completions, o.Arrivals, o.Overloaded.Why)
		}
		c := res.Claims(nil, DefaultClaimTolerance)
		for _, m := range c.Points[0].Metrics {
			if m.Metric == "overload.overloaded" && m.Value != 1 {
				t.Errorf("client %v: claimed overload.overloaded = %v", client, m.Value)
			}
		}
	}
	for seed := range uint64(20) {
		o := overloadOf(t, shedRun(seed, 24, 600, 1000, false, 0.02))
		wantFlag(t, fmt.Sprintf("seed %d steady with random 429s: overloaded", seed), o.Overloaded, ptr(false))
	}
}

// shortRun is a short rate-mode point (n requests at rate) against a
// server of slots slots with service svc ± 20 %, busy for the first
// busy ns with earlier work (a point that follows an overloaded one).
func shortRun(seed uint64, rate float64, n, slots int, svc, busy int64) *memRun {
	rng := rand.New(rand.NewPCG(seed, 23))
	q := newQueueSim(slots)
	for i := range q.free {
		q.free[i] = busy
	}
	var recs []*schema.Record
	t := int64(0)
	for i := range n {
		t += int64(rng.ExpFloat64() / rate * 1e9)
		sched := t
		end := q.serve(t, svc*4/5+rng.Int64N(svc*2/5))
		recs = append(recs, &schema.Record{ID: fmt.Sprintf("p.r0.m%d", i), Point: "p", Phase: schema.PhaseMeasure, ScheduledNS: &sched, SentNS: t, EndNS: end,
			ChunksNS: []int64{(end - t) / 2, end - t}, OutputTokens: 2, InputTokens: 10, Status: schema.StatusOK})
	}
	m := manifest(schema.Point{Name: "p", Rate: rate, Arrival: schema.ArrivalPoisson})
	return &memRun{m: m, recs: recs}
}

// A short point far past capacity (100 requests at 200 req/s against
// about 40, behind 300 ms of earlier work, so its first request is slower
// than the settle quarter) is decided overloaded: the latency of its
// requests climbs with their send time. A short burst into a server with
// room for all of it (latency flat) stays undecided, never true, for 20
// seeds.
func TestShortOverloadedPointIsDecided(t *testing.T) {
	for seed := range uint64(20) {
		o := overloadOf(t, shortRun(seed, 200, 100, 4, 100e6, 300e6))
		wantFlag(t, fmt.Sprintf("seed %d short overloaded", seed), o.Overloaded, ptr(true))
		if !strings.Contains(o.Overloaded.Why, "latency") {
			t.Errorf("seed %d: why %q", seed, o.Overloaded.Why)
		}
		b := overloadOf(t, shortRun(seed, 200, 40, 64, 500e6, 0))
		wantFlag(t, fmt.Sprintf("seed %d short burst with room", seed), b.Overloaded, nil)
		if !strings.Contains(b.Overloaded.Why, "to judge") {
			t.Errorf("seed %d burst: why %q", seed, b.Overloaded.Why)
		}
	}
}

// A short steady point (25 requests at 30 % of capacity) is not flagged
// by the noise of a few requests ending after its fit window: the
// backlog must also exceed 3·√(2·outstanding mean). Before that bound 11
// of these 200 seeds were flagged; at most 1 % may be.
func TestShortSteadyPointBacklogNoiseNotFlagged(t *testing.T) {
	flagged := 0
	for seed := range uint64(200) {
		if o := overloadOf(t, shortRun(seed, 12, 25, 4, 100e6, 0)); o.Overloaded.True() {
			flagged++
		}
	}
	if flagged > 2 {
		t.Errorf("%d of 200 short steady points flagged overloaded, want at most 2", flagged)
	}
}

// A closed loop whose measured requests all fit in its workers, with no
// warmup before them (AIPerf's 100 requests at concurrency 100), sent
// them at once: their spacing is no arrival rate, so arrival rate,
// completions and backlog are null with that reason; one request more
// than the workers makes them a loop again.
func TestClosedLoopInitialBurstHasNoArrivalRate(t *testing.T) {
	o := overloadOf(t, closedLoopRun(3, 100, 4, 100))
	for _, k := range []string{"arrival_rate", "completion_rate", "backlog_share"} {
		v, _ := o.Field(k)
		if why, _ := o.NullReason(k); !v.IsNull() || !strings.Contains(why, "initial burst (100 workers, no warmup)") {
			t.Errorf("%s = %v (%q), want null for the initial burst", k, v, why)
		}
	}
	o = overloadOf(t, closedLoopRun(3, 100, 4, 101))
	if o.ArrivalRate.IsNull() {
		t.Errorf("101 requests of 100 workers: arrival rate null (%v)", o.Reasons)
	}
	warm := closedLoopRun(3, 100, 4, 100)
	warm.m.Load.Warmup = schema.Warmup{Requests: 100}
	for i, r := range warm.recs { // after a warmup, the sends follow completions
		r.SentNS += int64(i) * 1e6
		r.EndNS += int64(i) * 1e6
	}
	if o := overloadOf(t, warm); o.ArrivalRate.IsNull() {
		t.Errorf("after a warmup: arrival rate null (%v)", o.Reasons)
	}
}

// A shard run is offered its share of the point's rate (shard 1 of 2 of
// a 24 req/s point of 600 requests: 300 of them, 12 req/s), and says so;
// the same records unsharded (a run of 300 requests: unsharded, 300 of
// 600 would be work removed) are offered the whole 24.
func TestShardRunIsOfferedItsShare(t *testing.T) {
	run := openLoopRun(1, []float64{24}, []int{300}, noLag)
	run.m.Load.Points[0].Requests = 300
	if o := overloadOf(t, run); o.OfferedShare != "" || o.OfferedRate.Rat().Cmp(big.NewRat(24, 1)) != 0 {
		t.Fatalf("unsharded: offered %v %q", o.OfferedRate, o.OfferedShare)
	}
	run.m.Load.Points[0].Requests = 600
	run.m.Shard = &schema.Shard{Index: 1, Count: 2}
	o := overloadOf(t, run)
	if o.OfferedRate.Rat().Cmp(big.NewRat(12, 1)) != 0 || o.OfferedShare != "shard 1 of 2's share (300 of 600 arrivals) of the point's 24 req/s" {
		t.Errorf("shard 1 of 2: offered %v %q", o.OfferedRate, o.OfferedShare)
	}
}

// A steady point whose fit window saw more ends than arrivals (requests
// sent in the quarter set aside ended in it) has a negative backlog, and
// the verdict says why instead of printing it bare.
func TestNegativeBacklogIsExplained(t *testing.T) {
	found := 0
	for seed := range uint64(40) {
		o := overloadOf(t, openLoopRun(seed, []float64{24}, []int{60}, noLag))
		if o.Completions <= o.Arrivals || o.Overloaded.True() || o.Reasons["fit"] != "" {
			continue
		}
		found++
		if !strings.Contains(o.Overloaded.Why, "negative, requests sent before the fit window ended in it") {
			t.Errorf("seed %d: backlog %d of %d: why %q", seed, o.Arrivals-o.Completions, o.Arrivals, o.Overloaded.Why)
		}
	}
	if found == 0 {
		t.Fatal("no seed gave a negative backlog")
	}
}

// fastFail turns every measured request slower than limit into an error
// returned 1 ms after its send: SLO misses made instant failures.
func fastFail(run *memRun, limit int64) (n int) {
	for _, r := range run.recs {
		if r.Phase == schema.PhaseMeasure && r.EndNS-r.SentNS > limit {
			r.EndNS, r.Status, r.ChunksNS, r.OutputTokens = r.SentNS+1e6, schema.StatusError, nil, 0
			n++
		}
	}
	return n
}

// Failures far faster than the point's successful requests are flagged
// (fast-failures) and are not served requests in the overload test: an
// overloaded point whose slow requests were turned into instant errors
// stays overloaded (before: the errors counted as completions, the
// backlog vanished and the flag cleared), and its flags name both. A
// stable point with a few fast errors is not flagged.
func TestFastFailuresAreFlaggedAndDoNotClearOverload(t *testing.T) {
	for seed := range uint64(10) {
		run := openLoopRun(seed, []float64{24, 60}, []int{300, 300}, noLag)
		if n := fastFail(run, 300e6); n < 60 {
			t.Fatalf("seed %d: only %d requests made fast failures", seed, n)
		}
		o := overloadOf(t, run)
		wantFlag(t, fmt.Sprintf("seed %d: fast failures", seed), o.FastFailures, ptr(true))
		wantFlag(t, fmt.Sprintf("seed %d: overloaded", seed), o.Overloaded, ptr(true))
		if f := o.Flags(); !slices.Contains(f, "overloaded") || !slices.Contains(f, FastFailuresFlag) {
			t.Errorf("seed %d: flags %v", seed, f)
		}
		stable := openLoopRun(seed, []float64{24}, []int{600}, noLag)
		for i, r := range stable.recs {
			if i%200 == 7 {
				r.EndNS, r.Status, r.ChunksNS, r.OutputTokens = r.SentNS+1e6, schema.StatusError, nil, 0
			}
		}
		s := overloadOf(t, stable)
		wantFlag(t, fmt.Sprintf("seed %d stable: fast failures", seed), s.FastFailures, ptr(false))
		wantFlag(t, fmt.Sprintf("seed %d stable: overloaded", seed), s.Overloaded, ptr(false))
	}
}

// TestOKMedianMatchesSort: the successful requests' median end − sent,
// selected by rank, is the lower middle of their sorted durations, for
// counts on both sides of the selection's sort limit and durations past
// 2³², among failures that do not count.
func TestOKMedianMatchesSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 24))
	for _, n := range []int{0, 1, 2, 3, 10, sortBelow, sortBelow + 1, 3 * sortBelow} {
		for _, wide := range []bool{false, true} {
			var d overloadData
			var want []int64
			for i := range n {
				dur := rng.Int64N(3e8)
				if wide && i%3 == 0 {
					dur += 1 << 33
				}
				rec := &schema.Record{SentNS: int64(i) * 1e6, Status: schema.StatusOK}
				if i%5 == 4 {
					rec.Status = schema.StatusError
				} else {
					want = append(want, dur)
				}
				rec.EndNS = rec.SentNS + dur
				d.add(rec, true)
			}
			got, ok := d.okMedian()
			if ok != (len(want) > 0) {
				t.Fatalf("n %d: ok %v with %d successes", n, ok, len(want))
			}
			if len(want) == 0 {
				continue
			}
			slices.Sort(want)
			if w := want[(len(want)-1)/2]; got != w {
				t.Errorf("n %d, wide %v: okMedian %d, want %d", n, wide, got, w)
			}
		}
	}
}
