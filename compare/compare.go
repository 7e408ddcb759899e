package compare

import (
	"errors"
	"fmt"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/benchseal/benchseal/energy"
	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/stats"
)

// SchemaV1 identifies the JSON document of a comparison.
const SchemaV1 = "benchseal/compare/v1"

// DefaultAlpha is the significance level, as benchstat's.
const DefaultAlpha = 0.05

// Corrections for many comparisons.
const (
	CorrectionNone = "none"
	CorrectionHolm = "holm"
)

// Metric is a compared metric: a claim path of a point result and which
// direction is better.
type Metric struct {
	Path string
	// HigherIsBetter is true for rates and attainment, false for
	// latencies and cost.
	HigherIsBetter bool
}

// Metrics are the metrics compared at every matched load point, in
// output order: replay's across-repeat summary metrics plus the cost per
// million good tokens.
var Metrics = summaryMetrics()

// summaryMetrics is Metrics: schema.ClaimSummaryMetrics, each ranked in
// the direction schema.Metrics states, then the cost per million good
// tokens.
func summaryMetrics() []Metric {
	var out []Metric
	for _, p := range schema.ClaimSummaryMetrics {
		out = append(out, Metric{p, schema.MetricHigherIsBetter(p)})
	}
	return append(out, Metric{replay.CostPerMillionGoodTokens, schema.MetricHigherIsBetter(replay.CostPerMillionGoodTokens)})
}

// Energy metric paths (replay's energy.KEY: the accelerator energy of a
// point × repeat from its stored scrapes).
const (
	EnergyPerGoodToken   = "energy.j_per_good_token"
	EnergyPerOutputToken = "energy.j_per_output_token"
	EnergyMeanPower      = "energy.mean_power_w"
)

// EnergyMetrics are compared, after Metrics, when some input stored
// accelerator scrapes (manifest.gpu_metrics): less is better for each.
var EnergyMetrics = []Metric{{EnergyPerGoodToken, false}, {EnergyPerOutputToken, false}, {EnergyMeanPower, false}}

// metricsFor is Metrics, and EnergyMetrics when some input measured
// accelerator energy: a comparison of runs none of which did lists no
// energy rows.
func metricsFor(ins []*Input) []Metric {
	for _, in := range ins {
		if in.Manifest != nil && in.Manifest.GPUMetrics != nil {
			return append(slices.Clone(Metrics), EnergyMetrics...)
		}
	}
	return Metrics
}

// Options configure a comparison.
type Options struct {
	Guard GuardOptions
	// Alpha is the significance level (default DefaultAlpha).
	Alpha float64
	// Correction is CorrectionNone (default) or CorrectionHolm.
	Correction string
}

func (o *Options) check() error {
	if o.Alpha == 0 {
		o.Alpha = DefaultAlpha
	}
	if !(o.Alpha > 0 && o.Alpha < 1) {
		return errcond.Errorf(ErrInvalidOption, "compare: alpha %s is not in (0, 1)", digits.Shortest(o.Alpha))
	}
	switch o.Correction {
	case "":
		o.Correction = CorrectionNone
	case CorrectionNone, CorrectionHolm:
	default:
		return errcond.Errorf(ErrInvalidOption, "compare: correction %q is not none or holm", o.Correction)
	}
	for _, a := range o.Guard.Allow {
		if !slices.Contains(RequiredChecks, a) || a == CheckQualityGate {
			return errcond.Errorf(ErrInvalidOption, "compare: %q is not a check whose difference can be allowed (%s)", a, strings.Join(allowable(), ", "))
		}
	}
	return nil
}

func allowable() []string {
	var out []string
	for _, c := range RequiredChecks {
		if c != CheckQualityGate {
			out = append(out, c)
		}
	}
	return out
}

// OfferedLoad is what a load point offers, by the run's load mode: in
// concurrency mode the number of concurrent clients; in rate mode the
// arrival rate and process (and gamma burstiness), with the point's
// concurrency cap (max concurrency, 0 when none) as a further attribute.
// Load points of different runs match when their offered loads are
// equal in every one of these, whatever the points are named.
type OfferedLoad struct {
	Mode        string
	Concurrency int
	Rate        float64
	Arrival     string
	Burstiness  float64
}

