package servermetrics

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/stats"
)

// Column is the server-side column of one point × repeat: what the
// engine's own metrics say happened between two scrapes. It is never
// merged with client measurements.
type Column struct {
	Engine     string           `json:"engine"`
	Histograms []HistogramDelta `json:"histograms"`
	Counters   []CounterDelta   `json:"counters"`
	Gauges     []GaugePeak      `json:"gauges"`
	// Absent lists the roles the engine names but the scrapes cannot
	// give, each with the reason.
	Absent []Absent `json:"absent"`
}

// Absent is a quantity the column cannot give, with the reason.
type Absent struct {
	Role   string `json:"role"`
	Metric string `json:"metric"`
	Reason string `json:"reason"`
}

// HistogramDelta is what a histogram's change between two scrapes
// supports: its observation count, mean, share under each bucket edge
// and percentile estimates between bucket edges. Times are in seconds.
type HistogramDelta struct {
	Role   string  `json:"role"`
	Metric string  `json:"metric"`
	Count  float64 `json:"count"`
	// Mean is Δsum ÷ Δcount; nil when there were no observations.
	Mean *float64 `json:"mean"`
	// Under is the share of the observations at or below each finite
	// bucket edge.
	Under []EdgeShare `json:"under"`
	// Estimates are bucket-interpolated percentiles (linear within the
	// bucket, as Prometheus' histogram_quantile): estimates, not
	// measurements, each with the edges of its bucket.
	Estimates []Estimate `json:"estimates"`
}

// EdgeShare is the share of observations at or below one bucket edge.
type EdgeShare struct {
	Edge  float64 `json:"le"`
	Share float64 `json:"share"`
}

// Estimate is a bucket-interpolated percentile: the true value lies in
// [Lo, Hi] (the bucket's edges). Value is nil, with Reason, when the
// percentile falls above the last finite edge (Hi is then null: no upper
// bound) or when only the bucket's bounds are given (see estimate).
type Estimate struct {
	Quantile float64  `json:"quantile"`
	Value    *float64 `json:"value"`
	Lo       float64  `json:"lo"`
	Hi       *float64 `json:"hi"`
	Reason   string   `json:"reason,omitempty"`
}

// CounterDelta is a counter's increase between two scrapes.
type CounterDelta struct {
	Role   string  `json:"role"`
	Metric string  `json:"metric"`
	Delta  float64 `json:"delta"`
}

// GaugePeak is the largest value a gauge showed over the scrapes taken
// inside the point's load (first send to last end; the idle scrapes
// bracketing the point do not count), and its least-squares slope per
// second over them with the slope's 95 % confidence interval
// (stats.LinearFit). Peak is nil, with PeakReason, when no scrape fell
// inside the load; Slope is nil, with SlopeReason, with fewer than
// MinFitScrapes of them.
type GaugePeak struct {
	Role        string   `json:"role"`
	Metric      string   `json:"metric"`
	Peak        *float64 `json:"peak"`
	PeakReason  string   `json:"peak_reason,omitempty"`
	Scrapes     int      `json:"scrapes"`
	Slope       *float64 `json:"slope_per_s"`
	SlopeLow    *float64 `json:"slope_low_per_s"`
	SlopeHigh   *float64 `json:"slope_high_per_s"`
	SlopeReason string   `json:"slope_reason,omitempty"`
}

// MinFitScrapes is the fewest scrapes inside a window a gauge's trend is
// fitted through (gauge slopes here, the waiting-queue trend of the
// overload test in replay).
const MinFitScrapes = 3

// Load is the span of a point's load in the scrapes' clock: its first
// send to its last end, in ns; IntervalNS is the period of the scrapes
// during a point (0: none were taken).
type Load struct{ FromNS, ToNS, IntervalNS int64 }

// NoLoad is the Load of a point without measured request times: no
// scrape falls inside it.
var NoLoad = Load{FromNS: 1, ToNS: 0}

