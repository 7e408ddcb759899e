package compare

import (
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/benchseal/benchseal/energy"
	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/stats"
)

// DecideSchemaV1 identifies the JSON document of a decision.
const DecideSchemaV1 = "benchseal/decide/v1"

// Objectives of a decision, each under the SLO.
const (
	MaxGoodput          = "max-goodput"
	MinCostPerGoodToken = "min-cost-per-good-token"
	MaxCapacity         = "max-capacity"
	// MinEnergyPerGoodToken ranks on the accelerator energy per good
	// token (EnergyPerGoodToken), from each run's stored accelerator
	// scrapes: a run without them has no value and cannot win.
	MinEnergyPerGoodToken = "min-energy-per-good-token"
)

// Objectives lists the objectives in help order.
var Objectives = []string{MaxGoodput, MinCostPerGoodToken, MaxCapacity, MinEnergyPerGoodToken}

// Decision verdicts.
const (
	// Winner: one configuration is significantly better than every other
	// eligible one.
	Winner = "winner"
	// NoSignificantWinner: the best median is not significantly better
	// than another eligible configuration.
	NoSignificantWinner = "no-significant-winner"
	// NoDecision: the guard refused, or fewer than two configurations
	// have a value for the objective.
	NoDecision = "no-decision"
)

// DecideOptions configure a decision.
type DecideOptions struct {
	Objective string
	// Target is the SLO attainment a load point must reach to count for
	// capacity (default 9/10).
	Target *big.Rat
	Guard  GuardOptions
	// Alpha is the significance level (default DefaultAlpha).
	Alpha float64
}

// Row is one configuration in the decision table. Values are medians
// across repeats at the configuration's best load point for the
// objective (for capacity: across the whole sweep).
type Row struct {
	Input int
	Name  string
	// Point and Load are the load point the objective was read at.
	Point, Load string
	// Objective is the per-repeat value the decision ranks on.
	Objective Side
	Goodput   Side
	// Cost is the cost per million good tokens.
	Cost Side
	// Energy is the accelerator energy per good token (J).
	Energy Side
	// Capacity is, per repeat, the highest offered load up to which
	// every tested load's SLO attainment meets the target (the first
	// crossing, replay.FirstCrossing).
	Capacity Side
	// CapacityAtLeast is, when the SLO attainment target is met at every
	// tested load in some repeat (the test did not bound the capacity),
	// the highest load tested there (the lowest such over repeats); Null
	// otherwise.
	CapacityAtLeast replay.Value
	// CapacityBounds is, per repeat in repeat order, what the test says
	// of the capacity: exact where it crossed, bounded below where it
	// never crossed, bounded above where the lowest load failed (nil
	// where the attainment is undefined). A max-capacity decision ranks
	// on these.
	CapacityBounds []*Bound
	// Errors counts the failed requests of Point over all repeats, by
	// kind (error, timeout, cancelled, rejected, not_sent: declared
	// requests an incomplete run never sent).
	Errors map[string]int64
	// Sent counts the declared measured requests of Point over all
	// repeats (replay.Counts.Declared: sent or not).
	Sent int64
	// OutputTokens is the output tokens of completed requests at Point,
	// summed over repeats (replay.PointResult.OutputTokens, a measured
	// count needing no window); Null only when a repeat's source did not
	// measure output_tokens, with the reason in Notes.
	OutputTokens replay.Value
	PrefixCache  string
	Evidence     string
	Hardware     string
	Repeats      int
	// Eligible is false when the row cannot win; Ineligible says why.
	Eligible   bool
	Ineligible string
	// Notes are confidence notes (benchstat warnings of the summaries)
	// and the replay's flags of the chosen point.
	Notes []string
	// Flagged says, when the chosen point is flagged overloaded or
	// generator-limited in any repeat, which and how often ("" if not):
	// a decision resting on it says so.
	Flagged string
	// Undecided says, when the overload test could not decide at the
	// chosen point in some repeat, how often and the first reason (""
	// if it decided everywhere): an unflagged point is not one shown to
	// keep up.
	Undecided string
}