// String is "concurrency 16", or "rate 4 req/s poisson" with ", max
// concurrency 8" when the point caps it (and " burstiness 0.5" for gamma
// arrivals); "" when unknown. It is the key compare matches points on.
func (o OfferedLoad) String() string {
	if s := o.rateText(); s != "" {
		if o.Concurrency > 0 {
			s += ", max concurrency " + strconv.Itoa(o.Concurrency)
		}
		return s
	}
	if o.Concurrency > 0 {
		return "concurrency " + strconv.Itoa(o.Concurrency)
	}
	return ""
}

// rateText is the rate and arrival process of a rate-mode load ("" in
// concurrency mode).
func (o OfferedLoad) rateText() string {
	if o.Mode == schema.ModeConcurrency || !(o.Rate > 0) {
		return ""
	}
	s := "rate " + digits.Decimal(o.Rate) + " req/s"
	if o.Arrival != "" {
		s += " " + o.Arrival
	}
	if o.Arrival == schema.ArrivalGamma {
		s += " burstiness " + digits.Decimal(o.Burstiness)
	}
	return s
}

// Value is the offered load as a number: the rate in req/s in rate mode,
// else the concurrency.
func (o OfferedLoad) Value() float64 {
	if o.rateText() != "" {
		return o.Rate
	}
	return float64(o.Concurrency)
}

// PointLoad returns the offered load the manifest states for a point.
func PointLoad(m *schema.Manifest, point string) (OfferedLoad, bool) {
	for _, p := range m.Load.Points {
		if p.Name == point {
			o := OfferedLoad{Mode: m.Load.Mode, Concurrency: p.Concurrency, Rate: p.Rate, Arrival: p.Arrival, Burstiness: p.Burstiness}
			return o, o.String() != ""
		}
	}
	return OfferedLoad{}, false
}

// Points returns the point names of a result in run order.
func Points(r *replay.Result) []string {
	var out []string
	for _, p := range r.Results {
		if !slices.Contains(out, p.Point) {
			out = append(out, p.Point)
		}
	}
	return out
}

// Repeats returns the results of one point, by repeat.
func Repeats(r *replay.Result, point string) []*replay.PointResult {
	var out []*replay.PointResult
	for _, p := range r.Results {
		if p.Point == point {
			out = append(out, p)
		}
	}
	return out
}

// TwinNotes says, per repeat of in not shown independent of another
// (replay.PointResult.TwinOf), that the two count as one repeat here.
func TwinNotes(in *Input) []string {
	var out []string
	for _, p := range in.Result.Results {
		if p.TwinOf != nil {
			out = append(out, fmt.Sprintf("%s's point %s repeat %d is not shown independent of repeat %d (its requests' timings differ from repeat %d's by less than two measurements do): the two count as one repeat", in.Name, p.Point, p.Repeat, *p.TwinOf, *p.TwinOf))
		}
	}
	return out
}

// Side is one input's values of one metric at one point.
type Side struct {
	// Point is the input's name for the load point.
	Point string
	// Values holds the metric of each repeat, in repeat order (Null
	// where undefined), without the repeats not shown independent of
	// another (counted as that one).
	Values []replay.Value
	// Summary is the median and its distribution-free interval over the
	// defined values (replay.SummarizeValues).
	Summary replay.Summary
	// NullReason says why the side has no summary and is not tested:
	// the metric is undefined in every repeat, or in some of them (a
	// median or a test of the others would leave their work out); ""
	// when every repeat's value is defined.
	NullReason string
}

func side(in *Input, point, metric string) Side {
	s := Side{Point: point}
	reason := ""
	var undefined []string
	for _, pr := range replay.Independent(Repeats(in.Result, point)) {
		v, _ := pr.Lookup(metric)
		s.Values = append(s.Values, v)
		if !v.IsNull() {
			continue
		}
		undefined = append(undefined, strconv.Itoa(pr.Repeat))
		if r, ok := pr.NullReason(metric); ok && reason == "" {
			reason = "not measured: " + r
		}
	}
	s.Summary = replay.SummarizeValues(s.Values, replay.CIConfidence)
	switch {
	case len(undefined) > 0 && len(undefined) < len(s.Values):
		// SummarizeValues is null here too; the reason names the
		// repeats and, when replay gave one, why.
		s.NullReason = fmt.Sprintf("undefined in %d of %d repeats (repeat %s): not tested, a median or test of the others would leave their work out",
			len(undefined), len(s.Values), strings.Join(undefined, ", "))
		if reason != "" {
			s.NullReason += "; " + reason
		}
	case s.Summary.N == 0:
		s.NullReason = reason
		if reason == "" {
			s.NullReason = NullReason(in, metric)
		}
	}
	return s
}

