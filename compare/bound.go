package compare

import (
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/stats"
)

// Kinds of capacity bound.
const (
	// Exactly: the attainment crossed the target; the capacity is the
	// highest load below the first failing one.
	Exactly = "exactly"
	// AtLeast: every tested load met the target; the capacity is at
	// least the highest load tested.
	AtLeast = "at-least"
	// Below: the lowest tested load failed the target; the capacity is
	// below it.
	Below = "below"
)

// Bound is what one repeat's sweep says of a capacity: its value
// (Exactly), or a one-sided bound the test did not close.
type Bound struct {
	Kind  string
	Value *big.Rat
}

// String is "8", "≥ 16 (never crossed)" or "< 4 (below the lowest load
// tested)".
func (b *Bound) String() string {
	v := loadText(b.Value)
	switch b.Kind {
	case AtLeast:
		return "≥ " + v + " (never crossed)"
	case Below:
		return "< " + v + " (below the lowest load tested)"
	}
	return v
}

// loadText is an offered load as the manifest states it (loads are
// float64 there, so the shortest decimal is exact).
func loadText(v *big.Rat) string {
	f, _ := v.Float64()
	return digits.Decimal(f)
}

// cmpBounds orders two capacities when their bounds determine it: +1
// when a is larger, −1 when smaller, 0 when both are the same exact
// value; ok is false when the capacities may lie either way (two bounds
// from the same side, or an exact value inside the other's bound).
func cmpBounds(a, b *Bound) (c int, ok bool) {
	if a.Kind == Exactly && b.Kind == Exactly {
		return a.Value.Cmp(b.Value), true
	}
	if a.Kind == Exactly || (a.Kind == Below && b.Kind == AtLeast) {
		c, ok := cmpBounds(b, a)
		return -c, ok
	}
	// a is a bound and b is exact, or a is ≥ and b is <.
	switch {
	case a.Kind == AtLeast && b.Kind == Exactly && b.Value.Cmp(a.Value) < 0:
		return 1, true
	case a.Kind == Below && b.Kind == Exactly && b.Value.Cmp(a.Value) >= 0:
		return -1, true
	case a.Kind == AtLeast && b.Kind == Below && a.Value.Cmp(b.Value) >= 0:
		return 1, true
	}
	return 0, false
}

// exactBounds reports whether every repeat of the row crossed.
func exactBounds(r *Row) bool {
	for _, b := range r.CapacityBounds {
		if b == nil || b.Kind != Exactly {
			return false
		}
	}
	return true
}

// CapacityBoundsText describes the row's capacity over its repeats as
// the tested loads bound it: the bound when every repeat gives the same,
// else each with its count; "" when some repeat has no bound, or every
// repeat crossed (the capacity then has a median).
func (r *Row) CapacityBoundsText() string {
	if exactBounds(r) || slices.Contains(r.CapacityBounds, nil) {
		return ""
	}
	return boundsText(r)
}

// boundsText describes a row's capacity over its repeats: the bound
// when every repeat gives the same, else each with its count.
func boundsText(r *Row) string {
	count := map[string]int{}
	var order []string
	for _, b := range r.CapacityBounds {
		s := b.String()
		if count[s] == 0 {
			order = append(order, s)
		}
		count[s]++
	}
	if len(order) == 1 {
		return order[0]
	}
	var parts []string
	for _, s := range order {
		parts = append(parts, fmt.Sprintf("%s in %d of %d repeats", s, count[s], len(r.CapacityBounds)))
	}
	return strings.Join(parts, ", ")
}

// pairScore is Gehan's score of row i against row j: the repeat pairs
// whose bounds put i above j minus those that put it below, and how many
// pairs the bounds leave unordered.
func (d *Decision) pairScore(i, j int) (score, unordered int) {
	for _, a := range d.Rows[i].CapacityBounds {
		for _, b := range d.Rows[j].CapacityBounds {
			c, ok := cmpBounds(a, b)
			if !ok {
				unordered++
			}
			score += c
		}
	}
	return score, unordered
}