// Decision is the answer to "which configuration, under this objective".
type Decision struct {
	Schema    string
	Objective string
	// SLO is the SLO every goodput was computed under, with its source.
	SLO, SLOSource string
	Target         *big.Rat
	Alpha          float64
	Inputs         []*Input
	References     []*Input
	Guard          *Guard
	Rows           []Row
	// Verdict is Winner, NoSignificantWinner or NoDecision.
	Verdict string
	// Best is the row with the best median for the objective, Winner
	// the same row when it wins significantly, RunnerUp the second best
	// (Rows indexes; −1 when none).
	Best, Winner, RunnerUp int
	// Margin is the winner's median over the runner-up's minus 1 (for a
	// cost, runner-up over winner minus 1: how much more the runner-up
	// pays); Shift the Hodges–Lehmann difference winner − runner-up with
	// its interval; P the largest p-value of the winner against each
	// other eligible row, after Holm over those tests.
	Margin replay.Value
	Shift  *stats.Shift
	P      float64
	// Answer is the decision in one sentence; Limits what it rests on.
	Answer string
	Limits []string
	// BoundsOverlap is set when the objective is energy and the best
	// row's energy bounds (over its repeats, each repeat's [lo, hi] the
	// scrape times allow) reach the runner-up's: the ranking then rests
	// on the interpolated central values alone.
	BoundsOverlap bool
	// WithinCounterTolerance is set when the objective is energy and the
	// best median is significantly ahead, but by no more than counters
	// scaled within the counter-against-gauge check's tolerance make
	// (energy.CounterTolerancePercent): no winner is named.
	WithinCounterTolerance bool
}

// energyOverlap says, for an energy decision, when the best row's energy
// per good token bounds over its repeats overlap the runner-up's ("" when
// they do not, or a bound is missing). The bounds come from the scrape
// times (energy.Result: the counter between the innermost and the
// outermost scrapes), the central value from interpolation between
// scrapes, so a ranking inside overlapping bounds is not shown by the
// scrapes alone.
func (d *Decision) energyOverlap() string {
	if d.Best < 0 || d.RunnerUp < 0 {
		return ""
	}
	bounds := func(i int) (lo, hi float64, ok bool) {
		r := d.Rows[i]
		first := true
		for _, pr := range replay.Independent(Repeats(d.Inputs[i].Result, r.Objective.Point)) {
			if pr.Energy == nil || pr.Energy.Reason != "" || pr.Energy.PerGoodToken.Reason != "" {
				return 0, 0, false
			}
			b := pr.Energy.PerGoodToken
			if first || b.Lo < lo {
				lo = b.Lo
			}
			if first || b.Hi > hi {
				hi = b.Hi
			}
			first = false
		}
		return lo, hi, !first
	}
	for _, i := range []int{d.Best, d.RunnerUp} {
		if d.Inputs[i].Manifest.GPUMetrics.AgeUnknown() {
			return fmt.Sprintf("the ranking of %s over %s rests on central values: for %s %s", d.Rows[d.Best].Name, d.Rows[d.RunnerUp].Name, d.Rows[i].Name, schema.AgeUnknownNote)
		}
	}
	wl, wh, ok1 := bounds(d.Best)
	rl, rh, ok2 := bounds(d.RunnerUp)
	if !ok1 || !ok2 || wh < rl {
		return ""
	}
	return fmt.Sprintf("the ranking of %s over %s rests on central values: their energy per good token bounds overlap (%s [%s, %s] J, %s [%s, %s] J over their repeats); the scrapes bracket each window only as closely as their times allow",
		d.Rows[d.Best].Name, d.Rows[d.RunnerUp].Name, d.Rows[d.Best].Name, digits.Sig(wl, 4), digits.Sig(wh, 4), d.Rows[d.RunnerUp].Name, digits.Sig(rl, 4), digits.Sig(rh, 4))
}

// energyWinRatio is the least ratio of the runner-up's energy per good
// token to the winner's that names an energy winner
// (energy.BeyondCounterTolerance): (1 + t) ÷ (1 − t).
var energyWinRatio = float64(100+energy.CounterTolerancePercent) / float64(100-energy.CounterTolerancePercent)

// energyWithinTolerance reports whether an energy decision's best median
// wm is ahead of the runner-up's rm by no more than counters scaled
// within the counter-against-gauge check's tolerance can make
// (energy.BeyondCounterTolerance): each publisher holds its key, and a
// counter scaled by 0.92 with the gauges kept verifies. Other objectives
// are never within it.
func (d *Decision) energyWithinTolerance(wm, rm replay.Value) bool {
	return d.Objective == MinEnergyPerGoodToken && !energy.BeyondCounterTolerance(wm.Rat(), rm.Rat())
}