// NullReason says why a metric of an input is undefined when the replay
// gave no reason of its own (a metric replay could compute from the
// records, but whose inputs — an SLO, a price — are missing).
func NullReason(in *Input, metric string) string {
	r := in.Result
	head, _, _ := strings.Cut(metric, ".")
	switch {
	case metric == replay.CostPerMillionGoodTokens || metric == replay.CostPerMillionOutputTokens:
		if r.Cost == nil {
			return "unknown: the manifest states no price (cost.price_per_hour)"
		}
		if !r.SLO.Any() && metric == replay.CostPerMillionGoodTokens {
			return "undefined: no SLO, so no good tokens"
		}
	case schema.MetricNeedsSLO(metric) && !r.SLO.Any():
		return "undefined: no SLO set"
	case r.Boundary == schema.BoundaryNonStreaming && (head == schema.MetricTTFT || head == schema.MetricTPOT || head == schema.MetricITL):
		return "not measured: non-streaming boundary (only end-to-end latency is timed)"
	case head == "energy" && (in.Manifest == nil || in.Manifest.GPUMetrics == nil):
		return "not measured: " + in.Name + " stored no accelerator scrapes (capture --gpu-metrics)"
	}
	return "undefined in every repeat of " + in.Name
}

// Comparison is one metric at one matched load point: an input against
// the baseline (the first measured input).
type Comparison struct {
	Load   string
	Metric Metric
	// Other is the index (in Result.Inputs) of the input compared with
	// input 0.
	Other       int
	Base, Patch Side
	// Change is median(Patch)/median(Base) − 1, Null when either is
	// undefined or the base median is 0.
	Change replay.Value
	// Tested is set when the U test ran; P is its p-value (1 when the
	// test failed, with a warning) and PAdjusted after the correction.
	Tested      bool
	P           float64
	PAdjusted   float64
	Exact       bool
	Significant bool
	// Better is set when significant and the patch is better in the
	// metric's direction (for an energy metric, by more than
	// WithinCounterTolerance allows).
	Better bool
	// WithinCounterTolerance is set on a significant difference of an
	// energy metric no larger than counters scaled within the
	// counter-against-gauge check's tolerance make
	// (energy.CounterTolerancePercent): neither side is better then.
	WithinCounterTolerance bool
	Warnings               []string
	// Note says why no test ran.
	Note string
}

// Unmatched is a load point of one input with no counterpart in the
// baseline (or the other way round).
type Unmatched struct {
	Input  string
	Point  string
	Load   string
	Reason string
}

// Result is a whole comparison.
type Result struct {
	Schema string
	// Inputs are the measured runs, the baseline first; References the
	// external evidence (shown, never compared).
	Inputs     []*Input
	References []*Input
	Guard      *Guard
	Alpha      float64
	Correction string
	// Loads are the matched offered loads, in the baseline's order;
	// Unmatched the points without a counterpart.
	Loads       []string
	Unmatched   []Unmatched
	Comparisons []Comparison
	// Tests counts the U tests run (the family Holm corrects over).
	Tests int
	Notes []string
}

