package replay

import (
	"cmp"
	"fmt"
	"iter"
	"math"
	"math/big"
	"strings"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/stats"
)

// overloadCfg is what the overload test needs from the manifest.
type overloadCfg struct {
	loop    string
	offered map[string]*big.Rat
	// shareNote says, in a shard run, that offered is the shard's share.
	shareNote map[string]string
	// burst maps a closed-loop point to the workers that sent it when no
	// warmup came first: that many first sends are the loop's initial
	// fill, sent at once, not arrivals that followed completions.
	burst map[string]int
	// noTimes says why sent_ns/end_ns cannot be used; noLag why
	// scheduled_ns/sent_ns cannot ("" when they can).
	noTimes, noLag string
	// noOffer says why an open loop's points offer no request rate (""
	// when they do).
	noOffer string
}

func newOverloadCfg(m *schema.Manifest) *overloadCfg {
	c := &overloadCfg{offered: map[string]*big.Rat{}, shareNote: map[string]string{}, burst: map[string]int{}}
	switch m.Load.Mode {
	case schema.ModeRate:
		c.loop = LoopOpen
	case schema.ModeConcurrency:
		c.loop = LoopClosed
	}
	if c.loop == LoopClosed && m.Load.Warmup.Requests == 0 && m.Load.Warmup.Duration == 0 {
		for _, p := range m.Load.Points {
			w := p.Concurrency
			if sh := m.Shard; sh != nil && sh.Count > 1 {
				w = schema.ShardWorkers(p.Concurrency, sh.Count, sh.Index)
			}
			c.burst[p.Name] = w
		}
	}
	for _, p := range m.Load.Points {
		if p.Rate <= 0 {
			continue
		}
		if m.Workload.Sessions != nil {
			// The rate is of sessions; their turns follow completions.
			c.noOffer = "sessions arriving at a rate: the point's rate is sessions started per second; each session's later turns follow its completions, so no request rate is offered"
			continue
		}
		r := new(big.Rat).SetFloat64(p.Rate)
		if sh := m.Shard; sh != nil && sh.Count > 1 {
			// A shard run is offered its share of the point's arrivals,
			// the load its achieved rate is set against.
			k, of := schema.ShardRateShare(sh.Count, sh.Index, int64(p.Requests))
			r.Mul(r, big.NewRat(k, of))
			c.shareNote[p.Name] = fmt.Sprintf("shard %d of %d's share (%d of %d arrivals) of the point's %s req/s",
				sh.Index, sh.Count, k, of, digits.Decimal(p.Rate))
		}
		c.offered[p.Name] = r
	}
	absent := func(fields ...string) string {
		var rs []string
		for _, f := range fields {
			if o := m.Provenance.Field(f); !o.Usable() {
				rs = append(rs, f+" not measured by the source ("+o.How+")")
			}
		}
		return strings.Join(rs, "; ")
	}
	c.noTimes = absent(schema.FieldSent, schema.FieldEnd)
	c.noLag = absent(schema.FieldScheduled, schema.FieldSent)
	return c
}

// overloadData is what a group keeps for the test: per measured request
// its [sent, end] (schema.SpanLog, about 8 bytes) and kind and, when scheduled,
// its [scheduled, lag] (16 bytes); or, once the pass's groups hold
// overloadHeld requests, the same in a temporary file (overload_spill.go).
type overloadData struct {
	spans schema.SpanLog
	// kinds holds, per span, kindOK, kindFailed (error or timeout, for
	// the fast-failure rule), kindRejected or kindOther (cancelled).
	kinds []uint8
	nRej  int64
	lags  [][2]int64
	// file is the pass's spill file (nil: never spill); spilled: this
	// group's requests are in it, its spans and kinds in ent, its lags in
	// lag. inverted: a span ends before it is sent; lagsUnsorted: a
	// schedule came before the one added before it. readErr is the first
	// error reading them back.
	file         *spillFile
	spilled      bool
	ent, lag     spillChunks
	inverted     bool
	lagsUnsorted bool
	readErr      error
}