// energyToleranceLimit says how far each run's energy is the signer's
// word (energy.CounterTolerancePercent) and what an energy win needs.
func energyToleranceLimit() string {
	return fmt.Sprintf("each run's energy counter is held to its own power gauges only to ±%d %%: a counter scaled by any factor within that verifies, so an energy winner is named only when the runner-up's median exceeds the winner's by more than ×%s (a difference %s)",
		energy.CounterTolerancePercent, digits.Sig(energyWinRatio, 4), energy.CounterToleranceNote)
}

// EnergyLimit is what an energy decision rests on: the exporters'
// counters of the devices each publisher chose to scrape
// (docs/energy.md).
const EnergyLimit = "energy is accelerator board energy from the exporters' counters (not wall power), summed over the devices each run's publisher chose to scrape; it is interpolated between scrapes within bounds the scrape times give"

// syntheticExcluded is why a synthetic run is out of a decision whose
// inputs differ in hardware.
const syntheticExcluded = "synthetic run: it cannot win a decision about hardware"

// Decide ranks the inputs under the objective.
func Decide(ins []*Input, opts DecideOptions) (*Decision, error) {
	if !slices.Contains(Objectives, opts.Objective) {
		return nil, errcond.Errorf(ErrInvalidOption, "compare: objective %q is not one of %s", opts.Objective, strings.Join(Objectives, ", "))
	}
	copts := Options{Guard: opts.Guard, Alpha: opts.Alpha}
	if err := copts.check(); err != nil {
		return nil, err
	}
	if opts.Target == nil {
		opts.Target = big.NewRat(9, 10)
	}
	if opts.Target.Sign() <= 0 || opts.Target.Cmp(big.NewRat(1, 1)) > 0 {
		return nil, errcond.Errorf(ErrInvalidOption, "compare: attainment target %s is not in (0, 1]", digits.RatAway(opts.Target, 3))
	}
	d := &Decision{Schema: DecideSchemaV1, Objective: opts.Objective, Target: opts.Target, Alpha: copts.Alpha, Best: -1, Winner: -1, RunnerUp: -1, Margin: replay.Null, P: 1}
	var err error
	if d.Inputs, d.References, err = split(ins); err != nil {
		return nil, err
	}
	d.Guard = RunGuard(d.Inputs, opts.Guard)
	if len(d.Inputs) > 0 {
		d.SLO = SLOText(d.Inputs[0].Result.SLO)
		d.SLOSource = d.Inputs[0].Result.SLO.Source
	}
	d.Limits = append(d.Limits, d.Guard.Limits...)
	if len(d.References) > 0 {
		d.Limits = append(d.Limits, "external evidence (MLPerf) is a linked reference only and takes no part in the decision")
	}
	if d.Guard.Verdict == Refused {
		d.Verdict = NoDecision
		d.Answer = "no decision: the runs are not comparable (" + strings.Join(d.Guard.Refusals, "; ") + ")"
		return d, nil
	}
	if d.SLO == "" {
		d.Limits = append(d.Limits, "no SLO: goodput, capacity and cost per good token are undefined; pass --slo")
	}
	// A synthetic run never wins a decision about hardware.
	hw := d.Guard.Check(CheckHardware)
	hardwareDecision := hw != nil && hw.Status != Pass
	for i, in := range d.Inputs {
		d.Rows = append(d.Rows, decideRow(in, i, opts))
		r := &d.Rows[i]
		if in.Manifest.Evidence == schema.EvidenceSynthetic && hardwareDecision {
			r.Eligible, r.Ineligible = false, syntheticExcluded
		}
	}
	if opts.Objective == MinCostPerGoodToken {
		seen := map[string]bool{}
		for _, in := range d.Inputs {
			if in.Result.Cost != nil {
				seen[Currency(in)] = true
			}
		}
		if len(seen) > 1 {
			d.Verdict = NoDecision
			d.Answer = "no decision: the prices are in different currencies; costs are not comparable"
			return d, nil
		}
	}
	d.rank()
	return d, nil
}