// SlopeConfidence is the coverage of a gauge slope's interval.
const SlopeConfidence = 0.95

// Quantiles estimated by Delta.
var Quantiles = []float64{0.5, 0.9, 0.99}

// Delta computes the server column of the window between the first and
// last of scrapes (in time order); the scrapes taken inside load feed
// the gauges' peaks and slopes. engine "" detects it from the last
// scrape.
func Delta(engine string, scrapes []*Snapshot, load Load) (*Column, error) {
	if len(scrapes) < 2 {
		return nil, errcond.Errorf(ErrTooFewScrapes, "server metrics: need a scrape before and after the point, have %d", len(scrapes))
	}
	before, after := scrapes[0], scrapes[len(scrapes)-1]
	if engine == "" {
		engine = DetectEngine(after)
	}
	if engine == "" {
		return nil, ErrNoEngineMetrics
	}
	c := &Column{Engine: engine, Histograms: []HistogramDelta{}, Counters: []CounterDelta{}, Gauges: []GaugePeak{}, Absent: []Absent{}}
	for _, n := range Names {
		if n.Engine != engine {
			continue
		}
		var reason string
		switch n.Kind {
		case KindHistogram:
			var h *HistogramDelta
			h, reason = histDelta(n, before, after)
			if h != nil {
				c.Histograms = append(c.Histograms, *h)
			}
		case KindCounter:
			var d *CounterDelta
			d, reason = counterDelta(n, before, after)
			if d != nil {
				c.Counters = append(c.Counters, *d)
			}
		case KindGauge:
			var g *GaugePeak
			g, reason = gaugePeak(n, scrapes, load)
			if g != nil {
				c.Gauges = append(c.Gauges, *g)
			}
		}
		if reason != "" {
			c.Absent = append(c.Absent, Absent{Role: n.Role, Metric: n.Metric, Reason: reason})
		}
	}
	return c, nil
}

func pair(n Name, before, after *Snapshot) (b, a *Family, reason string) {
	b, okb := before.lookup(n)
	a, oka := after.lookup(n)
	switch {
	case !okb && !oka:
		return nil, nil, "not exposed by the server"
	case !okb:
		return nil, nil, "missing from the scrape before the point"
	case !oka:
		return nil, nil, "missing from the scrape after the point"
	case b.Bad != "":
		return nil, nil, "in the scrape before the point, " + b.Bad
	case a.Bad != "":
		return nil, nil, "in the scrape after the point, " + a.Bad
	}
	return b, a, ""
}

// seriesReset reports whether a series of b went down or vanished in a:
// checked per label set, since another series' growth can hide it in the
// sums.
func seriesReset(b, a *Family) bool {
	for k, v := range b.Series {
		w, ok := a.Series[k]
		if !ok || w < v {
			return true
		}
		for j, c := range b.Cums[k] {
			if ac := a.Cums[k]; j >= len(ac) || ac[j] < c {
				return true
			}
		}
	}
	return false
}

// notFinite is the reason of a quantity whose arithmetic overflowed.
const notFinite = "not a finite number (the difference between the scrapes overflows)"

// edgesChanged names the bucket edges only one scrape has. The text
// parser drops a bucket whose le is not a number (le="NaN"), so such an
// edge shows as missing.
func edgesChanged(before, after []float64) string {
	only := func(xs, ys []float64) string {
		var out []string
		for _, x := range xs {
			if !slices.Contains(ys, x) {
				out = append(out, digits.Shortest(x))
			}
		}
		return "[" + strings.Join(out, ", ") + "]"
	}
	return fmt.Sprintf("bucket edges changed between the scrapes (only before the point: %s; only after: %s; a bucket whose le is not a number, such as NaN, is dropped when parsed, so it shows as missing)",
		only(before, after), only(after, before))
}

// ReasonCounterReset is the Absent reason of a counter that went down
// between the scrapes.
const ReasonCounterReset = "counter reset between the scrapes (a value went down: the engine restarted or a series vanished)"