// Compare checks comparability and, unless the guard refuses, compares
// every matched load point and metric of each input against the first.
// An error is returned only for invalid options or inputs; a refusal is a
// result with Guard.Verdict == Refused and no comparisons.
func Compare(ins []*Input, opts Options) (*Result, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	res := &Result{Schema: SchemaV1, Alpha: opts.Alpha, Correction: opts.Correction}
	var err error
	if res.Inputs, res.References, err = split(ins); err != nil {
		return nil, err
	}
	if len(res.References) > 0 {
		res.Notes = append(res.Notes, "external evidence (e.g. MLPerf) is shown as a linked reference only: it has no per-request data and is never compared, ranked or divided per accelerator")
	}
	res.Guard = RunGuard(res.Inputs, opts.Guard)
	res.Notes = append(res.Notes, deviceCountNotes(res.Inputs)...) // compare's text prints notes, not the guard's limits
	if len(res.Inputs) < 2 {
		res.Notes = append(res.Notes, fmt.Sprintf("%d measured run(s): nothing to compare", len(res.Inputs)))
		return res, nil
	}
	if res.Guard.Verdict == Refused {
		return res, nil
	}
	base := res.Inputs[0]
	metrics := metricsFor(res.Inputs)
	baseLoads := map[string]string{} // load → point
	baseRates := map[string]string{} // rate and arrival → load, to say why a capped rate does not match
	for _, p := range Points(base.Result) {
		o, ok := PointLoad(base.Manifest, p)
		if !ok {
			res.Unmatched = append(res.Unmatched, Unmatched{Input: base.Name, Point: p, Reason: "offered load not stated"})
			continue
		}
		if _, dup := baseLoads[o.String()]; dup {
			res.Unmatched = append(res.Unmatched, Unmatched{Input: base.Name, Point: p, Load: o.String(), Reason: "a second point with the same offered load"})
			continue
		}
		baseLoads[o.String()] = p
		if r := o.rateText(); r != "" {
			baseRates[r] = o.String()
		}
		res.Loads = append(res.Loads, o.String())
	}
	matched := map[string]bool{}
	for i := 1; i < len(res.Inputs); i++ {
		in := res.Inputs[i]
		seen := map[string]bool{}
		for _, p := range Points(in.Result) {
			o, ok := PointLoad(in.Manifest, p)
			if !ok {
				res.Unmatched = append(res.Unmatched, Unmatched{Input: in.Name, Point: p, Reason: "offered load not stated"})
				continue
			}
			bp, ok := baseLoads[o.String()]
			if !ok {
				why := "no point of " + base.Name + " offers this load"
				if l, near := baseRates[o.rateText()]; near && o.rateText() != "" {
					why += " (" + base.Name + "'s point " + baseLoads[l] + " offers " + l + ": the same rate with another concurrency cap is another load)"
				}
				res.Unmatched = append(res.Unmatched, Unmatched{Input: in.Name, Point: p, Load: o.String(), Reason: why})
				continue
			}
			if seen[o.String()] {
				res.Unmatched = append(res.Unmatched, Unmatched{Input: in.Name, Point: p, Load: o.String(), Reason: "a second point with the same offered load"})
				continue
			}
			seen[o.String()] = true
			matched[o.String()] = true
			for _, m := range metrics {
				res.Comparisons = append(res.Comparisons, compareOne(base, in, i, bp, p, o.String(), m, opts.Alpha))
			}
		}
		for _, l := range res.Loads {
			if !seen[l] {
				res.Notes = append(res.Notes, fmt.Sprintf("%s has no point offering %s", in.Name, l))
			}
		}
	}
	var loads []string
	for _, l := range res.Loads {
		if matched[l] {
			loads = append(loads, l)
		} else {
			res.Unmatched = append(res.Unmatched, Unmatched{Input: base.Name, Point: baseLoads[l], Load: l, Reason: "no other run offers this load"})
		}
	}
	res.Loads = loads
	for _, in := range res.Inputs {
		for _, p := range Points(in.Result) {
			o, ok := PointLoad(in.Manifest, p)
			if !ok || !matched[o.String()] {
				continue
			}
			if f := FlagLine(Repeats(in.Result, p)); f != "" {
				res.Notes = append(res.Notes, fmt.Sprintf("%s's point %s (%s) is %s: its comparisons describe a load it did not sustain", in.Name, p, o.String(), f))
			}
		}
		res.Notes = append(res.Notes, TwinNotes(in)...)
	}
	res.applyCorrection()
	return res, nil
}

// split separates the measured inputs from external references.
func split(ins []*Input) (measured, refs []*Input, err error) {
	for _, in := range ins {
		if in == nil || in.Manifest == nil || in.Result == nil {
			return nil, nil, errcond.Errorf(ErrIncompleteInput, "compare: input without manifest or replay result")
		}
		if in.External() {
			refs = append(refs, in)
		} else {
			measured = append(measured, in)
		}
	}
	return measured, refs, nil
}

