package replay

import (
	"fmt"
	"math/big"

	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/stats"
)

// This file holds the canonical accumulator of one point and repeat (a
// group): what it counts per record, exactly, and how it finishes into a
// PointResult. engine.go drives the groups over a run.

type config struct {
	// rules are the switches of an older definitions version (the zero
	// value computes the current rules).
	rules versionRules
	def   Definition
	slo   SLOSpec
	// untimed is set for the non-streaming boundary: a response arrives
	// whole, so only the end-to-end latency is measured.
	untimed bool
	// prov is the manifest's provenance (nil: every field measured).
	prov *schema.Provenance
	// workload holds the run's workload items (nil: not read).
	workload *schema.WorkloadItems
	smooth   *SmoothParams
	stall    int64
	// gate nulls the metrics the records cannot determine (nil: none).
	gate *gate
	// skip holds the metrics this replay does not compute anyway
	// (skippedMetrics).
	skip   map[string]bool
	sweep  *SweepSpec
	mlperf *MLPerfLimits
	over   *overloadCfg
	// shards is the bookkeeping of a run merged from shards (nil
	// otherwise): its timeline uncertainty bounds the window.
	shards *schema.Shards
	// origTool is the tool an imported run was imported from ("" for
	// any other run): peer definitions read orig only as their own.
	origTool string
}

// group accumulates one point and repeat.
type group struct {
	cfg    *config
	counts Counts
	// missing counts declared requests without a record (incomplete
	// runs), already in counts as not sent.
	missing int64

	haveSent bool
	minSent  int64
	// maxEnd is the latest end of any measured request, ok or failed
	// (end_ns, or its last chunk if later): the elapsed window's end.
	maxEnd int64
	// maxLast is the latest final token of an ok request (the window of
	// the peer tools that stop there).
	haveLast bool
	maxLast  int64
	haveSch  bool
	minSch   int64
	maxSch   int64

	outTok, inTok, goodTok bigSum

	ttft, e2e, itl, lag, ttftS, e2eS intSamples
	tpot                             ratSamples
	zeroGaps                         int64 // ITLs of exactly 0 ns (chunks read at one instant)

	stallReqs, stallCount int64
	stallMax              int64
	haveStall             bool

	smoothTok   bigSum
	smoothLate  bigSum // Σ min(max(l,0), L)
	haveSmooth  bool
	sweepConst  int64
	sweepVals   []frac
	mlperfTPOT  intSamples // truncated TPOTs
	mlperfOneTk int64

	peer *peerGroup
	// cold accumulates the warmup records (nil: none).
	cold *coldGroup
	// cache sums the engine's cached prompt tokens over every phase.
	cache schema.CacheTally
	// sessions accumulates the measured turns of a session run.
	sessions sessionGroup
	// prefix sums expected and reported cached tokens (PrefixExpected).
	prefix PrefixExpected
	// od keeps the send and end times for the overload test.
	od overloadData
	// firstPass is set in the first of two passes over the records
	// (twopass.go); once *firstPass is true, od is not kept.
	firstPass *bool
	// spillErr is the error reading od (or GuideLLM's rate events) back
	// from its file, if any: the replay fails with it (finishGroups).
	spillErr error
}

// bigSum is an exact int64 sum that spills into a big integer.
type bigSum struct {
	s   int64
	big big.Int
}

func (b *bigSum) add(x int64) {
	r := b.s + x
	if (x > 0 && r < b.s) || (x < 0 && r > b.s) {
		b.big.Add(&b.big, big.NewInt(b.s))
		r = x
	}
	b.s = r
}

func (b *bigSum) value() *big.Int { return new(big.Int).Add(&b.big, big.NewInt(b.s)) }

func newGroup(cfg *config) *group {
	g := &group{cfg: cfg}
	g.peer = newPeerGroup(cfg)
	return g
}