func counterDelta(n Name, before, after *Snapshot) (*CounterDelta, string) {
	b, a, why := pair(n, before, after)
	if why != "" {
		return nil, why
	}
	if a.Sum < b.Sum || seriesReset(b, a) {
		return nil, ReasonCounterReset
	}
	d := a.Sum - b.Sum
	if !finite(d) {
		return nil, notFinite
	}
	return &CounterDelta{Role: n.Role, Metric: n.Metric, Delta: d}, ""
}

func histDelta(n Name, before, after *Snapshot) (*HistogramDelta, string) {
	bf, af, why := pair(n, before, after)
	if why != "" {
		return nil, why
	}
	b, a := bf.Hist, af.Hist
	if !slices.Equal(a.Bounds, b.Bounds) {
		return nil, edgesChanged(b.Bounds, a.Bounds)
	}
	d := &Hist{Bounds: a.Bounds, Cum: make([]float64, len(a.Cum)), Count: a.Count - b.Count, Sum: a.Sum - b.Sum}
	if d.Count < 0 || d.Sum < 0 || seriesReset(bf, af) {
		return nil, ReasonCounterReset
	}
	if !finite(d.Sum) {
		return nil, notFinite
	}
	for i := range a.Cum {
		d.Cum[i] = a.Cum[i] - b.Cum[i]
		if d.Cum[i] < 0 || d.Cum[i] > d.Count || (i > 0 && d.Cum[i] < d.Cum[i-1]) {
			return nil, ReasonCounterReset
		}
	}
	out := &HistogramDelta{Role: n.Role, Metric: n.Metric, Count: d.Count, Under: []EdgeShare{}, Estimates: []Estimate{}}
	if d.Count == 0 {
		return out, ""
	}
	mean := d.Sum / d.Count
	out.Mean = &mean
	for i, e := range d.Bounds {
		out.Under = append(out.Under, EdgeShare{Edge: e, Share: d.Cum[i] / d.Count})
	}
	for _, q := range Quantiles {
		out.Estimates = append(out.Estimates, d.estimate(q, mean))
	}
	return out, ""
}

// Reasons of an estimate given as bounds only.
const (
	AboveLastEdge = "above the last finite bucket edge: no upper bound"
	FromZero      = "the bucket starts at 0: interpolating from 0 would assume observations spread evenly over it, which the histogram's sum can contradict, so only its bounds are given"
	AboveMarkov   = "the interpolated value exceeds mean ÷ (1 − quantile), which no non-negative observations allow, so only the bucket's bounds are given"
)

// estimate interpolates quantile q linearly inside its bucket, the rule
// of Prometheus' histogram_quantile; the first bucket starts at 0 (or at
// its edge when that is negative). Only the bucket's bounds are given
// (Value nil, Reason says why) when the bucket starts at 0, or when the
// edges are non-negative and the value exceeds mean/(1−q) (Markov's
// inequality: a q-quantile v of non-negative observations has
// (1−q)·v ≤ mean), so an estimate never contradicts the mean.
func (h *Hist) estimate(q, mean float64) Estimate {
	rank := q * h.Count
	prevCum, lo := 0.0, 0.0
	if len(h.Bounds) > 0 && h.Bounds[0] < 0 {
		lo = h.Bounds[0]
	}
	for i, up := range h.Bounds {
		if h.Cum[i] >= rank && h.Cum[i] > 0 {
			in := h.Cum[i] - prevCum
			v := up
			if in > 0 {
				v = lo + float64(float64((up-lo)*(float64(rank)-prevCum))/in)
			}
			hi := up
			e := Estimate{Quantile: q, Lo: lo, Hi: &hi}
			switch {
			case lo == 0 && up > 0:
				e.Reason = FromZero
			case lo >= 0 && q < 1 && v > mean/(1-q):
				e.Reason = AboveMarkov
			case !finite(v):
				e.Reason = notFinite
			default:
				e.Value = &v
			}
			return e
		}
		prevCum, lo = h.Cum[i], up
	}
	return Estimate{Quantile: q, Lo: lo, Reason: AboveLastEdge}
}

