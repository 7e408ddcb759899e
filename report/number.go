package report

import (
	"math"
	"math/big"
	"strconv"
	"strings"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/replay"
)

// JSONDecimals is the number of fractional digits of a non-integer exact
// value in JSON (rounded half to even, trailing zeros removed).
const JSONDecimals = 12

// ratePlaces is the number of fractional digits of a rate (req/s, tok/s)
// in every report: replay's point tables, its summary and compare's and
// decide's tables print one metric with the same digits.
const ratePlaces = 3

// Number formats v as a JSON number ("null" when undefined): integers as
// integers, other exact values with up to JSONDecimals fractional digits,
// floats as the shortest round-tripping decimal.
func Number(v replay.Value) string {
	if v.IsNull() {
		return "null"
	}
	if v.IsInt() {
		return v.Rat().Num().String()
	}
	if !v.IsExact() && !replay.IsSqrt(v) {
		f, _ := v.Float64()
		return formatFloat(f)
	}
	n, _ := v.Rounded(JSONDecimals)
	return trimZeros(fixed(n, JSONDecimals))
}

func formatFloat(f float64) string {
	a := math.Abs(f)
	if a != 0 && (a < 1e-6 || a >= 1e21) {
		return strconv.FormatFloat(f, 'e', -1, 64)
	}
	return strconv.FormatFloat(f, 'f', -1, 64)
}

// fixed writes n·10^-places as a decimal with exactly places digits
// (internal/digits, the rule replay's reason texts follow too).
func fixed(n *big.Int, places int) string { return digits.Fixed(n, places) }

func trimZeros(s string) string {
	if !strings.Contains(s, ".") {
		return s
	}
	s = strings.TrimRight(s, "0")
	return strings.TrimSuffix(s, ".")
}

// Decimal formats v·scale with places fractional digits (rounded once,
// half to even); "-" when undefined. scale is a rational like 1/1e6 for ns
// to ms.
func Decimal(v replay.Value, scale *big.Rat, places int) string {
	if v.IsNull() {
		return "-"
	}
	var w replay.Value
	switch {
	case v.IsExact():
		w = replay.Exact(new(big.Rat).Mul(v.Rat(), scale))
	case replay.IsSqrt(v):
		w = replay.ScaleSqrt(v, scale)
	default:
		f, _ := v.Float64()
		r := new(big.Rat).SetFloat64(f)
		w = replay.Exact(r.Mul(r, scale))
	}
	n, _ := w.Rounded(places)
	return fixed(n, places)
}

// MillisecondsText is a value in ns (a claim's, stored as a JSON number)
// as the reports print the same quantity: in ms to three places, with the
// unit ("5366.609 ms"); NaN and ±Inf, which no claim holds, read "-".
func MillisecondsText(ns float64) string {
	if math.IsNaN(ns) || math.IsInf(ns, 0) {
		return "-"
	}
	return Decimal(replay.Float(ns), nsToMS, 3) + " ms"
}

// plainFloat is f as the shortest decimal that round-trips, never with an
// exponent: a claim's number as it is stored.
func plainFloat(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

// shortestFloat is f as the shortest decimal that round-trips, with an
// exponent for large and small magnitudes (as %v and %g print it): a
// stated parameter such as a tolerance, margin or level, in text and JSON.
func shortestFloat(f float64) string { return strconv.FormatFloat(f, 'g', -1, 64) }