// add accumulates one record: a warmup record goes to the cold column; a
// measured one is counted (addSent), and an ok one with content enters
// the latency distributions (addLatencies), its chunk gaps (addGaps) and
// the SLO (judge).
func (g *group) add(rec *schema.Record) error {
	g.cache.Add(rec)
	if rec.Phase == schema.PhaseWarmup {
		g.counts.Warmup++
		if g.cold == nil {
			g.cold = &coldGroup{}
		}
		g.cold.add(rec)
		return nil
	}
	if rec.Phase != schema.PhaseMeasure {
		return fmt.Errorf("unknown phase %q", rec.Phase)
	}
	if err := g.addSent(rec); err != nil {
		return err
	}
	g.sessions.add(rec)
	if rec.Session != nil {
		g.prefix.addTurn(rec, g.sessions.previous(rec), g.cfg.prov.Field(schema.FieldInputTokens).Usable())
	} else {
		g.prefix.add(g.cfg.workload, rec)
	}
	if g.peer != nil {
		if err := g.peer.add(rec); err != nil {
			return err
		}
	}
	if g.cfg.smooth != nil {
		g.addSmooth(rec)
	}
	if rec.Status != schema.StatusOK {
		return nil
	}
	k := len(rec.ChunksNS)
	if k == 0 {
		g.counts.OKNoContent++
		return nil
	}
	n := rec.OutputTokens
	F, L := rec.ChunksNS[0], rec.ChunksNS[k-1]
	last := rec.SentNS + L
	if !g.haveLast || last > g.maxLast {
		g.maxLast, g.haveLast = last, true
	}
	g.outTok.add(n)
	g.inTok.add(rec.InputTokens + n)
	g.e2e.add(L)
	if rec.ScheduledNS != nil {
		g.e2eS.add(last - *rec.ScheduledNS)
	}
	if g.cfg.untimed {
		return g.addUntimedSLO(L, n)
	}
	g.addLatencies(rec, F, L, n)
	g.addGaps(rec)
	o := Observed{TTFT: ExactNS(F, 1), E2E: ExactNS(L, 1), OneToken: n < 2}
	if n >= 2 {
		o.TPOT = ExactNS(L-F, n-1)
	}
	g.judge(o, n)
	return nil
}

// addSent counts a measured record by status and widens the window and
// the scheduled span with it.
func (g *group) addSent(rec *schema.Record) error {
	c := &g.counts
	c.Sent++
	switch rec.Status {
	case schema.StatusOK:
		c.OK++
	case schema.StatusError:
		c.Error++
	case schema.StatusTimeout:
		c.Timeout++
	case schema.StatusCancelled:
		c.Cancelled++
	case schema.StatusRejected:
		c.Rejected++
	default:
		return fmt.Errorf("unknown status %q", rec.Status)
	}
	end := rec.EndNS
	if k := len(rec.ChunksNS); k > 0 {
		end = max(end, rec.SentNS+rec.ChunksNS[k-1])
	}
	if !g.haveSent || rec.SentNS < g.minSent {
		g.minSent = rec.SentNS
	}
	if !g.haveSent || end > g.maxEnd {
		g.maxEnd = end
	}
	g.haveSent = true
	g.od.add(rec, g.firstPass == nil || !*g.firstPass)
	if rec.ScheduledNS != nil {
		s := *rec.ScheduledNS
		g.lag.add(rec.SentNS - s)
		if !g.haveSch || s < g.minSch {
			g.minSch = s
		}
		if !g.haveSch || s > g.maxSch {
			g.maxSch = s
		}
		g.haveSch = true
	}
	return nil
}

// addLatencies adds a streamed ok answer's TTFT (also from its scheduled
// time) and TPOT, first chunk F and last L, of n output tokens.
func (g *group) addLatencies(rec *schema.Record, F, L, n int64) {
	g.ttft.add(F)
	if n >= 2 {
		g.tpot.add(L-F, n-1)
	} else {
		g.counts.OneToken++
	}
	if g.cfg.mlperf != nil {
		if n >= 2 {
			g.mlperfTPOT.add((L - F) / (n - 1))
		} else {
			g.mlperfOneTk++
		}
	}
	if rec.ScheduledNS != nil {
		g.ttftS.add(rec.SentNS + F - *rec.ScheduledNS)
	}
}

// addGaps adds the gaps between an answer's chunks to the ITL and counts
// those above the stall threshold.
func (g *group) addGaps(rec *schema.Record) {
	c := rec.ChunksNS
	if len(c) < 2 {
		return
	}
	g.itl.addDiffs(c)
	stalls, stall := int64(0), g.cfg.stall
	mx := c[1] - c[0]
	for j := 1; j < len(c); j++ {
		gap := c[j] - c[j-1]
		if gap == 0 {
			g.zeroGaps++
		}
		if gap > stall {
			stalls++
		}
		mx = max(mx, gap)
	}
	if !g.haveStall || mx > g.stallMax {
		g.stallMax, g.haveStall = mx, true
	}
	if stalls > 0 {
		g.stallReqs++
		g.stallCount += stalls
	}
}

