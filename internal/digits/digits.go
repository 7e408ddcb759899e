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
func Percent(f float64) string { return Sig(100*f, 6) + "%" }

// PValue is a p-value to three significant digits ("0.00794"), as compare
// and decide print it.
func PValue(p float64) string { return Sig(p, 3) }

// Count writes n with its noun, one when n is 1 and many otherwise
// ("1 shard", "4 shards"): a count printed beside a fixed plural reads
// wrong exactly when it is 1, the case small runs and imports hit.
func Count[N ~int | ~int64](n N, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return strconv.FormatInt(int64(n), 10) + " " + many
}

// The functions below spell a float64 or a big.Rat the way each library
// site spelled it with a fmt verb or strconv before every such site came
// here (issue 27): each is byte for byte the verb named in its comment,
// so no reason, note, answer or error text changed when it moved. New
// text prefers Float, Rat and the named rules above; these keep the
// spellings that runs, goldens and testscripts already hold.

// Shortest is f in the fewest digits that read back as f, as %v and %g
// print a float64 (strconv's 'g' with precision -1): exponent form when
// the decimal exponent is below -4 or at least 6 ("1e+06", "2.5",
// "1e-05"). It is the spelling of a value a user gave (a flag, a plan's
// rate, a number read from a file) quoted back in a message: the user
// recognises their own number, not a rounded one.
func Shortest(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }

// Decimal is f in the fewest digits that read back as f, never in
// exponent form ("1000000", "0.00001"), as strconv.FormatFloat(f, 'f',
// -1, 64): the spelling of a rate or a measured value inside a name or a
// sentence where an exponent would read as a typo ("rate 1e+06 req/s").
func Decimal(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// Sig is f to n significant digits, as %.ng ("0.001235" for 0.00123456
// and n 4; exponent form when the exponent is below -4 or at least n):
// for a derived value (an estimate, a bound, an interval) whose size is
// not known in advance, so a fixed number of places would print 0.000 or
// a run of meaningless digits.
func Sig(f float64, n int) string { return strconv.FormatFloat(f, 'g', n, 64) }

// Places is f with exactly n fractional digits, as %.nf: the exact
// binary value rounded once, a tie to even, as Float, but strconv's
// spelling of the edges that Float writes "-": NaN, +Inf, -Inf, and a
// negative value that rounds to zero keeps its sign ("-0.000"). It is for
// a measured quantity in a message (joules, watts, seconds, a percent)
// whose unit fixes how many places mean something.
func Places(f float64, n int) string { return strconv.FormatFloat(f, 'f', n, 64) }

// Sci is f in exponent form with n digits after the point, as %.ne
// ("1.2e-07"): a relative error, which spans many orders of magnitude and
// matters only in its order.
func Sci(f float64, n int) string { return strconv.FormatFloat(f, 'e', n, 64) }

// RatAway is r with exactly places fractional digits, the last rounded to
// nearest and a tie away from zero, as big.Rat.FloatString (unlike Rat,
// whose ties go to even): the spelling of the capacity bounds of a sweep
// (replay's and compare's reasons), which have always been printed so;
// a rate is a decimal the plan gave, so a tie at the third place is rare
// but would be printed as before.
func RatAway(r *big.Rat, places int) string { return r.FloatString(places) }

// ShortestList is fs as %v prints a []float64: each value as Shortest,
// separated by spaces, in brackets ("[0.1 0.5 1]", "[]" for none), the
// spelling of a scrape's histogram bucket edges quoted in an error.
func ShortestList(fs []float64) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = Shortest(f)
	}
	return "[" + strings.Join(parts, " ") + "]"
}
