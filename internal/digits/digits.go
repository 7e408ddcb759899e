package digits

import (
	"math/big"
	"strconv"
	"strings"
)

// MillisecondPlaces is the number of fractional digits of a duration in
// milliseconds: whole microseconds.
const MillisecondPlaces = 3

// Round returns r·10^places rounded to the nearest integer, ties to even.
func Round(r *big.Rat, places int) *big.Int {
	s := new(big.Rat).Set(r)
	if places > 0 {
		s.Mul(s, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(places)), nil)))
	}
	num, den := s.Num(), s.Denom()
	q, m := new(big.Int).QuoRem(num, den, new(big.Int)) // truncated
	if m.Sign() < 0 {
		q.Sub(q, big.NewInt(1))
		m.Add(m, den)
	}
	// now num = q·den + m, 0 ≤ m < den
	c := new(big.Int).Lsh(m, 1).Cmp(den)
	if c > 0 || (c == 0 && q.Bit(0) == 1) {
		q.Add(q, big.NewInt(1))
	}
	return q
}

// Fixed writes n·10^-places as a decimal with exactly places fractional
// digits.
func Fixed(n *big.Int, places int) string {
	neg := n.Sign() < 0
	s := new(big.Int).Abs(n).String()
	if places > 0 {
		if len(s) <= places {
			s = strings.Repeat("0", places-len(s)+1) + s
		}
		s = s[:len(s)-places] + "." + s[len(s)-places:]
	}
	if neg {
		s = "-" + s
	}
	return s
}

// Rat is r with places fractional digits, rounded once, half to even.
func Rat(r *big.Rat, places int) string { return Fixed(Round(r, places), places) }

// Float is f's exact binary value with places fractional digits, rounded
// once, half to even (as Rat); NaN and ±Inf read "-".
func Float(f float64, places int) string {
	r := new(big.Rat).SetFloat64(f)
	if r == nil {
		return "-"
	}
	return Rat(r, places)
}

// Milliseconds is ns nanoseconds in milliseconds with MillisecondPlaces
// fractional digits, without the unit ("370.050" for 370050500).
func Milliseconds(ns int64) string {
	return Rat(new(big.Rat).SetFrac64(ns, 1e6), MillisecondPlaces)
}

// TrendPlaces is the number of fractional digits of an overload trend's
// slope, its interval's bounds, the rise it implies and the mean it is
// held to, in the report's table and in replay's evidence alike.
const TrendPlaces = 3

// Trend is f with TrendPlaces fractional digits (as Float).
func Trend(f float64) string { return Float(f, TrendPlaces) }

// Percent is a fraction as a percent to six significant digits, the form
// a margin is given in on the command line ("50%" for 0.5): reproduce's
// method and attest's and verify's reproduction lines print it alike.
func Percent(f float64) string { return strconv.FormatFloat(100*f, 'g', 6, 64) + "%" }

// PValue is a p-value to three significant digits ("0.00794"), as compare
// and decide print it.
func PValue(p float64) string { return strconv.FormatFloat(p, 'g', 3, 64) }

// Count writes n with its noun, one when n is 1 and many otherwise
// ("1 shard", "4 shards"): a count printed beside a fixed plural reads
// wrong exactly when it is 1, the case small runs and imports hit.
func Count[N ~int | ~int64](n N, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(int64(n), 10) + " " + many
}