// NonStreamingNote explains what replay measures at the non-streaming
// boundary.
const NonStreamingNote = "boundary non-streaming: each response arrived whole, so only e2e is measured; " +
	"ttft, tpot and itl are not (n = 0); under an SLO with a TTFT or TPOT limit, " + schema.MetricGoodput + ", " + schema.MetricTokenGoodput + ", " +
	"counts.good and SLO attainment are null with the reason (first_chunk_ns not measured): no response " +
	"can be shown to meet those limits; an E2E-only SLO is applied to e2e"

// ReasonNonStreamingFirstChunk is how a non-streaming run's first_chunk_ns
// is absent when its manifest has no provenance block saying so.
const ReasonNonStreamingFirstChunk = "non-streaming: the response arrived whole, so there is no first-token time"

// addUntimedSLO applies the SLO to an ok response of the non-streaming
// boundary, where only its end-to-end latency L is known: a TTFT or TPOT
// limit leaves it unjudged (the gate nulls every SLO metric then, since
// first_chunk_ns is absent at this boundary); an E2E limit is judged.
func (g *group) addUntimedSLO(L, n int64) error {
	g.judge(Observed{TTFT: NotMeasured, E2E: ExactNS(L, 1), TPOT: NotMeasured}, n)
	return nil
}

// judge counts one ok response with content, of n output tokens, under
// the SLO (good when it passes) and under the sweep (its swept metric's
// value when the other limits pass; a one-token answer the policy passes
// counts at every swept TPOT limit).
func (g *group) judge(o Observed, n int64) {
	slo := g.cfg.slo
	if slo.Any() && slo.Judge(o).Verdict == Pass {
		g.counts.Good++
		g.goodTok.add(n)
	}
	sw := g.cfg.sweep
	if sw == nil || slo.judgeSwept(o, sw.Metric).Verdict != Pass {
		return
	}
	m := o.metric(sw.Metric)
	if sw.Metric == schema.SLOTPOT && o.OneToken {
		g.sweepConst++
		return
	}
	g.sweepVals = append(g.sweepVals, frac{m.num, m.den})
}

// tokenIndex returns the 1-based index of the first token of chunk j of k
// chunks: from chunk_tokens when given, else one token per chunk when the
// counts agree, else tokens spread evenly (⌊j·n/k⌋+1).
func tokenIndex(rec *schema.Record, j int, cum int64) int64 {
	k := int64(len(rec.ChunksNS))
	n := rec.OutputTokens
	switch {
	case len(rec.ChunkTokens) == len(rec.ChunksNS):
		return cum + 1
	case n == k || n <= 0:
		return int64(j) + 1
	default:
		return int64(j)*n/k + 1
	}
}

func (g *group) addSmooth(rec *schema.Record) {
	p := g.cfg.smooth
	n := rec.OutputTokens
	if len(rec.ChunksNS) == 0 {
		return // l_r undefined: benefit 0
	}
	C := rec.SentNS
	if rec.ScheduledNS != nil {
		C = *rec.ScheduledNS
	}
	var cum int64
	var l int64
	for j, t := range rec.ChunksNS {
		i := tokenIndex(rec, j, cum)
		late := rec.SentNS + t - C - p.VNS*i
		if j == 0 || late > l {
			l = late
		}
		if len(rec.ChunkTokens) == len(rec.ChunksNS) {
			cum += rec.ChunkTokens[j]
		}
	}
	g.smoothTok.add(n)
	g.smoothLate.add(min(max(l, 0), p.LNS))
	g.haveSmooth = true
}

func (p *SmoothParams) check() error {
	const want = "smooth goodput needs alpha=A (a decimal ≥ 0), v=DURATION (> 0, per output token) and f=linear:DURATION (> 0), e.g. alpha=2.5,v=200ms,f=linear:2s"
	switch {
	case p.Alpha == nil:
		return badInput("%s; alpha is missing", want)
	case p.Alpha.Sign() < 0:
		return badInput("%s; alpha is negative", want)
	case p.VNS <= 0:
		return badInput("%s; v is missing or 0", want)
	case p.F == "":
		return badInput("%s; f is missing", want)
	case p.F != "linear":
		return badInput("%s; f=%s is not linear", want, p.F)
	case p.LNS <= 0:
		return badInput("%s; the duration of f=linear: is missing or 0", want)
	}
	return nil
}

// elapsedWindow is benchseal's measurement window: from the earliest send
// of a measured request to the latest end of any measured request, ok or
// failed (timeout, error, cancelled, rejected), so the time a failed
// request held its slot stays in the denominator and failing hard work
// can never shorten it. Requests without a record (not sent) do not
// extend it. ok is false when no measured request was sent.
func (g *group) elapsedWindow() (w int64, ok bool) {
	if !g.haveSent {
		return 0, false
	}
	return g.maxEnd - g.minSent, true
}