// undecidedLine says in how many repeats of a point the overload test
// could not decide, with the first repeat's reason, or "".
func undecidedLine(reps []*replay.PointResult) string {
	n, why := 0, ""
	for _, p := range reps {
		if o := p.Overload; o != nil && o.Overloaded.Set == nil {
			if n++; why == "" {
				why = o.Overloaded.Why
			}
		}
	}
	if n == 0 {
		return ""
	}
	return fmt.Sprintf("the overload test could not decide in %d of %d repeats (%s)", n, len(reps), why)
}

// FlagLine names the flags set on the repeats of a point with how many
// repeats each covers ("overloaded in 2 of 3 repeats"), or "".
func FlagLine(reps []*replay.PointResult) string {
	count := map[string]int{}
	var order []string
	for _, p := range reps {
		for _, f := range p.Overload.Flags() {
			if count[f] == 0 {
				order = append(order, f)
			}
			count[f]++
		}
	}
	var parts []string
	for _, f := range order {
		parts = append(parts, fmt.Sprintf("%s in %d of %d repeats", f, count[f], len(reps)))
	}
	return strings.Join(parts, ", ")
}

func decideRow(in *Input, idx int, opts DecideOptions) Row {
	pc, _ := PrefixCache(in)
	r := Row{Input: idx, Name: in.Name, PrefixCache: pc, Evidence: in.Manifest.Evidence,
		Hardware: HardwareText(in.Manifest), Eligible: true, OutputTokens: replay.Null, Errors: map[string]int64{}}
	if r.PrefixCache == "" {
		r.PrefixCache = "unknown"
	}
	if r.Hardware == "" {
		r.Hardware = "unknown"
	}
	best := bestPoint(in, opts.Objective)
	r.Point = best
	if o, ok := PointLoad(in.Manifest, best); ok {
		r.Load = o.String()
	}
	r.Goodput = side(in, best, schema.MetricGoodput)
	r.Cost = side(in, best, replay.CostPerMillionGoodTokens)
	r.Energy = side(in, best, EnergyPerGoodToken)
	var capNotes []string
	r.Capacity, r.CapacityAtLeast, r.CapacityBounds, capNotes = capacitySide(in, opts.Target)
	switch opts.Objective {
	case MaxGoodput:
		r.Objective = r.Goodput
	case MinCostPerGoodToken:
		r.Objective = r.Cost
	case MinEnergyPerGoodToken:
		r.Objective = r.Energy
	case MaxCapacity:
		r.Objective = r.Capacity
	}
	reps := Repeats(in.Result, best)
	r.Repeats = len(replay.Independent(reps))
	r.addTotals(reps)
	r.addNotes(reps, opts, capNotes)
	r.decideEligible(opts)
	return r
}

// bestPoint is in's best point for the objective, by median (ties keep
// run order); the last point when no median is known.
func bestPoint(in *Input, objective string) string {
	points := Points(in.Result)
	metric := schema.MetricGoodput
	lowerBetter := false
	switch objective {
	case MinCostPerGoodToken:
		metric, lowerBetter = replay.CostPerMillionGoodTokens, true
	case MinEnergyPerGoodToken:
		metric, lowerBetter = EnergyPerGoodToken, true
	}
	best := ""
	var bestMed *big.Rat
	for _, p := range points {
		s := side(in, p, metric)
		m := s.Summary.Median.Rat()
		if m == nil {
			continue
		}
		if bestMed == nil || (lowerBetter && m.Cmp(bestMed) < 0) || (!lowerBetter && m.Cmp(bestMed) > 0) {
			best, bestMed = p, m
		}
	}
	if best == "" && len(points) > 0 {
		best = points[len(points)-1]
	}
	return best
}

// addTotals adds up the repeats' requests, errors by kind and completed
// output tokens (null, with the reason, when a repeat did not measure
// them).
func (r *Row) addTotals(reps []*replay.PointResult) {
	tokens := new(big.Rat)
	okTokens := len(reps) > 0
	tokensWhy := ""
	for _, pr := range reps {
		// Declared requests never sent are failures here, as in SLO
		// attainment, counted apart from the cancelled ones (which were
		// sent).
		r.Sent += pr.Counts.Declared()
		r.Errors["error"] += pr.Counts.Error
		r.Errors["timeout"] += pr.Counts.Timeout
		r.Errors["cancelled"] += pr.Counts.Cancelled
		r.Errors["not_sent"] += pr.Counts.NotSent
		r.Errors["rejected"] += pr.Counts.Rejected
		t := pr.OutputTokens.Rat()
		if t == nil {
			okTokens = false
			if tokensWhy == "" {
				tokensWhy = pr.OutputTokensNullReason
			}
			continue
		}
		tokens.Add(tokens, t)
	}
	if okTokens {
		r.OutputTokens = replay.Exact(tokens)
	} else if len(reps) > 0 {
		if tokensWhy == "" {
			tokensWhy = "output_tokens not measured"
		}
		r.Notes = append(r.Notes, "completed output tokens null: "+tokensWhy)
	}
}