// Kinds of a measured request in overloadData.
const (
	kindOther uint8 = iota
	kindOK
	kindFailed
	kindRejected
)

// reserve sizes d for n measured requests whose spans take spanBytes,
// lags of them scheduled, so that adding them never grows a slice (the
// second pass knows them from the first).
func (d *overloadData) reserve(n, lags int64, spanBytes int) {
	d.spans.Reserve(spanBytes)
	d.kinds = make([]uint8, 0, n)
	if lags > 0 {
		d.lags = make([][2]int64, 0, lags)
	}
}

// drop frees what d holds; from then on add only counts (keep false).
func (d *overloadData) drop() {
	d.spans.Drop()
	d.kinds, d.lags = nil, nil
	d.spilled, d.ent, d.lag = false, spillChunks{}, spillChunks{}
}

// add adds a measured request; with keep false it only counts its span
// (the first of two passes, see group.firstPass).
func (d *overloadData) add(rec *schema.Record, keep bool) {
	if !keep {
		d.spans.Count(rec.SentNS, rec.EndNS)
		return
	}
	k := kindOther
	switch rec.Status {
	case schema.StatusOK:
		k = kindOK
	case schema.StatusError, schema.StatusTimeout:
		k = kindFailed
	case schema.StatusRejected:
		k = kindRejected
		d.nRej++
	}
	if !d.spilled && d.file != nil && d.file.on {
		d.spill()
	}
	if d.spilled {
		d.spans.Count(rec.SentNS, rec.EndNS)
		d.putSpan([2]int64{rec.SentNS, rec.EndNS}, k)
		if rec.ScheduledNS != nil {
			d.putLag([2]int64{*rec.ScheduledNS, rec.SentNS - *rec.ScheduledNS})
		}
		return
	}
	d.spans.Add(rec.SentNS, rec.EndNS)
	d.kinds = append(d.kinds, k)
	if rec.ScheduledNS != nil {
		d.lags = append(d.lags, [2]int64{*rec.ScheduledNS, rec.SentNS - *rec.ScheduledNS})
	}
	if d.file != nil {
		d.file.hold()
	}
}

// unserved tells the measured requests not served: the rejected ones,
// and with fast set the failures that ended in under
// 1/FastFailureDivisor of okMedian (fastFailures).
type unserved struct {
	fast     bool
	okMedian int64
}

func (u unserved) of(s [2]int64, k uint8) bool {
	return k == kindRejected || (u.fast && k == kindFailed && FastFailureDivisor*(s[1]-s[0]) < u.okMedian)
}

// peak is the most requests in flight at once: swept in bounded memory
// when the spans are spilled (and none ends before it is sent), else
// sorted (schema.PeakInFlightSeq).
func (d *overloadData) peak() int64 {
	if d.spilled && !d.inverted {
		if p, ok := schema.PeakInFlightSwept(d.spanValues()); ok {
			return p
		}
	}
	return schema.PeakInFlightSeq(d.spanValues(), d.spans.Len())
}

func nullTrend(why string) Trend { return Trend{Slope: Null, Low: Null, High: Null, Reason: why} }

// fitTrend fits ys over xs (seconds).
func fitTrend(xs, ys []float64) Trend { return trendOf(stats.LinearFit(xs, ys, TrendConfidence)) }

// fitTrendSeq is fitTrend of the n points pts yields, in the same order
// each time (stats.LinearFitSeq).
func fitTrendSeq(pts iter.Seq2[float64, float64], n int) Trend {
	return trendOf(stats.LinearFitSeq(pts, n, TrendConfidence))
}