// okWindow is the window from the earliest send to the latest final token
// of an ok request: the window of peer tools that stop there (MLPerf's
// definitions read it). ok is false without such a token.
func (g *group) okWindow() (w int64, ok bool) {
	if !g.haveSent || !g.haveLast {
		return 0, false
	}
	return g.maxLast - g.minSent, true
}

// measuredWindow returns the group's elapsed window as the gate allows
// it: the records' own, else the tool's stored window (src says which),
// else none (why says why).
func (g *group) measuredWindow(k groupKey) (w int64, ok bool, src, why string) {
	ew, have := g.elapsedWindow()
	if g.cfg.rules.windowEndsAtLastOK {
		// benchseal/2026.11's window, kept for the claims made under it
		// (its known defect: versions.go).
		ew, have = g.okWindow()
	}
	return g.cfg.gate.window(k, g, ew, have)
}

// ReasonNothingSent is the null reason of the window and every rate of a
// point and repeat in which no measured request was sent.
const ReasonNothingSent = "no measured request was sent: there is no elapsed measurement window"

// ReasonNoOKToken is the null reason of the window and every rate of a
// point and repeat under benchseal/2026.11, whose window ends at the last
// ok request's final token, when no ok request gave one.
const ReasonNoOKToken = "no ok request gave a final token: benchseal/2026.11's window ends at the last one"

// ReasonZeroWindow is the null reason of the rates of a point and repeat
// whose measured requests were all sent and ended at one instant.
const ReasonZeroWindow = "the window is 0 ns (every measured request was sent and ended at one instant): no rate over it"

func (g *group) finish(k groupKey) *PointResult {
	pr := &PointResult{Point: k.point, Repeat: k.repeat, Counts: g.counts, Scalars: map[string]Value{}, Dists: map[string]Dist{}}
	okc := g.counts.OK - g.counts.OKNoContent
	w, hasWindow, src, whyNoWindow := g.measuredWindow(k)
	g.cfg.gate.setWindowSource(pr, src)
	if hasWindow {
		pr.Scalars[schema.MetricWindow] = Int(w)
		if src == "" && g.haveSent && !g.cfg.rules.windowEndsAtLastOK {
			pr.window = &[2]int64{g.minSent, g.maxEnd}
		}
	} else {
		pr.Scalars[schema.MetricWindow] = Null
	}
	pr.Scalars[schema.MetricRequestThroughput] = perSecond(big.NewInt(okc), w)
	pr.Scalars[schema.MetricOutputTokenThroughput] = perSecond(g.outTok.value(), w)
	pr.Scalars[schema.MetricTotalTokenThroughput] = perSecond(g.inTok.value(), w)
	slo := g.cfg.slo
	if slo.Any() {
		pr.Scalars[schema.MetricGoodput] = perSecond(big.NewInt(g.counts.Good), w)
		pr.Scalars[schema.MetricTokenGoodput] = perSecond(g.goodTok.value(), w)
		pr.goodTokens = g.goodTok.value()
		pr.Scalars[schema.MetricSLOAttainment] = ratio(big.NewInt(g.counts.Good), big.NewInt(g.counts.Declared()))
		pr.Scalars[schema.MetricSLOAttainmentOK] = ratio(big.NewInt(g.counts.Good), big.NewInt(g.counts.OK))
	} else {
		for _, s := range []string{schema.MetricGoodput, schema.MetricTokenGoodput, schema.MetricSLOAttainment, schema.MetricSLOAttainmentOK} {
			pr.Scalars[s] = Null
		}
	}
	pr.Scalars[schema.MetricSmoothGoodput] = Null
	if p := g.cfg.smooth; p != nil && w > 0 {
		// Σ(n_r − α·min(max(l,0),L)/L)·10⁹/T.
		b := new(big.Rat).SetInt(g.smoothTok.value())
		pen := new(big.Rat).SetFrac(g.smoothLate.value(), big.NewInt(p.LNS))
		pen.Mul(pen, p.Alpha)
		b.Sub(b, pen)
		b.Mul(b, big.NewRat(1e9, w))
		pr.Scalars[schema.MetricSmoothGoodput] = Exact(b)
	}
	pr.Dists[schema.MetricTTFT] = intDist(&g.ttft)
	pr.Dists[schema.MetricE2E] = intDist(&g.e2e)
	pr.Dists[schema.MetricTPOT] = ratDist(&g.tpot)
	pr.Dists[schema.MetricITL] = intDist(&g.itl)
	pr.Dists[schema.MetricSendLag] = intDist(&g.lag)
	pr.Dists[schema.MetricTTFTFromSchedule] = intDist(&g.ttftS)
	pr.Dists[schema.MetricE2EFromSchedule] = intDist(&g.e2eS)
	pr.Stalls = Stalls{ThresholdNS: g.cfg.stall, Count: g.stallCount, Requests: g.stallReqs, MaxGapNS: Null}
	if g.haveStall {
		pr.Stalls.MaxGapNS = Int(g.stallMax)
	}
	if g.cfg.mlperf != nil {
		pr.MLPerf = g.mlperfCheck(k, g.cfg.mlperf)
	}
	if g.peer != nil {
		g.peer.finish(pr, g)
		whyNoWindow = g.peer.noWindow
	}
	if !slo.Any() {
		// Without an objective no request is good or bad: null, not 0.
		if pr.NullReasons == nil {
			pr.NullReasons = map[string]string{}
		}
		pr.NullReasons[schema.MetricCountGood] = ReasonNoSLO
	}
	if whyNoWindow == "" && g.peer == nil {
		switch {
		case !hasWindow && !g.haveSent:
			whyNoWindow = ReasonNothingSent
		case !hasWindow && g.cfg.rules.windowEndsAtLastOK:
			whyNoWindow = ReasonNoOKToken
		case hasWindow && w <= 0:
			for _, k := range windowRates {
				if !g.cfg.skip[k] {
					setNull(pr, k, ReasonZeroWindow)
				}
			}
		}
	}
	g.cfg.gate.apply(pr, whyNoWindow, g.cfg.skip)
	if g.cold != nil {
		pr.Cold = g.cold.finish(g.cfg.untimed, g.cfg.prov, pr)
	}
	pr.Cache = g.cache.Use()
	pr.Sessions = g.sessions.finish(g.cfg.untimed, g.cfg.prov, pr)
	if g.prefix.Requests > 0 {
		p := g.prefix
		pr.PrefixExpected = &p
	}
	pr.Overload = g.od.overload(g.cfg.over, k.point, pr.Dists[schema.MetricSendLag])
	if g.spillErr == nil {
		g.spillErr = g.od.readErr
	}
	pr.Overload.missing = g.missing
	end := g.maxEnd
	if g.cfg.rules.windowEndsAtLastOK {
		end = g.maxLast
	}
	pr.Timeline = timelineOf(g.cfg.shards, pr, end)
	g.od = overloadData{}
	return pr
}

