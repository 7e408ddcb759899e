package replay

import (
	"math"
	"math/big"

	"github.com/benchseal/benchseal/internal/digits"
)

// Value is one metric value: undefined (null), an exact rational, or a
// float64 computed the way a peer tool computes it.
type Value struct {
	r *big.Rat
	f float64
	k valueKind
}

type valueKind uint8

const (
	kindNull valueKind = iota
	kindExact
	kindFloat
)

// Null is the undefined value.
var Null = Value{}

// Exact returns an exact rational value. r is not copied.
func Exact(r *big.Rat) Value { return Value{r: r, k: kindExact} }

// Int returns an exact integer value.
func Int(v int64) Value { return Value{r: new(big.Rat).SetInt64(v), k: kindExact} }

// Frac returns the exact value num/den; den must not be zero.
func Frac(num, den int64) Value { return Value{r: big.NewRat(num, den), k: kindExact} }

// Float returns a floating-point value; NaN and infinities are undefined.
func Float(f float64) Value {
	if math.IsNaN(f) || math.IsInf(f, 0) {
		return Null
	}
	return Value{f: f, k: kindFloat}
}

// IsNull reports whether v is undefined.
func (v Value) IsNull() bool { return v.k == kindNull }

// IsExact reports whether v is an exact rational.
func (v Value) IsExact() bool { return v.k == kindExact }

// Rat returns the exact value, or nil when v is not exact.
func (v Value) Rat() *big.Rat {
	if v.k != kindExact {
		return nil
	}
	return v.r
}

// Float64 returns v as the nearest float64 (exact values round to nearest,
// ties to even); ok is false when v is undefined.
func (v Value) Float64() (f float64, ok bool) {
	switch v.k {
	case kindExact:
		f, _ = v.r.Float64()
		return f, true
	case kindFloat:
		return v.f, true
	case kindSqrt:
		return sqrtFloat64(v.r), true
	}
	return 0, false
}

// IsInt reports whether v is an exact integer.
func (v Value) IsInt() bool { return v.k == kindExact && v.r.IsInt() }

// ratio returns num/den as an exact value, or Null when den is zero or
// negative.
func ratio(num, den *big.Int) Value {
	if den.Sign() <= 0 {
		return Null
	}
	return Exact(new(big.Rat).SetFrac(num, den))
}

// perSecond returns count·10⁹/windowNS exactly, Null when the window is
// not positive.
func perSecond(count *big.Int, windowNS int64) Value {
	if windowNS <= 0 {
		return Null
	}
	num := new(big.Int).Mul(count, big.NewInt(1e9))
	return ratio(num, big.NewInt(windowNS))
}

// kindSqrt values are the square root of a non-negative exact rational
// (population standard deviations), kept exact until formatted.
const kindSqrt valueKind = 3

// sqrtOf returns √r exactly (r ≥ 0).
func sqrtOf(r *big.Rat) Value {
	if r.Sign() < 0 {
		return Null
	}
	return Value{r: r, k: kindSqrt}
}

// Rounded returns v·10^places rounded once, half to even, to an integer;
// ok is false when v is undefined. Floats are converted exactly first.
func (v Value) Rounded(places int) (n *big.Int, ok bool) {
	scale := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(places)), nil)
	switch v.k {
	case kindExact:
		return roundRat(new(big.Rat).Mul(v.r, new(big.Rat).SetInt(scale))), true
	case kindFloat:
		r := new(big.Rat)
		r.SetFloat64(v.f)
		return roundRat(r.Mul(r, new(big.Rat).SetInt(scale))), true
	case kindSqrt:
		// y = √(a/b)·10^p = √(a·b·10^2p)/b.
		a, b := v.r.Num(), v.r.Denom()
		x := new(big.Int).Mul(a, b)
		x.Mul(x, scale)
		x.Mul(x, scale)
		k := new(big.Int).Sqrt(x)
		k.Quo(k, b)
		// y ≥ k+½ ⇔ 4x ≥ b²(2k+1)².
		t := new(big.Int).Lsh(k, 1)
		t.Add(t, big.NewInt(1))
		t.Mul(t, t)
		t.Mul(t, new(big.Int).Mul(b, b))
		x4 := new(big.Int).Lsh(x, 2)
		switch x4.Cmp(t) {
		case 1:
			k.Add(k, big.NewInt(1))
		case 0:
			if k.Bit(0) == 1 {
				k.Add(k, big.NewInt(1))
			}
		}
		return k, true
	}
	return nil, false
}

// roundRat rounds r to the nearest integer, ties to even: the one
// rounding rule of every printed digit (internal/digits).
func roundRat(r *big.Rat) *big.Int { return digits.Round(r, 0) }

// sqrtFloat64 returns √r as the nearest float64 from a 256-bit square root.
func sqrtFloat64(r *big.Rat) float64 {
	f := new(big.Float).SetPrec(256).SetRat(r)
	f.Sqrt(f)
	x, _ := f.Float64()
	return x
}

// IsSqrt reports whether v is an exact square root (a standard deviation).
func IsSqrt(v Value) bool { return v.k == kindSqrt }

// ScaleSqrt returns v·s for a square-root value v = √r (as √(r·s²)).
func ScaleSqrt(v Value, s *big.Rat) Value {
	if v.k != kindSqrt {
		return Null
	}
	s2 := new(big.Rat).Mul(s, s)
	return sqrtOf(s2.Mul(s2, v.r))
}