func compareOne(base, in *Input, idx int, bp, p, load string, m Metric, alpha float64) Comparison {
	c := Comparison{Load: load, Metric: m, Other: idx, Base: side(base, bp, m.Path), Patch: side(in, p, m.Path), Change: replay.Null, P: 1, PAdjusted: 1}
	c.Change = RelativeChange(c.Base.Summary.Median, c.Patch.Summary.Median)
	// A side is tested only when its metric is defined in every repeat:
	// leaving out a repeat where it is undefined (every request failed,
	// say) would test the work that went well against all of the other
	// side's.
	baseOK, patchOK := c.Base.NullReason == "", c.Patch.NullReason == ""
	if isCost(m.Path) && baseOK && patchOK {
		if cb, cp := Currency(base), Currency(in); cb != cp {
			c.Change = replay.Null
			c.Note = fmt.Sprintf("not compared: prices in different currencies (%s: %q, %s: %q)", base.Name, cb, in.Name, cp)
			return c
		}
	}
	switch {
	case !baseOK && !patchOK && c.Base.NullReason == c.Patch.NullReason:
		c.Note = "undefined in both: " + c.Base.NullReason
		return c
	case !baseOK && !patchOK:
		c.Note = base.Name + ": " + c.Base.NullReason + "; " + in.Name + ": " + c.Patch.NullReason
		return c
	case !baseOK:
		c.Note = base.Name + ": " + c.Base.NullReason
		return c
	case !patchOK:
		c.Note = in.Name + ": " + c.Patch.NullReason
		return c
	}
	c.Tested = true
	t, err := stats.MannWhitneyU(floats(c.Base.Values), floats(c.Patch.Values))
	switch {
	case errors.Is(err, stats.ErrSamplesEqual):
		c.Warnings = append(c.Warnings, "every repeat of both runs has the same value: there is no difference to test")
	case err != nil:
		c.Warnings = append(c.Warnings, "no test of the difference: "+strings.TrimPrefix(err.Error(), "stats: "))
	default:
		c.P, c.Exact = t.P, t.Exact
		if w := stats.SampleWarning(t, alpha); w != "" {
			c.Warnings = append(c.Warnings, w)
		}
	}
	c.PAdjusted = c.P
	return c
}

// applyCorrection adjusts the p-values over every test run and sets the
// significance of each comparison.
func (r *Result) applyCorrection() {
	var ps []float64
	var idx []int
	for i, c := range r.Comparisons {
		if c.Tested {
			ps = append(ps, c.P)
			idx = append(idx, i)
		}
	}
	r.Tests = len(ps)
	adj := ps
	if r.Correction == CorrectionHolm {
		adj = stats.Holm(ps)
	}
	for j, i := range idx {
		c := &r.Comparisons[i]
		c.PAdjusted = adj[j]
		c.Significant = c.PAdjusted <= r.Alpha
		if c.Significant {
			b, p := c.Base.Summary.Median.Rat(), c.Patch.Summary.Median.Rat()
			if b != nil && p != nil {
				cmp := p.Cmp(b)
				c.Better = (cmp > 0) == c.Metric.HigherIsBetter && cmp != 0
				c.withinCounterTolerance(b, p, cmp)
			}
		}
	}
}

// withinCounterTolerance marks a significant difference of an energy
// metric (EnergyMetrics) whose medians b and p (cmp their order) are apart
// by no more than counters scaled within the counter-against-gauge
// check's tolerance make (energy.BeyondCounterTolerance): neither side is
// better by the evidence, whatever the test says.
func (c *Comparison) withinCounterTolerance(b, p *big.Rat, cmp int) {
	if !slices.Contains(EnergyMetrics, c.Metric) {
		return
	}
	lo, hi := p, b
	if cmp > 0 {
		lo, hi = b, p
	}
	if !energy.BeyondCounterTolerance(lo, hi) {
		c.WithinCounterTolerance = true
		c.Better = false
		c.Warnings = append(c.Warnings, "the difference is "+energy.CounterToleranceNote+" (each counter verifies scaled by any factor within that): neither side is better by the evidence")
	}
}

func isCost(path string) bool {
	return path == replay.CostPerMillionGoodTokens || path == replay.CostPerMillionOutputTokens
}

// Currency is the currency of an input's price ("" when none is
// stated): the manifest's cost.currency also when it states only a price
// per kWh (the cost per token is null then, but its currency is stated).
func Currency(in *Input) string {
	switch {
	case in.Result != nil && in.Result.Cost != nil:
		return in.Result.Cost.Currency
	case in.Manifest != nil && in.Manifest.Cost != nil:
		return in.Manifest.Cost.Currency
	}
	return ""
}

// RelativeChange is patch/base − 1 exactly, Null when either is undefined
// or base is 0.
func RelativeChange(base, patch replay.Value) replay.Value {
	b, p := base.Rat(), patch.Rat()
	if b == nil || p == nil || b.Sign() == 0 {
		return replay.Null
	}
	q := new(big.Rat).Quo(p, b)
	return replay.Exact(q.Sub(q, big.NewRat(1, 1)))
}

// floats returns the defined values as float64.
func floats(vs []replay.Value) []float64 {
	var out []float64
	for _, v := range vs {
		if f, ok := v.Float64(); ok {
			out = append(out, f)
		}
	}
	return out
}