// ReasonNoSLO is the null reason of counts.good when no SLO is set.
const ReasonNoSLO = "no SLO: nothing defines a good request"

// windowRates are the scalars that depend on a measurement window.
var windowRates = schema.WindowedMetrics

// nullWindowRates nulls the rates of a group with missing requests: the
// window those would have needed is unknown, and a rate over the shorter
// window of the recorded ones could rise when slow requests are left out.
func nullWindowRates(pr *PointResult, missing int64) string {
	for _, s := range windowRates {
		if _, ok := pr.Scalars[s]; ok {
			pr.Scalars[s] = Null
		}
	}
	return fmt.Sprintf("point %s repeat %d: %d declared measured request(s) have no record (incomplete run); they count as not sent and as SLO misses, and its throughputs, goodput and cost are null: the window they needed is unknown", pr.Point, pr.Repeat, missing)
}

func nearestRank(n int64, p Percentile) int64 { return stats.NearestRank(n, p.Num, p.Den) }

func intDist(s *intSamples) Dist {
	d := emptyDist()
	n := s.n()
	d.N = n
	if n == 0 {
		return d
	}
	sum, sq := s.acc.sums()
	d.Mean, d.Stddev = meanStd(n, sum, sq)
	d.Min, d.Max = Int(s.min), Int(s.max)
	for i, v := range s.ranks(intDistRanks(n)) {
		d.P[i] = Int(v)
	}
	return d
}

func ratDist(s *ratSamples) Dist {
	d := emptyDist()
	n := s.n()
	d.N = n
	if n == 0 {
		return d
	}
	sum, sq := s.sums()
	bn := new(big.Rat).SetInt64(n)
	d.Mean = Exact(new(big.Rat).Quo(sum, bn))
	// var = Σx²/n − (Σx/n)².
	v := new(big.Rat).Quo(sq, bn)
	m2 := new(big.Rat).Mul(d.Mean.r, d.Mean.r)
	d.Stddev = sqrtOf(v.Sub(v, m2))
	xs := s.ranks(ratDistRanks(n))
	d.Min, d.Max = xs[0].value(), xs[1].value()
	for i := range Percentiles {
		d.P[i] = xs[2+i].value()
	}
	return d
}
