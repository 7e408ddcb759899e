package replay

import (
	"fmt"
	"math"

	"github.com/benchseal/benchseal/schema"
)

// peerRules are one peer tool's rules for one point and repeat: how a
// record is read (add) and how the distributions, window and rates are
// finished. The state they keep is the tool's own; what every tool counts
// is the peerGroup passed in.
type peerRules interface {
	// add reads one measured record; o is its decoded orig (nil when it
	// has none) and ok says whether its status is ok.
	add(p *peerGroup, rec *schema.Record, o orig, ok bool)
	// finish writes the tool's distributions and scalars into pr.
	finish(p *peerGroup, pr *PointResult, g *group)
}

// peerGroup accumulates one point and repeat under a peer definition, in
// float64 ns (or integer ns for mlperf), the way that tool computes: what
// every tool counts is here, the rest in the tool's peerRules.
type peerGroup struct {
	rules            peerRules
	succ, good, sent int64
	// unjudged counts the successes an SLO limit cannot judge (a value
	// the source did not store); goodput, attainment and counts.good
	// are then null with unjudgedWhy.
	unjudged    int64
	unjudgedWhy string
	// readOrig is set when the run was imported from this tool: only
	// then are the records' orig fields its own (another tool's orig
	// means something else under the same names).
	readOrig bool
	prov     *schema.Provenance
	// sweep, when set, collects what the sweep needs (see peer_sweep.go);
	// dur and den are the window and attainment denominator finish used.
	sweep         *peerSweep
	dur           float64
	den           int64
	outTok, inTok int64   // inTok: input + output tokens (total-token throughput)
	start, end    float64 // the span of the records' times (ns, or epoch s for GuideLLM)
	haveSE        bool
	// noWindow says why the records give no window ("" when they do).
	noWindow string
	slo      SLOSpec
	// def names the definitions (token_goodput's null reason).
	def string
	// err is set by the rules when a record's kept values cannot be
	// replayed under them (the replay then fails, naming the record).
	err error
	// ver holds the switches of an older version of the definitions.
	ver versionRules
}

// newPeerGroup returns the accumulator of one point and repeat under
// cfg's peer definitions, or nil under the canonical ones.
func newPeerGroup(cfg *config) *peerGroup {
	rules := cfg.def.peerRules()
	if rules == nil {
		return nil
	}
	p := &peerGroup{rules: rules, slo: cfg.slo, readOrig: cfg.origTool == cfg.def.Name(), prov: cfg.prov, def: cfg.def.Name(), ver: cfg.rules}
	if cfg.sweep != nil {
		p.sweep = &peerSweep{metric: cfg.sweep.Metric}
	}
	return p
}

func (p *peerGroup) add(rec *schema.Record) error {
	p.sent++
	var o orig
	if p.readOrig {
		o = parseOrig(rec.Orig)
	}
	p.rules.add(p, rec, o, rec.Status == schema.StatusOK)
	return p.err
}

func (p *peerGroup) finish(pr *PointResult, g *group) { p.rules.finish(p, pr, g) }

// peerCloser returns g's peer rules when they hold files to remove.
func (g *group) peerCloser() (interface{ close() }, bool) {
	if g.peer == nil {
		return nil, false
	}
	c, ok := g.peer.rules.(interface{ close() })
	return c, ok
}

// notesList returns what the tool's rules could not compute for this group.
func (p *peerGroup) notesList() []string {
	if n, ok := p.rules.(interface{ notes() []string }); ok {
		return n.notes()
	}
	return nil
}

func (p *peerGroup) span(s, e float64) {
	if math.IsNaN(s) || math.IsNaN(e) {
		return
	}
	if !p.haveSE || s < p.start {
		p.start = s
	}
	if !p.haveSE || e > p.end {
		p.end = e
	}
	p.haveSE = true
}

// fallback values from the integer record fields, in ns.
func recFirstLast(rec *schema.Record) (F, L float64, ok bool) {
	if len(rec.ChunksNS) == 0 {
		return 0, 0, false
	}
	return float64(rec.ChunksNS[0]), float64(rec.ChunksNS[len(rec.ChunksNS)-1]), true
}

func recGaps(rec *schema.Record) []float64 {
	var g []float64
	for j := 1; j < len(rec.ChunksNS); j++ {
		g = append(g, float64(rec.ChunksNS[j]-rec.ChunksNS[j-1]))
	}
	return g
}