// addNotes gives the row's notes: the summaries' warnings, a flagged
// point, a goodput above the offered load, and the capacity's notes.
func (r *Row) addNotes(reps []*replay.PointResult, opts DecideOptions, capNotes []string) {
	for _, s := range []Side{r.Objective, r.Goodput} {
		for _, w := range s.Summary.Warnings {
			if !slices.Contains(r.Notes, w) {
				r.Notes = append(r.Notes, w)
			}
		}
	}
	if f := FlagLine(reps); f != "" && opts.Objective != MaxCapacity {
		r.Flagged = r.Name + "'s " + r.Point + " is " + f
		r.Notes = append(r.Notes, "point "+r.Point+" is "+f)
	}
	if u := undecidedLine(reps); u != "" && opts.Objective != MaxCapacity {
		r.Undecided = r.Name + "'s " + r.Point + ": " + u
		r.Notes = append(r.Notes, "point "+r.Point+": "+u)
	}
	// A goodput above the offered load is explained (the first repeat
	// where it happens stands for the others).
	for _, p := range reps {
		if n := replay.AboveOffered(p); n != "" {
			r.Notes = append(r.Notes, n)
			break
		}
	}
	for _, w := range capNotes {
		r.Notes = append(r.Notes, "capacity: "+w)
	}
}

// decideEligible rules the row out when its objective is undefined.
func (r *Row) decideEligible(opts DecideOptions) {
	switch {
	case opts.Objective == MaxCapacity:
		// A capacity the test bounded from one side still ranks: the
		// row is out only when some repeat has no bound at all.
		if len(r.CapacityBounds) == 0 || slices.Contains(r.CapacityBounds, nil) {
			r.Eligible, r.Ineligible = false, r.Capacity.NullReason
			if r.Ineligible == "" {
				r.Ineligible = "capacity undefined in some repeat"
			}
		}
	case r.Objective.Summary.N == 0:
		r.Eligible, r.Ineligible = false, r.Objective.NullReason
	}
}

// capacitySide is, per repeat, the capacity by the first-crossing rule
// (replay.FirstCrossing): the highest offered load L such that every
// tested load ≤ L meets the target, when some tested load fails it. A
// passing load above a failing one does not count; the notes say in how
// many repeats that happened. A repeat where every tested load meets the
// target has no capacity: the test did not bound it (it is at least the
// highest load tested, returned as atLeast, the lowest such bound over
// repeats); one where the lowest load fails has none either (it is below
// the lowest load tested), nor one where any attainment is undefined.
// independentRepeats groups in's results by repeat, in repeat order. A
// repeat with a point not shown independent of another repeat's counts
// as that repeat: its capacity is left out.
func independentRepeats(in *Input) (map[int][]*replay.PointResult, []int) {
	byRepeat := map[int][]*replay.PointResult{}
	var order []int
	twin := map[int]bool{}
	for _, pr := range in.Result.Results {
		twin[pr.Repeat] = twin[pr.Repeat] || pr.TwinOf != nil
	}
	for _, pr := range in.Result.Results {
		if twin[pr.Repeat] {
			continue
		}
		if _, ok := byRepeat[pr.Repeat]; !ok {
			order = append(order, pr.Repeat)
		}
		byRepeat[pr.Repeat] = append(byRepeat[pr.Repeat], pr)
	}
	slices.Sort(order)
	return byRepeat, order
}

// attainmentCurve is one repeat's SLO attainment against offered load,
// or why it is undefined (a load not stated, an attainment null).
func attainmentCurve(in *Input, prs []*replay.PointResult) (loads, atts []*big.Rat, why string) {
	for _, pr := range prs {
		o, ok := PointLoad(in.Manifest, pr.Point)
		if !ok {
			return loads, atts, "offered load of point " + pr.Point + " not stated"
		}
		a := pr.Scalars[schema.MetricSLOAttainment].Rat()
		if a == nil {
			return loads, atts, NullReason(in, schema.MetricSLOAttainment)
		}
		loads, atts = append(loads, new(big.Rat).SetFloat64(o.Value())), append(atts, a)
	}
	return loads, atts, ""
}