// Attainment is the share of observations at or below limit (seconds):
// exact (Lo == Hi, Exact set) when limit is a bucket edge, otherwise
// bounded by the shares at the neighbouring edges LoEdge and HiEdge. A
// nil LoEdge means no edge lies below the limit (Lo is then 0), a nil
// HiEdge that none lies above it (Hi is then 1: the +Inf bucket).
type Attainment struct {
	Lo, Hi         float64
	Exact          bool
	LoEdge, HiEdge *float64
}

// Attain computes the attainment of limit from a histogram delta; ok is
// false when it had no observations.
func (h *HistogramDelta) Attain(limit float64) (Attainment, bool) {
	if h.Count == 0 {
		return Attainment{}, false
	}
	a := Attainment{Hi: 1}
	for _, u := range h.Under {
		switch {
		case u.Edge == limit:
			e := u.Edge
			return Attainment{Lo: u.Share, Hi: u.Share, Exact: true, LoEdge: &e, HiEdge: &e}, true
		case u.Edge < limit:
			e := u.Edge
			a.Lo, a.LoEdge = u.Share, &e
		case a.HiEdge == nil:
			e := u.Edge
			a.Hi, a.HiEdge = u.Share, &e
		}
	}
	a.Hi = max(a.Lo, a.Hi)
	return a, true
}

func gaugePeak(n Name, scrapes []*Snapshot, load Load) (*GaugePeak, string) {
	g := &GaugePeak{Role: n.Role, Metric: n.Metric}
	var xs, ys []float64
	exposed := false
	for _, s := range scrapes {
		f, ok := s.lookup(n)
		if !ok {
			continue
		}
		if f.Bad != "" {
			return nil, f.Bad
		}
		exposed = true
		if s.AtNS < load.FromNS || s.AtNS > load.ToNS {
			continue
		}
		v := f.Sum
		if n.Role == RoleKVCache {
			v = f.Max
		}
		if g.Peak == nil || v > *g.Peak {
			g.Peak = &v
		}
		g.Scrapes++
		xs = append(xs, float64(s.AtNS)/1e9)
		ys = append(ys, v)
	}
	if !exposed {
		return nil, "not exposed by the server"
	}
	switch {
	case load.ToNS < load.FromNS:
		g.PeakReason = "the point has no measured request times: no span of load to read the gauge in"
		g.SlopeReason = g.PeakReason
		return g, ""
	case g.Scrapes == 0:
		g.PeakReason = "no scrape inside the point's load (" + spacing(load.IntervalNS) + "; the point lasted " + seconds(load.ToNS-load.FromNS) + ")"
		g.SlopeReason = g.PeakReason
		return g, ""
	case g.Scrapes < MinFitScrapes:
		g.SlopeReason = fmt.Sprintf("%d scrape(s) inside the point's load, need %d", g.Scrapes, MinFitScrapes)
		return g, ""
	}
	if f, err := stats.LinearFit(xs, ys, SlopeConfidence); err == nil && finite(f.Slope) {
		g.Slope = &f.Slope
		if f.Bounded && finite(f.Low) && finite(f.High) {
			g.SlopeLow, g.SlopeHigh = &f.Low, &f.High
		}
	} else {
		g.SlopeReason = "no slope through the scrapes inside the point's load (all at one instant)"
	}
	return g, ""
}

// spacing says how often scrapes were taken during a point.
func spacing(intervalNS int64) string {
	if intervalNS <= 0 {
		return "no scrapes during points"
	}
	return "scrapes every " + seconds(intervalNS)
}

// seconds prints ns as seconds with up to 3 decimals.
func seconds(ns int64) string {
	return digits.Decimal(math.Round(float64(ns)/1e6)/1e3) + "s"
}
