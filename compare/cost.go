package compare

import (
	"fmt"
	"math/big"
	"slices"
	"strings"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/stats"
)

// costRestsOnPrice qualifies a cost decision (cand ordered best first,
// at least two long): a cost per good token is the publisher's declared
// price per hour divided by the measured token goodput, so only the
// divisor is measured. The limits say so with each price; and a cost win
// counts as a measured effect only when the winner's token goodput is
// also significantly above each other candidate's, or their declared
// prices are equal (then the cost test is the token goodput test).
// Otherwise the difference is the prices', and the decision says that
// instead of a significant win.
func (d *Decision) costRestsOnPrice(cand []int) {
	var prices []string
	var first *big.Rat // the first price, to tell whether the prices differ
	differ := false
	for _, i := range cand {
		c := d.Inputs[d.Rows[i].Input].Result.Cost
		if c == nil {
			continue
		}
		if first == nil {
			first = c.PricePerHour
		} else if c.PricePerHour.Cmp(first) != 0 {
			differ = true
		}
		prices = append(prices, fmt.Sprintf("%s: %s %s/h", d.Rows[i].Name, c.Text, c.Currency))
	}
	priceList := strings.Join(prices, ", ")
	d.Limits = append(d.Limits, "cost per good token rests on the publisher's declared price ("+priceList+
		"): the price is the publisher's statement, not measured; only the token goodput it divides is measured")
	if d.Verdict != Winner || !differ {
		if d.Verdict == Winner {
			d.Answer += "; at the publisher's declared prices (" + priceList + ")"
		}
		return
	}
	w := d.Rows[cand[0]]
	win := d.Inputs[w.Input]
	var ps []float64
	for _, o := range cand[1:] {
		or := d.Rows[o]
		x1, x2 := side(win, w.Point, schema.MetricTokenGoodput), side(d.Inputs[or.Input], or.Point, schema.MetricTokenGoodput)
		p := 1.0
		if t, err := stats.MannWhitneyU(floats(x1.Values), floats(x2.Values)); err == nil && x1.NullReason == "" && x2.NullReason == "" &&
			x1.Summary.Median.Rat().Cmp(x2.Summary.Median.Rat()) > 0 {
			p = t.P
		}
		ps = append(ps, p)
	}
	pg := slices.Max(stats.Holm(ps))
	if pg <= d.Alpha {
		d.Answer += fmt.Sprintf("; at the publisher's declared prices (%s), with a measured token goodput above the others' (p = %s)", priceList, digits.PValue(pg))
		return
	}
	d.Verdict, d.Winner = NoSignificantWinner, -1
	d.Answer = fmt.Sprintf("no configuration wins on cost per million good tokens by a measured difference: %s's cost per good token is lower (p = %s) only through the publisher's declared prices (%s); its measured token goodput is not significantly above %s's (p = %s), so the difference is the declared price's, not a measured effect",
		w.Name, digits.PValue(d.P), priceList, names(otherNames(d, cand[1:])), digits.PValue(pg))
}

func otherNames(d *Decision, idx []int) []string {
	var out []string
	for _, i := range idx {
		out = append(out, d.Rows[i].Name)
	}
	return out
}