// orderByBounds sorts the candidates of a max-capacity decision by how
// many repeat pairs their bounds put them above the others (Gehan's
// generalisation of the rank-sum to censored values), when some capacity
// is only bounded; with every capacity exact the medians order them.
func (d *Decision) orderByBounds(cand []int) {
	censored := false
	for _, i := range cand {
		censored = censored || !exactBounds(&d.Rows[i])
	}
	if !censored {
		return
	}
	total := map[int]int{}
	for _, i := range cand {
		for _, j := range cand {
			if i != j {
				s, _ := d.pairScore(i, j)
				total[i] += s
			}
		}
	}
	slices.SortStableFunc(cand, func(a, b int) int { return total[b] - total[a] })
}

// rankCapacity decides a max-capacity decision in which some candidate's
// capacity the test bounded from one side only (cand is ordered by
// orderByBounds, at least two long). It reports false, deciding nothing,
// when every capacity is exact. The best row wins only when its bounds
// order every repeat pair against every other row; then the U test runs
// on values that keep that order (each bound stands at its load, a
// bound below just under it), which is the test on the true capacities,
// since a rank test sees only the order.
func (d *Decision) rankCapacity(cand []int) bool {
	censored := false
	for _, i := range cand {
		censored = censored || !exactBounds(&d.Rows[i])
	}
	if !censored {
		return false
	}
	w := cand[0]
	wr := &d.Rows[w]
	var undecided []string
	for _, o := range cand[1:] {
		if _, n := d.pairScore(w, o); n > 0 {
			undecided = append(undecided, fmt.Sprintf("%s (%s)", d.Rows[o].Name, boundsText(&d.Rows[o])))
		}
	}
	if len(undecided) > 0 {
		d.Verdict, d.Winner = NoDecision, -1
		d.Answer = fmt.Sprintf("no decision on capacity: neither bound decides between %s (%s) and %s: the tested loads do not order these capacities; test a wider range of loads",
			wr.Name, boundsText(wr), strings.Join(undecided, ", "))
		return true
	}
	var ps []float64
	var warns []string
	for _, o := range cand[1:] {
		t, err := stats.MannWhitneyU(boundFloats(wr.CapacityBounds), boundFloats(d.Rows[o].CapacityBounds))
		p := 1.0
		if err == nil {
			p = t.P
			if s := stats.SampleWarning(t, d.Alpha); s != "" && !slices.Contains(warns, s) {
				warns = append(warns, s)
			}
		}
		ps = append(ps, p)
	}
	d.P = slices.Max(stats.Holm(ps))
	d.Limits = append(d.Limits, warns...)
	d.Limits = append(d.Limits, "a capacity the test bounded from one side only has no median difference: no margin or interval is given")
	ru := &d.Rows[d.RunnerUp]
	n := fmt.Sprintf("%d vs %d repeats", len(wr.CapacityBounds), len(ru.CapacityBounds))
	if d.P <= d.Alpha {
		d.Verdict = Winner
		d.Answer = fmt.Sprintf("%s wins on capacity: %s against %s for %s (significant at α = %s, p = %s, %s)",
			wr.Name, boundsText(wr), boundsText(ru), ru.Name, digits.Shortest(d.Alpha), digits.PValue(d.P), n)
		return true
	}
	d.Verdict, d.Winner = NoSignificantWinner, -1
	d.Answer = fmt.Sprintf("no configuration wins on capacity significantly: %s's capacity (%s) is above %s's (%s) by the tested loads' bounds, but not significantly at α = %s (p = %s, %s)",
		wr.Name, boundsText(wr), ru.Name, boundsText(ru), digits.Shortest(d.Alpha), digits.PValue(d.P), n)
	return true
}

// boundFloats stands each bound at a value that keeps every order the
// bounds determine: an exact capacity and a lower bound at their load, an
// upper bound just below its load.
func boundFloats(bs []*Bound) []float64 {
	out := make([]float64, 0, len(bs))
	for _, b := range bs {
		f, _ := b.Value.Float64()
		if b.Kind == Below {
			f -= float64(max(f, 1) * 1e-9) // explicit: no fused multiply-subtract on arm64 (internal/floatcheck)
		}
		out = append(out, f)
	}
	return out
}
