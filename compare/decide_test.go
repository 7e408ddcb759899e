package compare

import (
	"math/big"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/energy"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

// Declared requests an interrupted run never sent are failures in the
// decision table, but not cancelled ones: a cancelled request was sent.
func TestDecideCountsNotSentApart(t *testing.T) {
	m := &schema.Manifest{Load: schema.Load{Mode: schema.ModeConcurrency, Repeats: 2,
		Points: []schema.Point{{Name: "c4", Concurrency: 4, Requests: 10}}}}
	res := &replay.Result{}
	for r, c := range []replay.Counts{
		{Sent: 10, OK: 7, Error: 1, Timeout: 1, Cancelled: 1},
		{Sent: 6, OK: 4, Cancelled: 1, Rejected: 1, NotSent: 4},
	} {
		res.Results = append(res.Results, &replay.PointResult{Point: "c4", Repeat: r, Counts: c, Scalars: map[string]replay.Value{}})
	}
	row := decideRow(&Input{Name: "a", Manifest: m, Result: res}, 0, DecideOptions{Objective: MaxGoodput})
	want := map[string]int64{"error": 1, "timeout": 1, "cancelled": 2, "rejected": 1, "not_sent": 4}
	for k, v := range want {
		if row.Errors[k] != v {
			t.Errorf("errors[%s] = %d, want %d (all: %v)", k, row.Errors[k], v, row.Errors)
		}
	}
	if row.Sent != 20 {
		t.Errorf("declared = %d, want 20", row.Sent)
	}
}

// A win at an overloaded point is not silent: the decision's limits name
// the flag and how many repeats carry it, and so does its answer.
func TestDecideWinAtAnOverloadedPointSaysSo(t *testing.T) {
	a := fakeInput("a", []int64{10, 11, 12, 10, 11}, []int64{50, 51, 52, 50, 51})
	b := fakeInput("b", []int64{20, 21, 22, 20, 21}, []int64{60, 61, 62, 60, 61})
	yes := true
	for i, pr := range b.Result.Results {
		pr.Overload = &replay.Overload{GeneratorLimited: replay.Flag{Why: "n/a"}, Overloaded: replay.Flag{Why: "test"}}
		if i < 3 {
			pr.Overload.Overloaded.Set = &yes
		}
	}
	d, err := Decide([]*Input{a, b}, DecideOptions{Objective: MaxGoodput})
	if err != nil {
		t.Fatal(err)
	}
	limits := strings.Join(d.Limits, "\n")
	if d.Verdict != Winner || d.Winner != 1 || !strings.Contains(limits, "is overloaded in 3 of 5 repeats") ||
		!strings.Contains(d.Answer, "the win rests on a flagged point") || !slices.Contains(d.Rows[1].Notes, "point c8 is overloaded in 3 of 5 repeats") {
		t.Errorf("verdict %s, answer %q, limits %q, notes %q", d.Verdict, d.Answer, limits, d.Rows[1].Notes)
	}
	if strings.Contains(limits, "a's") {
		t.Errorf("unflagged a named: %q", limits)
	}
}

// Compare names a compared point that is flagged in its notes.
func TestCompareNamesAFlaggedPoint(t *testing.T) {
	a := fakeInput("a", []int64{10, 11, 12, 10}, []int64{50, 51, 52, 50})
	b := fakeInput("b", []int64{20, 21, 22, 20}, []int64{60, 61, 62, 60})
	yes := true
	b.Result.Results[0].Overload = &replay.Overload{Overloaded: replay.Flag{Set: &yes, Why: "test"}}
	r, err := Compare([]*Input{a, b}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Join(r.Notes, "\n"); !strings.Contains(n, "b's point c8 (concurrency 8) is overloaded in 1 of 4 repeats") || strings.Contains(n, "a's point") {
		t.Errorf("notes %q", n)
	}
}

// sweepInput is a concurrency sweep c4, c8, c16 whose repeats reach the
// given SLO attainments (percent) at each point.
func sweepInput(name string, att ...[3]int64) *Input {
	m := &schema.Manifest{Load: schema.Load{Mode: schema.ModeConcurrency, Repeats: len(att),
		Points: []schema.Point{{Name: "c4", Concurrency: 4}, {Name: "c8", Concurrency: 8}, {Name: "c16", Concurrency: 16}}}}
	res := &replay.Result{}
	for r, a := range att {
		for i, p := range m.Load.Points {
			res.Results = append(res.Results, &replay.PointResult{Point: p.Name, Repeat: r, Counts: replay.Counts{Sent: 10, OK: 10},
				Scalars: map[string]replay.Value{"slo_attainment": replay.Frac(a[i], 100), "goodput": replay.Int(1)}})
		}
	}
	return &Input{Name: name, Manifest: m, Result: res}
}

// TestDecideCapacityRule: capacity is the highest offered load whose SLO
// attainment meets the target when some tested load fails it; when every
// tested load meets it the test did not bound it (null, "≥ highest
// tested, never crossed"), and when none does it is null with that
// reason, never 0 and never the highest point tested.
func TestDecideCapacityRule(t *testing.T) {
	opts := DecideOptions{Objective: MaxCapacity, Target: big.NewRat(9, 10)}
	crossed := decideRow(sweepInput("a", [3]int64{100, 95, 50}, [3]int64{100, 90, 80}), 0, opts)
	if c := crossed.Capacity.Summary.Median.Rat(); c == nil || c.Cmp(big.NewRat(8, 1)) != 0 || !crossed.CapacityAtLeast.IsNull() {
		t.Errorf("crossed: capacity %v, at least %v", crossed.Capacity.Summary.Median, crossed.CapacityAtLeast)
	}
	never := decideRow(sweepInput("b", [3]int64{100, 95, 91}, [3]int64{100, 100, 100}), 0, opts)
	if !never.Capacity.Summary.Median.IsNull() || never.CapacityAtLeast.Rat() == nil || never.CapacityAtLeast.Rat().Cmp(big.NewRat(16, 1)) != 0 ||
		!strings.Contains(never.Capacity.NullReason, "not bounded by the test (≥ 16.000, never crossed)") {
		t.Errorf("never crossed: capacity %v, at least %v, reason %q", never.Capacity.Summary.Median, never.CapacityAtLeast, never.Capacity.NullReason)
	}
	none := decideRow(sweepInput("c", [3]int64{50, 40, 10}), 0, opts)
	if !none.Capacity.Summary.Median.IsNull() || !none.CapacityAtLeast.IsNull() || !strings.Contains(none.Capacity.NullReason, "no tested load meets") {
		t.Errorf("none: capacity %v, reason %q", none.Capacity.Summary.Median, none.Capacity.NullReason)
	}
}

// TestDecideTieSaysTheMediansTie: equal medians are a tie, not a "best
// median".
func TestDecideTieSaysTheMediansTie(t *testing.T) {
	a := fakeInput("a", []int64{10, 11, 12}, []int64{50, 51, 52})
	b := fakeInput("b", []int64{10, 11, 12}, []int64{50, 51, 52})
	d, err := Decide([]*Input{a, b}, DecideOptions{Objective: MaxGoodput})
	if err != nil {
		t.Fatal(err)
	}
	if d.Verdict != NoSignificantWinner || strings.Contains(d.Answer, "best median") || !strings.Contains(d.Answer, "the medians of a and b tie") {
		t.Errorf("%s: %s", d.Verdict, d.Answer)
	}
}

// A load meeting the target above one that fails it does not count: the
// capacity is the first crossing (before, [1, 0.5, 1] at c4/c8/c16 gave
// capacity 16 and beat a run that meets the target up to 8), and the
// notes say the attainment was not monotone.
func TestDecideCapacityIsTheFirstCrossing(t *testing.T) {
	opts := DecideOptions{Objective: MaxCapacity, Target: big.NewRat(9, 10)}
	nm := sweepInput("nm", [3]int64{100, 50, 100}, [3]int64{100, 50, 100}, [3]int64{100, 50, 100}, [3]int64{100, 50, 100}, [3]int64{100, 50, 100})
	row := decideRow(nm, 0, opts)
	if c := row.Capacity.Summary.Median.Rat(); c == nil || c.Cmp(big.NewRat(4, 1)) != 0 {
		t.Errorf("capacity %v, want 4", row.Capacity.Summary.Median)
	}
	want := "capacity: SLO attainment is not monotone in 5 of 5 repeats (a load meeting the target above one that fails it: 16.000 above 8.000 in repeat 0)"
	if !slices.ContainsFunc(row.Notes, func(n string) bool { return strings.HasPrefix(n, want) }) {
		t.Errorf("notes %q, want %q", row.Notes, want)
	}
	mono := sweepInput("mono", [3]int64{100, 100, 50}, [3]int64{100, 100, 50}, [3]int64{100, 100, 50}, [3]int64{100, 100, 50}, [3]int64{100, 100, 50})
	d, err := Decide([]*Input{nm, mono}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if d.Winner != 1 || d.Verdict != Winner {
		t.Errorf("verdict %s winner %d: %s", d.Verdict, d.Winner, d.Answer)
	}
	// The lowest load failing with a higher one passing: null, with both
	// reasons, and the non-monotone note kept beside the row.
	low := decideRow(sweepInput("low", [3]int64{50, 100, 100}), 0, opts)
	if !low.Capacity.Summary.Median.IsNull() || !strings.Contains(low.Capacity.NullReason, "the lowest tested load fails the SLO attainment target in 1 of 1 repeats") ||
		!slices.ContainsFunc(low.Notes, func(n string) bool { return strings.Contains(n, "not monotone") }) {
		t.Errorf("lowest fails: capacity %v, reason %q, notes %q", low.Capacity.Summary.Median, low.Capacity.NullReason, low.Notes)
	}
}

// decide's completed output tokens sum the measured counts: a repeat
// without a window (or in which every request failed) still counts; only
// a repeat whose token counts were not measured makes the sum null, and
// the row's notes say why. Before, the sum was throughput × window, null
// whenever the window was.
func TestDecideOutputTokensNeedNoWindow(t *testing.T) {
	m := &schema.Manifest{Load: schema.Load{Mode: schema.ModeConcurrency, Repeats: 2,
		Points: []schema.Point{{Name: "c4", Concurrency: 4, Requests: 10}}}}
	res := &replay.Result{}
	for r, tok := range []replay.Value{replay.Int(22500), replay.Int(0)} {
		res.Results = append(res.Results, &replay.PointResult{Point: "c4", Repeat: r, Counts: replay.Counts{Sent: 10, OK: 10},
			Scalars: map[string]replay.Value{"window_ns": replay.Null, "output_token_throughput": replay.Null}, OutputTokens: tok})
	}
	in := &Input{Name: "a", Manifest: m, Result: res}
	row := decideRow(in, 0, DecideOptions{Objective: MaxGoodput})
	if v := row.OutputTokens.Rat(); v == nil || v.Cmp(big.NewRat(22500, 1)) != 0 {
		t.Errorf("tokens %v, want 22500", row.OutputTokens)
	}
	res.Results[1].OutputTokens, res.Results[1].OutputTokensNullReason = replay.Null, "output_tokens not measured by the source (x)"
	row = decideRow(in, 0, DecideOptions{Objective: MaxGoodput})
	if !row.OutputTokens.IsNull() || !slices.Contains(row.Notes, "completed output tokens null: output_tokens not measured by the source (x)") {
		t.Errorf("unmeasured: tokens %v, notes %q", row.OutputTokens, row.Notes)
	}
}

// rateSweepInput is a rate sweep at 40, 80 and 120 req/s whose repeats
// reach the given SLO attainments (percent) at each rate.
func rateSweepInput(name string, att ...[3]int64) *Input {
	in := sweepInput(name, att...)
	in.Manifest.Load.Mode = schema.ModeRate
	for i, r := range []float64{40, 80, 120} {
		in.Manifest.Load.Points[i].Concurrency = 0
		in.Manifest.Load.Points[i].Rate = r
		in.Manifest.Load.Points[i].Arrival = schema.ArrivalPoisson
	}
	return in
}

func repeatAtt(n int, a [3]int64) [][3]int64 {
	out := make([][3]int64, n)
	for i := range out {
		out[i] = a
	}
	return out
}

// A configuration that meets the attainment target at every tested load,
// including the loads where the other fails, has a capacity bounded below
// above the other's: it wins, with its bound stated (before, it was
// "(cannot win)" and the decision "no decision"). Closed and rate mode.
func TestDecideCapacityBoundedBelowBeatsACrossedCapacity(t *testing.T) {
	opts := DecideOptions{Objective: MaxCapacity, Target: big.NewRat(9, 10)}
	for _, tc := range []struct {
		mode string
		a, b *Input
		want string
	}{
		{"concurrency", sweepInput("a", repeatAtt(5, [3]int64{100, 95, 50})...), sweepInput("b", repeatAtt(5, [3]int64{100, 100, 100})...), "≥ 16"},
		{"rate", rateSweepInput("a", repeatAtt(5, [3]int64{100, 50, 40})...), rateSweepInput("b", repeatAtt(5, [3]int64{100, 100, 99})...), "≥ 120"},
	} {
		d, err := Decide([]*Input{tc.a, tc.b}, opts)
		if err != nil {
			t.Fatal(err)
		}
		if d.Verdict != Winner || d.Winner != 1 || !d.Rows[1].Eligible || !strings.Contains(d.Answer, tc.want) {
			t.Errorf("%s: verdict %s winner %d eligible %v: %s (limits %q)", tc.mode, d.Verdict, d.Winner, d.Rows[1].Eligible, d.Answer, d.Limits)
		}
	}
}

// Two capacities that the test bounded only from below (or a crossed one
// inside the other's bound) are not ordered by the test: the decision
// says neither bound decides, and names the bounds.
func TestDecideCapacityNeitherBoundDecides(t *testing.T) {
	opts := DecideOptions{Objective: MaxCapacity, Target: big.NewRat(9, 10)}
	a := sweepInput("a", repeatAtt(5, [3]int64{100, 100, 100})...)
	b := sweepInput("b", repeatAtt(5, [3]int64{100, 100, 100})...)
	// c crosses at 16, the highest load tested, where a and b pass: their
	// capacity may be 16 too.
	c := sweepInput("c", repeatAtt(5, [3]int64{100, 100, 95})...)
	for _, pair := range [][]*Input{{a, b}, {a, c}} {
		d, err := Decide(pair, opts)
		if err != nil {
			t.Fatal(err)
		}
		if d.Winner != -1 || !strings.Contains(d.Answer, "neither bound decides") || !strings.Contains(d.Answer, "≥ 16") {
			t.Errorf("%s vs %s: verdict %s winner %d: %s", pair[0].Name, pair[1].Name, d.Verdict, d.Winner, d.Answer)
		}
	}
	// A capacity below the lowest load tested loses to one that crossed.
	low := sweepInput("low", repeatAtt(5, [3]int64{50, 40, 10})...)
	crossed := sweepInput("crossed", repeatAtt(5, [3]int64{100, 95, 50})...)
	d, err := Decide([]*Input{low, crossed}, opts)
	if err != nil {
		t.Fatal(err)
	}
	if d.Verdict != Winner || d.Winner != 1 || !strings.Contains(d.Answer, "< 4") {
		t.Errorf("below vs crossed: verdict %s winner %d: %s", d.Verdict, d.Winner, d.Answer)
	}
}

// The bounds order two capacities only where they exclude each other.
func TestCmpBoundsOrdersOnlyWhatTheBoundsDetermine(t *testing.T) {
	ex := func(v int64) *Bound { return &Bound{Kind: Exactly, Value: big.NewRat(v, 1)} }
	ge := func(v int64) *Bound { return &Bound{Kind: AtLeast, Value: big.NewRat(v, 1)} }
	lt := func(v int64) *Bound { return &Bound{Kind: Below, Value: big.NewRat(v, 1)} }
	for _, tc := range []struct {
		a, b *Bound
		c    int
		ok   bool
	}{
		{ex(8), ex(8), 0, true}, {ex(8), ex(16), -1, true},
		{ge(24), ex(8), 1, true}, {ex(8), ge(24), -1, true}, {ge(16), ex(16), 0, false}, {ge(16), ex(24), 0, false},
		{lt(4), ex(4), -1, true}, {ex(8), lt(4), 1, true}, {lt(8), ex(4), 0, false},
		{ge(4), lt(4), 1, true}, {lt(4), ge(8), -1, true}, {ge(4), lt(8), 0, false},
		{ge(4), ge(8), 0, false}, {lt(4), lt(8), 0, false},
	} {
		c, ok := cmpBounds(tc.a, tc.b)
		if c != tc.c || ok != tc.ok {
			t.Errorf("cmpBounds(%s, %s) = %d, %v; want %d, %v", tc.a, tc.b, c, ok, tc.c, tc.ok)
		}
	}
}

// When the synthetic-versus-hardware rule excludes configurations, the
// answer says so (before: "no configuration has a defined goodput",
// though both goodputs are printed).
func TestDecideAnswerNamesTheSyntheticExclusion(t *testing.T) {
	a := fakeInput("a", []int64{10, 11, 12, 10, 11}, []int64{50, 51, 52, 50, 51})
	b := fakeInput("b", []int64{20, 21, 22, 20, 21}, []int64{60, 61, 62, 60, 61})
	a.Manifest.Evidence, b.Manifest.Evidence = schema.EvidenceSynthetic, schema.EvidenceSynthetic
	b.Manifest.Hardware.Accelerator = "H200"
	d, err := Decide([]*Input{a, b}, DecideOptions{Objective: MaxGoodput})
	if err != nil {
		t.Fatal(err)
	}
	if d.Verdict != NoDecision || strings.Contains(d.Answer, "defined goodput") ||
		!strings.Contains(d.Answer, "no configuration can win") || !strings.Contains(d.Answer, "a and b are synthetic runs and the hardware differs") {
		t.Errorf("both synthetic: %s", d.Answer)
	}
	a.Manifest.Evidence = schema.EvidenceSelfRun
	for _, pr := range a.Result.Results {
		pr.Scalars["goodput"] = replay.Null
	}
	d, _ = Decide([]*Input{a, b}, DecideOptions{Objective: MaxGoodput})
	if d.Verdict != NoDecision || !strings.Contains(d.Answer, "a has no defined goodput") || !strings.Contains(d.Answer, "b is a synthetic run and the hardware differs") {
		t.Errorf("one undefined, one synthetic: %s", d.Answer)
	}
}

// priced sets an input's declared price per hour and the cost per
// million good tokens replay derives from it and each repeat's token
// goodput.
func priced(in *Input, price int64, tokenGoodput []int64) {
	in.Result.Cost = &replay.CostSpec{Currency: "USD", PricePerHour: big.NewRat(price, 1), Text: strconv.FormatInt(price, 10)}
	for i, pr := range in.Result.Results {
		pr.Scalars["token_goodput"] = replay.Int(tokenGoodput[i])
		pr.Scalars[replay.CostPerMillionGoodTokens] = replay.Exact(big.NewRat(price*1_000_000, 3600*tokenGoodput[i]))
	}
}

// A cost win between configurations whose measured token goodput does
// not differ comes from the declared prices alone: the answer and the
// limits say the cost rests on the publisher's declared price, and the
// price difference is not presented as a significant measured effect
// (before: "a wins on cost per million good tokens (significant ...)").
func TestDecideCostWinFromTheDeclaredPriceIsNotAMeasuredEffect(t *testing.T) {
	a := fakeInput("a", []int64{10, 11, 12, 10, 11}, []int64{50, 51, 52, 50, 51})
	b := fakeInput("b", []int64{10, 12, 11, 11, 10}, []int64{50, 51, 52, 50, 51})
	priced(a, 2, []int64{900, 950, 1000, 920, 980})
	priced(b, 4, []int64{910, 990, 940, 960, 930})
	d, err := Decide([]*Input{a, b}, DecideOptions{Objective: MinCostPerGoodToken})
	if err != nil {
		t.Fatal(err)
	}
	limits := strings.Join(d.Limits, "\n")
	if d.Verdict == Winner || strings.HasPrefix(d.Answer, "a wins") || strings.Contains(d.Answer, "significant at") || !strings.Contains(d.Answer, "declared price") ||
		!strings.Contains(d.Answer, "not a measured effect") || !strings.Contains(limits, "rests on the publisher's declared price") {
		t.Errorf("price-only win: %s %s\nlimits %s", d.Verdict, d.Answer, limits)
	}
	// A measured token goodput difference that the price does not undo
	// wins, and still says the cost rests on the declared price.
	priced(b, 2, []int64{400, 420, 410, 430, 405})
	d, _ = Decide([]*Input{a, b}, DecideOptions{Objective: MinCostPerGoodToken})
	if d.Verdict != Winner || d.Winner != 0 || !strings.Contains(d.Answer, "declared price") || !strings.Contains(strings.Join(d.Limits, "\n"), "rests on the publisher's declared price") {
		t.Errorf("measured win: %s %s\nlimits %q", d.Verdict, d.Answer, d.Limits)
	}
}

// A point whose failures came far faster than its successes is named in
// the decision's limits and answer (its goodput rests on requests the
// server did not serve).
func TestDecideLimitsNameFastFailures(t *testing.T) {
	a := fakeInput("a", []int64{10, 11, 12, 10, 11}, []int64{50, 51, 52, 50, 51})
	b := fakeInput("b", []int64{20, 21, 22, 20, 21}, []int64{60, 61, 62, 60, 61})
	yes := true
	for _, pr := range b.Result.Results {
		pr.Overload = &replay.Overload{FastFailures: replay.Flag{Set: &yes, Why: "test"}}
	}
	d, err := Decide([]*Input{a, b}, DecideOptions{Objective: MaxGoodput})
	if err != nil {
		t.Fatal(err)
	}
	limits := strings.Join(d.Limits, "\n")
	if !strings.Contains(limits, "b's c8 is fast-failures in 5 of 5 repeats") || !strings.Contains(limits, "failed far faster than its successful requests") ||
		!strings.Contains(d.Answer, "the win rests on a flagged point") {
		t.Errorf("answer %q, limits %q", d.Answer, limits)
	}
}

// TestDecideCountsRepeatsNotShownIndependentAsOne: repeats that are
// near-copies of one (replay.PointResult.TwinOf) turned "no winner" into
// a significant win, their agreement collapsing the test across repeats.
// They count as one repeat, and the answer and limits say so.
func TestDecideCountsRepeatsNotShownIndependentAsOne(t *testing.T) {
	a := fakeInput("a", []int64{10, 11, 12, 10, 11}, []int64{50, 51, 52, 50, 51})
	b := fakeInput("b", []int64{20, 21, 22, 20, 21}, []int64{60, 61, 62, 60, 61})
	d, err := Decide([]*Input{a, b}, DecideOptions{Objective: MaxGoodput})
	if err != nil || d.Verdict != Winner {
		t.Fatalf("independent repeats: %v, verdict %s", err, d.Verdict)
	}
	for _, pr := range b.Result.Results[1:] {
		zero := 0
		pr.TwinOf = &zero
	}
	d, err = Decide([]*Input{a, b}, DecideOptions{Objective: MaxGoodput})
	if err != nil {
		t.Fatal(err)
	}
	limits := strings.Join(d.Limits, "\n")
	if d.Verdict == Winner || d.Rows[1].Repeats != 1 || !strings.Contains(d.Answer, "4 repeat(s) not shown independent of another count as one") ||
		!strings.Contains(limits, "b's point c8 repeat 4 is not shown independent of repeat 0") {
		t.Errorf("verdict %s, repeats %d, answer %q, limits %q", d.Verdict, d.Rows[1].Repeats, d.Answer, limits)
	}
	c, err := Compare([]*Input{a, b}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(c.Notes, "\n"), "the two count as one repeat") {
		t.Errorf("compare notes %q", c.Notes)
	}
}

// Without accelerator scrapes no configuration has an energy per good
// token: no decision, and each row says why (never a winner from missing
// data).
func TestDecideOnEnergyWithoutEnergyEvidenceDecidesNothing(t *testing.T) {
	a := fakeInput("a", []int64{10, 11, 12, 10, 11}, []int64{50, 51, 52, 50, 51})
	b := fakeInput("b", []int64{20, 22, 21, 21, 20}, []int64{50, 51, 52, 50, 51})
	d, err := Decide([]*Input{a, b}, DecideOptions{Objective: MinEnergyPerGoodToken})
	if err != nil {
		t.Fatal(err)
	}
	if d.Verdict != NoDecision || d.Winner >= 0 || !strings.Contains(d.Answer, "accelerator energy per good token") {
		t.Fatalf("%s: %s", d.Verdict, d.Answer)
	}
	for _, r := range d.Rows {
		if r.Eligible || !strings.Contains(r.Ineligible, "no accelerator scrapes") {
			t.Errorf("row %s: eligible %v, %q", r.Name, r.Eligible, r.Ineligible)
		}
	}
}

// Two runs whose energy counts a different number of accelerators: compare
// and decide both say so, with the counts and the runs.
func TestDeviceCountDifferenceIsALimit(t *testing.T) {
	a := fakeInput("a", []int64{10, 11, 12, 10, 11}, []int64{50, 51, 52, 50, 51})
	b := fakeInput("b", []int64{20, 22, 21, 21, 20}, []int64{50, 51, 52, 50, 51})
	dev := func(id string) schema.GPUDevice {
		return schema.GPUDevice{ID: id, IDFrom: "UUID", Serving: schema.ServingSimulator}
	}
	a.Manifest.GPUMetrics = &schema.GPUMetrics{Endpoints: []schema.GPUEndpoint{{Devices: []schema.GPUDevice{dev("x"), dev("y")}}}}
	b.Manifest.GPUMetrics = &schema.GPUMetrics{Endpoints: []schema.GPUEndpoint{{Devices: []schema.GPUDevice{dev("x")}}}}
	want := "scraped accelerators differ: 2 devices (a) vs 1 device (b)"
	c, err := Compare([]*Input{a, b}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(c.Guard.Limits, "\n"), want) || !strings.Contains(strings.Join(c.Notes, "\n"), want) {
		t.Errorf("compare limits %q, notes %q", c.Guard.Limits, c.Notes)
	}
	d, err := Decide([]*Input{a, b}, DecideOptions{Objective: MinEnergyPerGoodToken})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(d.Limits, "\n"), want) {
		t.Errorf("decide limits %q", d.Limits)
	}
	b.Manifest.GPUMetrics.Endpoints[0].Devices = append(b.Manifest.GPUMetrics.Endpoints[0].Devices, dev("y"))
	if d, _ := Decide([]*Input{a, b}, DecideOptions{Objective: MinEnergyPerGoodToken}); strings.Contains(strings.Join(d.Limits, "\n"), "scraped accelerators differ") {
		t.Errorf("same count: limits %q", d.Limits)
	}
}

// energyInput is fakeInput with each repeat's energy per good token
// central value and bounds ([v·(1−w), v·(1+w)]) on 5 repeats.
func energyInput(name string, j []float64, w float64) *Input {
	in := fakeInput(name, []int64{10, 10, 10, 10, 10}, []int64{50, 50, 50, 50, 50})
	in.Manifest.GPUMetrics = &schema.GPUMetrics{Endpoints: []schema.GPUEndpoint{{Devices: []schema.GPUDevice{{ID: "x", IDFrom: "UUID", Serving: schema.ServingDeclared}}}}}
	for i, pr := range in.Result.Results {
		b := energy.Bounded{Value: j[i], Lo: j[i] * (1 - w), Hi: j[i] * (1 + w)}
		pr.Energy = &replay.EnergyColumn{Boundary: "accelerator board energy (DCGM), not wall power", Method: energy.MethodCounter, Energy: b, MeanPower: b, PerOutputToken: b, PerGoodToken: b, PerGoodRequest: b}
	}
	return in
}

// A winner on energy whose bounds reach the runner-up's: the answer, the
// limits and the margin say the ranking rests on central values; with
// bounds apart they do not.
func TestEnergyRankingWithOverlappingBoundsSaysSo(t *testing.T) {
	a := energyInput("a", []float64{0.10, 0.11, 0.10, 0.11, 0.10}, 0.3)
	b := energyInput("b", []float64{0.13, 0.14, 0.13, 0.14, 0.13}, 0.3)
	d, err := Decide([]*Input{a, b}, DecideOptions{Objective: MinEnergyPerGoodToken})
	if err != nil {
		t.Fatal(err)
	}
	if d.Verdict != Winner || d.Rows[d.Winner].Name != "a" {
		t.Fatalf("%s: %s", d.Verdict, d.Answer)
	}
	lims := strings.Join(d.Limits, "\n")
	if !d.BoundsOverlap || !strings.Contains(d.Answer, "the ranking rests on central values, not on the energy bounds (limits say why)") ||
		!strings.Contains(lims, "the ranking of a over b rests on central values: their energy per good token bounds overlap (a [0.07, 0.143] J, b [0.091, 0.182] J over their repeats)") {
		t.Errorf("answer %q\nlimits %s", d.Answer, lims)
	}
	a = energyInput("a", []float64{0.10, 0.11, 0.10, 0.11, 0.10}, 0.05)
	b = energyInput("b", []float64{0.13, 0.14, 0.13, 0.14, 0.13}, 0.05)
	if d, _ = Decide([]*Input{a, b}, DecideOptions{Objective: MinEnergyPerGoodToken}); d.BoundsOverlap || strings.Contains(d.Answer, "central values") {
		t.Errorf("bounds apart: %q", d.Answer)
	}
	// Imported telemetry states no reading age: its bounds show nothing.
	for _, in := range []*Input{a, b} {
		in.Manifest.GPUMetrics.Endpoints[0].Devices[0].Serving = schema.ServingImported
	}
	d, _ = Decide([]*Input{a, b}, DecideOptions{Objective: MinEnergyPerGoodToken})
	if !d.BoundsOverlap || !strings.Contains(strings.Join(d.Limits, "\n"), "rests on central values: for a the scrape age bound is unknown") {
		t.Errorf("imported: %q %q", d.Answer, d.Limits)
	}
}

// TestEnergyWinWithinCounterToleranceIsNotNamed: a publisher holding its
// key scales its energy counter by 0.92, which the counter-against-gauge
// check (±energy.CounterTolerancePercent) lets through: the same
// configuration then has a significantly lower median, yet decide names
// no winner and says why; ahead by more than ×(1.1/0.9) it wins.
func TestEnergyWinWithinCounterToleranceIsNotNamed(t *testing.T) {
	honest := []float64{0.100, 0.101, 0.102, 0.100, 0.101}
	scaled := func(f float64) []float64 {
		out := make([]float64, len(honest))
		for i, v := range honest {
			out[i] = v * f
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		factor float64
		win    bool
	}{
		{"scaled by 0.92", 0.92, false},
		{"scaled by 0.9", 0.9, false},
		{"just inside 0.9/1.1", 0.9 / 1.1 * 1.001, false},
		{"beyond 0.9/1.1", 0.9 / 1.1 * 0.99, true},
		{"half", 0.5, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a := energyInput("a", honest, 0.01)
			b := energyInput("b", scaled(tc.factor), 0.01)
			d, err := Decide([]*Input{a, b}, DecideOptions{Objective: MinEnergyPerGoodToken})
			if err != nil {
				t.Fatal(err)
			}
			if d.Rows[d.Best].Name != "b" || d.RunnerUp < 0 || d.P > d.Alpha {
				t.Fatalf("best %d, p %v: %s", d.Best, d.P, d.Answer)
			}
			lims := strings.Join(d.Limits, "\n")
			if !strings.Contains(lims, "held to its own power gauges only to ±10 %") {
				t.Errorf("limits %s", lims)
			}
			if tc.win {
				if d.Verdict != Winner || d.Rows[d.Winner].Name != "b" || d.WithinCounterTolerance {
					t.Errorf("%s: %s", d.Verdict, d.Answer)
				}
				return
			}
			if d.Verdict != NoSignificantWinner || d.Winner != -1 || !d.WithinCounterTolerance ||
				!strings.Contains(d.Answer, "within the ×0.9–×1.1 the gauges check: the signer's word") {
				t.Errorf("%s (winner %d): %s", d.Verdict, d.Winner, d.Answer)
			}
		})
	}
}

// TestCompareEnergyWithinCounterToleranceIsNotBetter: compare tests the
// energy metrics too; a significantly lower energy per good token from a
// counter scaled by 0.92 is marked within the tolerance, not better, with
// a warning saying so; one at half the energy is better.
func TestCompareEnergyWithinCounterToleranceIsNotBetter(t *testing.T) {
	honest := []float64{0.100, 0.101, 0.102, 0.100, 0.101}
	for _, tc := range []struct {
		factor float64
		better bool
	}{{0.92, false}, {0.5, true}} {
		j := make([]float64, len(honest))
		for i, v := range honest {
			j[i] = v * tc.factor
		}
		c, err := Compare([]*Input{energyInput("a", honest, 0.01), energyInput("b", j, 0.01)}, Options{})
		if err != nil {
			t.Fatal(err)
		}
		found := false
		for _, cmp := range c.Comparisons {
			if cmp.Metric.Path != EnergyPerGoodToken {
				continue
			}
			found = true
			warned := strings.Contains(strings.Join(cmp.Warnings, "\n"), "within the ×0.9–×1.1 the gauges check: the signer's word")
			if !cmp.Significant || cmp.Better != tc.better || cmp.WithinCounterTolerance == tc.better || warned == tc.better {
				t.Errorf("×%v: significant %v, better %v, within %v, warnings %q", tc.factor, cmp.Significant, cmp.Better, cmp.WithinCounterTolerance, cmp.Warnings)
			}
		}
		if !found {
			t.Fatalf("×%v: no energy comparison", tc.factor)
		}
	}
}

// TestDecideNamesAnUndecidedOverloadAtTheChosenPoint: a winner whose
// point the overload test could not judge in some repeats is not
// presented as a point shown to keep up: its notes and the limits say so,
// with the reason.
func TestDecideNamesAnUndecidedOverloadAtTheChosenPoint(t *testing.T) {
	a := fakeInput("a", []int64{10, 11, 12, 10, 11}, []int64{50, 51, 52, 50, 51})
	b := fakeInput("b", []int64{20, 21, 22, 20, 21}, []int64{60, 61, 62, 60, 61})
	no := false
	for i, pr := range b.Result.Results {
		pr.Overload = &replay.Overload{GeneratorLimited: replay.Flag{Why: "n/a"}, Overloaded: replay.Flag{Why: "queue not measured"}}
		if i >= 2 {
			pr.Overload.Overloaded = replay.Flag{Set: &no, Why: "kept up"}
		}
	}
	d, err := Decide([]*Input{a, b}, DecideOptions{Objective: MaxGoodput})
	if err != nil {
		t.Fatal(err)
	}
	want := "b's c8: the overload test could not decide in 2 of 5 repeats (queue not measured): its goodput may have been measured at a point that did not keep up with its load"
	if d.Verdict != Winner || d.Winner != 1 || !slices.Contains(d.Limits, want) ||
		!slices.Contains(d.Rows[1].Notes, "point c8: the overload test could not decide in 2 of 5 repeats (queue not measured)") {
		t.Errorf("verdict %s, limits %q, notes %q", d.Verdict, d.Limits, d.Rows[1].Notes)
	}
	if strings.Contains(strings.Join(d.Limits, "\n"), "a's") {
		t.Errorf("a, whose overload test did not run, named: %q", d.Limits)
	}
}