func capacitySide(in *Input, target *big.Rat) (s Side, atLeast replay.Value, bounds []*Bound, notes []string) {
	atLeast = replay.Null
	byRepeat, order := independentRepeats(in)
	var reasons []string
	unbounded, none, lowFails, nonMonotone := 0, 0, 0, 0
	var lowest *big.Rat
	example := ""
	for _, rep := range order {
		v := replay.Null
		loads, atts, why := attainmentCurve(in, byRepeat[rep])
		undefined := why != ""
		if undefined {
			reasons = append(reasons, why)
		}
		x := replay.FirstCrossing(loads, atts, target)
		if !undefined && x.NonMonotone() {
			nonMonotone++
			if example == "" {
				example = fmt.Sprintf("%s above %s in repeat %d", digits.RatAway(x.MaxPassing, 3), digits.RatAway(x.FirstFail, 3), rep)
			}
		}
		var b *Bound
		switch {
		case undefined, len(loads) == 0:
		case x.Below:
			if x.MaxPassing == nil {
				none++
			} else {
				lowFails++
			}
			low := slices.MinFunc(loads, func(a, b *big.Rat) int { return a.Cmp(b) })
			if lowest == nil || low.Cmp(lowest) < 0 {
				lowest = low
			}
			b = &Bound{Kind: Below, Value: low}
		case x.Never:
			unbounded++
			if b := atLeast.Rat(); b == nil || x.MaxPassing.Cmp(b) < 0 {
				atLeast = replay.Exact(x.MaxPassing)
			}
			b = &Bound{Kind: AtLeast, Value: x.MaxPassing}
		default:
			v = replay.Exact(x.Capacity)
			b = &Bound{Kind: Exactly, Value: x.Capacity}
		}
		s.Values = append(s.Values, v)
		bounds = append(bounds, b)
	}
	s.Summary = replay.SummarizeValues(s.Values, replay.CIConfidence)
	n := len(order)
	if unbounded > 0 {
		reasons = append(reasons, fmt.Sprintf("the SLO attainment target is met at every tested load in %d of %d repeats: capacity not bounded by the test (≥ %s, never crossed)", unbounded, n, digits.RatAway(atLeast.Rat(), 3)))
	}
	if none > 0 {
		reasons = append(reasons, fmt.Sprintf("no tested load meets the SLO attainment target in %d of %d repeats: capacity below the lowest load tested (%s)", none, n, digits.RatAway(lowest, 3)))
	}
	if lowFails > 0 {
		reasons = append(reasons, fmt.Sprintf("the lowest tested load fails the SLO attainment target in %d of %d repeats: capacity below the lowest load tested (%s)", lowFails, n, digits.RatAway(lowest, 3)))
	}
	if nonMonotone > 0 {
		reasons = append(reasons, fmt.Sprintf("SLO attainment is not monotone in %d of %d repeats (a load meeting the target above one that fails it: %s): the capacity counts only the loads below the first failing one", nonMonotone, n, example))
	}
	for _, r := range reasons {
		if !slices.Contains(notes, r) {
			notes = append(notes, r)
		}
	}
	if s.Summary.N == 0 {
		s.NullReason = strings.Join(notes, "; ")
		if s.NullReason == "" {
			s.NullReason = "no load points"
		}
		notes = nil
		if nonMonotone > 0 {
			// The null reason holds it too, but the notes are what every
			// format prints beside the row.
			notes = append(notes, reasons[len(reasons)-1])
		}
	}
	return s, atLeast, bounds, notes
}