// trendOf is the trend of a fit, or why there is none.
func trendOf(f stats.Fit, err error) Trend {
	if err != nil {
		return nullTrend(strings.TrimPrefix(err.Error(), "stats: "))
	}
	t := Trend{Slope: Float(f.Slope), Low: Null, High: Null, Points: f.N}
	if f.Bounded {
		t.Low, t.High = Float(f.Low), Float(f.High)
	} else {
		t.Reason = fmt.Sprintf("%d points leave no interval (need 3)", f.N)
	}
	return t
}

// overload computes the client side of the test for one point × repeat;
// decideOverload completes it once the server column is known.
func (d *overloadData) overload(c *overloadCfg, point string, lagDist Dist) *Overload {
	o := &Overload{Loop: c.loop, OfferedRate: Null, ArrivalRate: Null, FitArrivalRate: Null, CompletionRate: Null, BacklogShare: Null,
		OutstandingPeak: Null, OutstandingMean: Null, SendLagP99NS: Null, Reasons: map[string]string{}}
	o.setOffered(c, point)
	o.Outstanding, o.SendLag = nullTrend(""), nullTrend("")
	d.sendLag(c, o, lagDist)
	notServed, okMedian := d.fastFailures(c, o)
	d.shedLoad(o, okMedian)
	if c.noTimes != "" {
		for _, k := range []string{"arrival_rate", "completion_rate", "backlog_share", "outstanding_peak", "fit"} {
			o.Reasons[k] = c.noTimes
		}
		o.Outstanding.Reason = c.noTimes
		return o
	}
	n := d.spans.Len()
	// One pass: the load's extent, and the earliest send (the first
	// such, as a second pass from the first span would find it), its
	// end − sent, and the latest send.
	var first, last, firstE2E int64
	i := 0
	for s := range d.spanValues() {
		if i == 0 {
			o.loadFromNS, o.loadToNS = s[0], s[1]
			first, last, firstE2E = s[0], s[0], s[1]-s[0]
		}
		i++
		o.loadFromNS, o.loadToNS = min(o.loadFromNS, s[0]), max(o.loadToNS, s[0], s[1])
		if s[0] < first {
			first, firstE2E = s[0], s[1]-s[0]
		}
		last = max(last, s[0])
	}
	o.loadOK = n > 0
	if n < 2 {
		why := fmt.Sprintf("%d measured request(s): no arrival span", n)
		o.noArrivalSpan(why)
		if n == 1 {
			o.OutstandingPeak = Int(1)
		} else {
			o.Reasons["outstanding_peak"] = why
		}
		return o
	}
	o.OutstandingPeak = Int(d.peak())
	if w := c.burst[point]; w > 0 && n <= w {
		// Every send was the closed loop's initial fill: the sends came
		// at once, none waited for a completion, so their spacing is no
		// arrival rate (AIPerf's 100 requests at concurrency 100).
		why := fmt.Sprintf("every one of the %d measured requests was in the closed loop's initial burst (%d workers, no warmup): none was sent after a completion, so there is no arrival rate", n, w)
		o.noArrivalSpan(why)
		return o
	}
	span := last - first
	if span <= 0 {
		why := "every request was sent at the same instant: no arrival span"
		o.noArrivalSpan(why)
		return o
	}
	fit, t0 := d.fitCounts(o, first, last, notServed)
	o.outstandingTrend(d.spanValues(), t0, fit)
	o.clientTest(d, c, firstE2E, span, fit)
	return o
}

// setOffered sets the offered rate of an open loop's point, or why there
// is none.
func (o *Overload) setOffered(c *overloadCfg, point string) {
	switch c.loop {
	case LoopOpen:
		if r, ok := c.offered[point]; ok {
			o.OfferedRate = Exact(new(big.Rat).Set(r))
			o.OfferedShare = c.shareNote[point]
		} else {
			o.Reasons["offered_rate"] = cmp.Or(c.noOffer, "the manifest states no rate for this point")
		}
	case LoopClosed:
		o.Reasons["offered_rate"] = "closed loop: arrivals follow completions, so no rate is offered"
	default:
		o.Reasons["offered_rate"] = "unknown load mode"
	}
}