// judge applies the SLO to one successful request's tool values, under
// the one-token policy in p.slo (the definitions' own when they fix one).
// A NaN tpot with n < 2 is a one-token answer, which the tool gives no
// TPOT; any other NaN is a value the source did not store: a limit on it
// cannot be judged, so the request is neither good nor a miss unless
// another limit fails it (unjudged, and goodput is null).
func (p *peerGroup) judge(ttft, e2e, tpot, n float64) {
	o := Observed{TTFT: FloatNS(ttft), E2E: FloatNS(e2e), TPOT: FloatNS(tpot), OneToken: math.IsNaN(tpot) && n < 2}
	s := p.slo
	if p.sweep != nil {
		p.sweep.add(s, o)
	}
	if !s.Any() {
		return
	}
	switch s.Judge(o).Verdict {
	case Pass:
		p.good++
	case Unknown:
		p.unjudged++
	}
}

// gated returns the window the records give (mlperf: first send to the
// last ok token, or the span of the records' times) taken through the
// gate: the tool's stored window, or none (NaN), when the send times were
// not measured.
func (p *peerGroup) gated(pr *PointResult, g *group) float64 {
	ow, have := g.okWindow()
	w, ok, src, why := g.cfg.gate.window(groupKey{pr.Point, pr.Repeat}, g, ow, have)
	g.cfg.gate.setWindowSource(pr, src)
	p.noWindow = why
	if !ok {
		return math.NaN()
	}
	return float64(w)
}

// spanWindow is the window of tools that time a run from its first send to
// its last response: the span of the records' times in ns, through the
// gate when the send times were not measured; NaN without records.
func (p *peerGroup) spanWindow(pr *PointResult, g *group) float64 {
	if !p.haveSE {
		return math.NaN()
	}
	dur := p.end - p.start
	if g.cfg.gate.windowUnmeasured() {
		dur = p.gated(pr, g)
	}
	return dur
}

// rate is x per second of a window of dur ns, in float64 as the tools
// divide; null without a positive window.
func rate(x, dur float64) Value {
	if !(dur > 0) {
		return Null
	}
	return Float(x / (dur / 1e9))
}

// throughputs writes window_ns (float64 ns) and the request, output-token
// and total-token throughputs over it.
func (p *peerGroup) throughputs(pr *PointResult, dur float64) {
	pr.Scalars[schema.MetricWindow] = Float(dur)
	pr.Scalars[schema.MetricRequestThroughput] = rate(float64(p.succ), dur)
	p.tokenThroughputs(pr, dur)
}

func (p *peerGroup) tokenThroughputs(pr *PointResult, dur float64) {
	pr.Scalars[schema.MetricOutputTokenThroughput] = rate(float64(p.outTok), dur)
	pr.Scalars[schema.MetricTotalTokenThroughput] = rate(float64(p.inTok), dur)
}

// goodput writes goodput and SLO attainment when an SLO is set; den is
// the attainment denominator the tool divides by.
func (p *peerGroup) goodput(pr *PointResult, dur float64, den int64) {
	p.dur, p.den = dur, den
	if !p.slo.Any() {
		return
	}
	pr.Scalars[schema.MetricGoodput] = rate(float64(p.good), dur)
	if den > 0 {
		pr.Scalars[schema.MetricSLOAttainment] = Float(float64(p.good) / float64(den))
	} else {
		pr.Scalars[schema.MetricSLOAttainment] = Null
	}
	if p.succ > 0 {
		pr.Scalars[schema.MetricSLOAttainmentOK] = Float(float64(p.good) / float64(p.succ))
	} else {
		pr.Scalars[schema.MetricSLOAttainmentOK] = Null
	}
	pr.Counts.Good = p.good
	pr.Scalars[schema.MetricTokenGoodput] = Null
	setNull(pr, schema.MetricTokenGoodput, p.def+"'s definitions define no token goodput (tokens of good requests ÷ window is benchseal's metric)")
	if p.unjudged > 0 {
		why := fmt.Sprintf("%s; the SLO cannot be judged for %d successful request(s)", p.unjudgedWhy, p.unjudged)
		for _, k := range []string{schema.MetricGoodput, schema.MetricSLOAttainment, schema.MetricSLOAttainmentOK, schema.MetricCountGood} {
			setNull(pr, k, why)
		}
	}
}

// floatSamples are the per-request values of the tools that compute in
// float64 ns, pooled over a point and repeat.
type floatSamples struct {
	ttft, e2e, tpot, itl []float64
}

// numpyDists writes the four distributions as numpy computes them (linear
// percentiles, np.std ddof 0).
func (s *floatSamples) numpyDists(pr *PointResult) {
	pr.Dists[schema.MetricTTFT] = floatDist(s.ttft, 0)
	pr.Dists[schema.MetricE2E] = floatDist(s.e2e, 0)
	pr.Dists[schema.MetricTPOT] = floatDist(s.tpot, 0)
	pr.Dists[schema.MetricITL] = floatDist(s.itl, 0)
}