// rank picks the winner: the eligible row with the best median, if it is
// significantly better than every other eligible row (Holm over those
// tests).
func (d *Decision) rank() {
	lowerBetter := d.Objective == MinCostPerGoodToken || d.Objective == MinEnergyPerGoodToken
	var cand []int
	for i, r := range d.Rows {
		if r.Eligible {
			cand = append(cand, i)
		} else {
			d.Limits = append(d.Limits, r.Name+" cannot win: "+r.Ineligible)
		}
	}
	slices.SortStableFunc(cand, func(a, b int) int {
		ma, mb := d.Rows[a].Objective.Summary.Median.Rat(), d.Rows[b].Objective.Summary.Median.Rat()
		if ma == nil || mb == nil {
			// Only a capacity bounded from one side has no median;
			// orderByBounds orders those.
			return 0
		}
		c := ma.Cmp(mb)
		if lowerBetter {
			return c
		}
		return -c
	})
	what := map[string]string{MaxGoodput: schema.MetricGoodput, MinCostPerGoodToken: "cost per million good tokens", MaxCapacity: "capacity",
		MinEnergyPerGoodToken: "accelerator energy per good token"}[d.Objective]
	if d.Objective == MaxCapacity {
		d.orderByBounds(cand)
	}
	if len(cand) < 2 {
		d.noDecision(cand, what)
		return
	}
	w := cand[0]
	d.Best, d.Winner, d.RunnerUp = w, w, cand[1]
	if d.Objective == MaxCapacity && d.rankCapacity(cand) {
		return
	}
	warns := d.testWinner(cand, what, lowerBetter)
	d.addLimits(cand, what, warns)
}

// noDecision answers when fewer than two configurations can win.
func (d *Decision) noDecision(cand []int, what string) {
	d.Verdict = NoDecision
	why := d.exclusions(what)
	switch {
	case len(cand) == 0 && why == "":
		d.Answer = "no decision: no configuration has a defined " + what
	case len(cand) == 0:
		d.Answer = "no decision: no configuration can win: " + why
	case why == "":
		d.Best = cand[0]
		d.Answer = "no decision: only " + d.Rows[cand[0]].Name + " has a defined " + what + "; nothing to compare it with"
	default:
		d.Best = cand[0]
		d.Answer = "no decision: only " + d.Rows[cand[0]].Name + " can win, nothing to compare it with: " + why
	}
}

// testWinner tests the best median against every other candidate
// (Mann–Whitney U, Holm over the tests), with the margin and the shift's
// interval against the runner-up, and gives the verdict; it returns the
// tests' sample warnings.
func (d *Decision) testWinner(cand []int, what string, lowerBetter bool) []string {
	w := cand[0]
	var ps []float64
	var warns []string
	for _, o := range cand[1:] {
		x1, x2 := floats(d.Rows[w].Objective.Values), floats(d.Rows[o].Objective.Values)
		t, err := stats.MannWhitneyU(x1, x2)
		p := 1.0
		if err == nil {
			p = t.P
			if s := stats.SampleWarning(t, d.Alpha); s != "" && !slices.Contains(warns, s) {
				warns = append(warns, s)
			}
		}
		ps = append(ps, p)
	}
	adj := stats.Holm(ps)
	d.P = slices.Max(adj)
	wm, rm := d.Rows[w].Objective.Summary.Median, d.Rows[d.RunnerUp].Objective.Summary.Median
	if lowerBetter {
		d.Margin = RelativeChange(wm, rm)
	} else {
		d.Margin = RelativeChange(rm, wm)
	}
	if sh, err := stats.ShiftCI(floats(d.Rows[w].Objective.Values), floats(d.Rows[d.RunnerUp].Objective.Values), 0.95); err == nil {
		d.Shift = &sh
	}
	n := fmt.Sprintf("%d vs %d repeats", d.Rows[w].Objective.Summary.N, d.Rows[d.RunnerUp].Objective.Summary.N)
	switch {
	case d.P <= d.Alpha && wm.Rat().Cmp(rm.Rat()) != 0 && d.energyWithinTolerance(wm, rm):
		d.Verdict = NoSignificantWinner
		d.Winner = -1
		d.WithinCounterTolerance = true
		d.Answer = fmt.Sprintf("no configuration wins on %s beyond the signer's word: %s has the best median, significantly (p = %s, %s), but its advantage over %s is %s: a counter scaled within it still verifies, so a win needs %s's median above ×%s of the winner's",
			what, d.Rows[w].Name, digits.PValue(d.P), n, d.Rows[d.RunnerUp].Name, energy.CounterToleranceNote, d.Rows[d.RunnerUp].Name, digits.Sig(energyWinRatio, 4))
	case d.P <= d.Alpha && wm.Rat().Cmp(rm.Rat()) != 0:
		d.Verdict = Winner
		d.Answer = fmt.Sprintf("%s wins on %s (significant at α = %s, p = %s, %s)", d.Rows[w].Name, what, digits.Shortest(d.Alpha), digits.PValue(d.P), n)
	default:
		d.Verdict = NoSignificantWinner
		d.Winner = -1
		if wm.Rat().Cmp(rm.Rat()) == 0 {
			d.Answer = fmt.Sprintf("no configuration wins on %s: the medians of %s and %s tie (p = %s, %s)",
				what, d.Rows[cand[0]].Name, d.Rows[cand[1]].Name, digits.PValue(d.P), n)
		} else {
			d.Answer = fmt.Sprintf("no configuration wins on %s significantly: %s has the best median, but the difference from %s is not significant at α = %s (p = %s, %s)",
				what, d.Rows[cand[0]].Name, d.Rows[cand[1]].Name, digits.Shortest(d.Alpha), digits.PValue(d.P), n)
		}
	}
	return warns
}