// noArrivalSpan says why the arrival and completion rates, the backlog
// and the fit are undefined.
func (o *Overload) noArrivalSpan(why string) {
	for _, k := range []string{"arrival_rate", "completion_rate", "backlog_share", "fit"} {
		o.Reasons[k] = why
	}
	o.Outstanding.Reason = why
}

// shedLoad is rule 0: a point that rejected (or failed at once) more
// than the tolerance of its requests (the client refusing to send past
// its cap, or the server turning them away) did not serve its load,
// however long it ran.
func (d *overloadData) shedLoad(o *Overload, okMedian int64) {
	if n, shed := int64(d.spans.Len()), d.nRej+o.FastFailed; 100*shed > OverloadTolerancePercent*n {
		o.clientOver = true
		what := "were rejected"
		if o.FastFailed > 0 {
			what = fmt.Sprintf("were rejected or failed at once (%d rejected, %d failed in under 1/%d of the successful requests' median %s ms)", d.nRej, o.FastFailed, FastFailureDivisor, msText(okMedian))
		}
		o.addEvidence(fmt.Sprintf("%d of %d measured requests (%s %%) %s, not served (more than %d %%): the point shed the load it could not serve",
			shed, n, digits.RatAway(new(big.Rat).SetFrac64(100*shed, n), 1), what, OverloadTolerancePercent))
	}
}

// fitCounts sets the arrival rate over the arrival span first..last, and
// the arrivals, completions (of served requests) and backlog share over
// the fit window, the span after its first quarter; it returns the fit
// window's width and start.
func (d *overloadData) fitCounts(o *Overload, first, last int64, notServed unserved) (fit, t0 int64) {
	span := last - first
	o.ArrivalRate = perSecond(big.NewInt(int64(d.spans.Len()-1)), span)
	t0, t1 := first+span/4, last
	o.FitStartNS, o.FitEndNS = t0, t1
	for s, k := range d.entries() {
		if s[0] > t0 && s[0] <= t1 {
			o.Arrivals++
			if k == kindRejected {
				o.FitRejected++
			}
		}
		if s[1] > t0 && s[1] <= t1 && !notServed.of(s, k) {
			o.Completions++
		}
	}
	fit = t1 - t0
	o.FitArrivalRate = perSecond(big.NewInt(o.Arrivals), fit)
	o.CompletionRate = perSecond(big.NewInt(o.Completions), fit)
	if o.Arrivals > 0 {
		o.BacklogShare = Frac(o.Arrivals-o.Completions, o.Arrivals)
	} else {
		o.Reasons["backlog_share"] = "no arrival in the fit window"
	}
	return fit, t0
}

// outstandingTrend fits the outstanding count's trend over the fit
// window.
func (o *Overload) outstandingTrend(spans iter.Seq[[2]int64], t0, fit int64) {
	// The outstanding count, averaged over each of OverloadWindows equal
	// windows of the fit window (exactly: Σ overlap ÷ width), the windows
	// summed in one pass over the spans (integer sums: their order does
	// not change them).
	if fit < OverloadWindows {
		o.Outstanding.Reason = "fit window shorter than one ns per window"
		return
	}
	var lo, hi, in [OverloadWindows]int64
	for i := range OverloadWindows {
		lo[i], hi[i] = t0+windowEdge(fit, i), t0+windowEdge(fit, i+1)
	}
	for s := range spans {
		for i := range OverloadWindows {
			a, b := max(s[0], lo[i]), min(s[1], hi[i])
			if b > a {
				in[i] += b - a
			}
		}
	}
	xs, ys := make([]float64, OverloadWindows), make([]float64, OverloadWindows)
	var total float64
	for i := range OverloadWindows {
		xs[i] = float64(lo[i]+hi[i]) / 2 / 1e9
		ys[i] = float64(in[i]) / float64(hi[i]-lo[i])
		total += ys[i]
	}
	o.Outstanding = fitTrend(xs, ys)
	o.OutstandingMean = Float(total / OverloadWindows)
}

// clientTest is the client-side test: backlog or rising outstanding
// requests over the fit window, when the point is long and busy enough
// to judge.
func (o *Overload) clientTest(d *overloadData, c *overloadCfg, firstE2E, span, fit int64) {
	gate := ""
	switch {
	case firstE2E > span/4:
		gate = fmt.Sprintf("too short to judge: the first request took %s ms, longer than the first quarter of the arrival span (%s ms) set aside for the load to settle",
			msText(firstE2E), msText(span/4))
	case o.Arrivals < OverloadMinArrivals:
		gate = fmt.Sprintf("too few arrivals to judge: %d in the fit window, need %d", o.Arrivals, OverloadMinArrivals)
	}
	if gate != "" {
		o.Reasons["fit"] = gate
		if c.loop == LoopOpen {
			d.latencyRise(o)
		}
	} else {
		o.clientJudged = true
		var why []string
		m, _ := o.OutstandingMean.Float64()
		if backlog := o.Arrivals - o.Completions; 100*backlog > OverloadTolerancePercent*o.Arrivals && float64(backlog) >= backlogNoiseBound(m) {
			rej := ""
			if o.FitRejected > 0 {
				rej = fmt.Sprintf(" (%d of the arrivals were rejected)", o.FitRejected)
			}
			why = append(why, fmt.Sprintf("arrivals exceeded completions by %d of %d (more than %d %%) over the fit window%s", o.Arrivals-o.Completions, o.Arrivals, OverloadTolerancePercent, rej))
		}
		if o.Outstanding.Significant() {
			s, _ := o.Outstanding.Slope.Float64()
			m, _ := o.OutstandingMean.Float64()
			rise := s * float64(fit) / 1e9
			if rise >= outstandingRiseBound(m) {
				lo, _ := o.Outstanding.Low.Float64()
				why = append(why, fmt.Sprintf("outstanding requests rose by %s over the fit window (slope %s/s, 95 %% CI low %s > 0; at least %s for mean %s)",
					digits.Trend(rise), digits.Trend(s), digits.Trend(lo), digits.Trend(outstandingRiseBound(m)), digits.Trend(m)))
			}
		}
		if len(why) > 0 {
			o.clientOver = true
			o.addEvidence(strings.Join(why, "; "))
		}
	}
}

// fastFailures counts the failures that ended in under
// 1/FastFailureDivisor of the median end − sent of the successful
// requests and sets the fast-failures flag; it returns which requests
// were not served (rejected or failed at once) and that median.
func (d *overloadData) fastFailures(c *overloadCfg, o *Overload) (notServed unserved, okMedian int64) {
	if c.noTimes != "" {
		o.FastFailures = Flag{Why: c.noTimes}
		return notServed, 0
	}
	okMedian, ok := d.okMedian()
	if !ok {
		o.FastFailures = Flag{Why: "no successful request to compare the failures' durations with"}
		return notServed, 0
	}
	notServed = unserved{fast: true, okMedian: okMedian}
	for s, k := range d.entries() {
		if k == kindFailed && notServed.of(s, k) {
			o.FastFailed++
		}
	}
	n := int64(d.spans.Len())
	set := 100*o.FastFailed > FastFailurePercent*n
	why := fmt.Sprintf("no failure ended in under 1/%d of the successful requests' median end − sent (%s ms)", FastFailureDivisor, msText(okMedian))
	if o.FastFailed > 0 {
		limit := fmt.Sprintf("at most %d %%", FastFailurePercent)
		if set {
			limit = fmt.Sprintf("more than %d %%", FastFailurePercent)
		}
		why = fmt.Sprintf("%d of %d measured requests (%s) failed in under 1/%d of the successful requests' median end − sent (%s ms): counted as not served",
			o.FastFailed, n, limit, FastFailureDivisor, msText(okMedian))
	}
	o.FastFailures = setFlag(set, why)
	return notServed, okMedian
}