// addLimits lists what limits the decision: the tests' warnings,
// repeats not shown independent, a cost that rests on the price, flagged
// points and an unbounded shift interval.
func (d *Decision) addLimits(cand []int, what string, warns []string) {
	w := cand[0]
	d.Limits = append(d.Limits, warns...)
	var twins []string
	for _, in := range d.Inputs {
		twins = append(twins, TwinNotes(in)...)
	}
	if len(twins) > 0 {
		d.Limits = append(d.Limits, twins...)
		d.Answer += fmt.Sprintf("; %d repeat(s) not shown independent of another count as one", len(twins))
	}
	if d.Objective == MinCostPerGoodToken {
		d.costRestsOnPrice(cand)
	}
	if d.Objective == MinEnergyPerGoodToken {
		d.Limits = append(d.Limits, EnergyLimit, energyToleranceLimit())
		if l := d.energyOverlap(); l != "" {
			d.BoundsOverlap = true
			d.Limits = append(d.Limits, l)
			d.Answer += "; the ranking rests on central values, not on the energy bounds (limits say why)"
		}
	}
	for _, i := range cand {
		if f := d.Rows[i].Flagged; f != "" {
			l := f + ": its " + what + " was measured at a point that did not keep up with its load (or whose client did not keep the schedule)"
			if strings.Contains(f, replay.FastFailuresFlag) {
				l += "; requests there failed far faster than its successful requests (not served: turning slow requests into instant errors raises goodput)"
			}
			d.Limits = append(d.Limits, l)
			if d.Verdict == Winner && i == w {
				d.Answer += "; the win rests on a flagged point: " + f
			}
		}
		if u := d.Rows[i].Undecided; u != "" {
			d.Limits = append(d.Limits, u+": its "+what+" may have been measured at a point that did not keep up with its load")
		}
	}
	if d.Shift != nil && !d.Shift.Bounded {
		d.Limits = append(d.Limits, fmt.Sprintf("too few repeats for a 95 %% interval of the difference (the widest covers %s %%)", digits.Sig(100*d.Shift.Confidence, 3)))
	}
}

// exclusions says why the ineligible rows are out, grouped by cause,
// when some row is out for another cause than an undefined objective
// ("" when every excluded row merely lacks the objective, which the
// answer then says in its own words).
func (d *Decision) exclusions(what string) string {
	var undefined, synthetic, other []string
	for _, r := range d.Rows {
		switch {
		case r.Eligible:
		case r.Ineligible == syntheticExcluded:
			synthetic = append(synthetic, r.Name)
		case r.Ineligible == r.Objective.NullReason || r.Objective.Summary.N == 0:
			undefined = append(undefined, r.Name)
		default:
			other = append(other, r.Name+": "+r.Ineligible)
		}
	}
	if len(synthetic)+len(other) == 0 {
		return ""
	}
	var parts []string
	if len(undefined) > 0 {
		parts = append(parts, names(undefined)+" "+plural(len(undefined), "has", "have")+" no defined "+what)
	}
	if len(synthetic) > 0 {
		parts = append(parts, names(synthetic)+" "+plural(len(synthetic), "is a synthetic run", "are synthetic runs")+
			" and the hardware differs: a synthetic run cannot win a decision about hardware")
	}
	return strings.Join(append(parts, other...), "; ")
}

// names joins names as "a", "a and b", "a, b and c".
func names(ns []string) string {
	if len(ns) < 2 {
		return strings.Join(ns, "")
	}
	return strings.Join(ns[:len(ns)-1], ", ") + " and " + ns[len(ns)-1]
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