// okMedian is the median end − sent of the successful requests (the
// lower of the two middle ones), false when none succeeded: selected by
// rank among intSamples when held (its histogram selection, rather than a
// sort of every duration), in two passes when spilled (spilledMedian).
func (d *overloadData) okMedian() (int64, bool) {
	if d.spilled {
		return d.spilledMedian()
	}
	var okDur intSamples
	for s, k := range d.entries() {
		if k == kindOK {
			okDur.add(s[1] - s[0])
		}
	}
	n := okDur.n()
	if n == 0 {
		return 0, false
	}
	return okDur.ranks([]int64{(n-1)/2 + 1})[0], true
}

// addEvidence appends to the evidence for overloaded = true.
func (o *Overload) addEvidence(ev string) {
	o.Reasons["evidence"] = strings.TrimPrefix(o.Reasons["evidence"]+"; "+ev, "; ")
}

// latencyRise is the test for an open-loop point too short for the fit
// window: its served requests' latency (end − sent, s) fitted against
// their send time (s). A load the server keeps up with leaves the
// latency flat however short the point is; arrivals that outpace the
// service by a share x make each second of arrivals add about x seconds
// of waiting. So with at least OverloadMinArrivals served requests, a
// slope whose 95 % interval lies wholly above the tolerance (0.1 s per s)
// decides the point overloaded; anything less leaves it undecided.
func (d *overloadData) latencyRise(o *Overload) {
	served := func(yield func(x, y float64) bool) {
		for s, k := range d.entries() {
			if k != kindRejected && s[1] >= s[0] && !yield(float64(s[0])/1e9, float64(s[1]-s[0])/1e9) {
				return
			}
		}
	}
	n := 0
	for range served {
		n++
	}
	if n < OverloadMinArrivals {
		return
	}
	t := fitTrendSeq(served, n)
	bound := float64(OverloadTolerancePercent) / 100
	if lo, ok := t.Low.Float64(); ok && lo > bound {
		s, _ := t.Slope.Float64()
		o.clientOver = true
		o.addEvidence(fmt.Sprintf("though short, the latency of its %d served requests rose with their send time by %s s per s (95 %% CI low %s > %s): arrivals outpaced the service by more than %d %%",
			t.Points, digits.Trend(s), digits.Trend(lo), digits.Sig(bound, 2), OverloadTolerancePercent))
	}
}

// outstandingRiseBound is the least fitted rise of the outstanding count
// over the fit window that counts as overload, for a window mean m: the
// tolerance share of m, and three standard deviations of a Poisson count
// of mean m (3·√m), so that the fluctuation of a steady load (whose
// window averages are correlated, which narrows the interval) does not
// pass for a trend.
func outstandingRiseBound(m float64) float64 {
	return max(float64(OverloadTolerancePercent)/100*m, 3*math.Sqrt(max(m, 1)))
}

// backlogNoiseBound is the least backlog (arrivals − completions over
// the fit window) that counts as overload for an outstanding mean m.
// For a steady load the backlog is the change of the outstanding count
// between the window's ends, the difference of two counts of about a
// Poisson spread √m each, so three standard deviations of it, 3·√(2m),
// is what a short point's noise can reach.
func backlogNoiseBound(m float64) float64 {
	return 3 * math.Sqrt(2*max(m, 1))
}

// windowEdge is ⌊fit·i ÷ OverloadWindows⌋ without overflowing int64.
func windowEdge(fit int64, i int) int64 {
	q, r := fit/OverloadWindows, fit%OverloadWindows
	return q*int64(i) + r*int64(i)/OverloadWindows
}
