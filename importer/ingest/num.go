package ingest

import (
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
)

// Units in nanoseconds, for the unit arguments of ToNS and ToFloat.
const (
	Nanosecond  int64 = 1
	Microsecond int64 = 1e3
	Millisecond int64 = 1e6
	Second      int64 = 1e9
)

// Rat parses a JSON number exactly.
func Rat(n json.Number) (*big.Rat, error) {
	s := strings.TrimSpace(string(n))
	if s == "" {
		return nil, errors.New("missing number")
	}
	ls := strings.ToLower(s)
	if strings.Contains(ls, "nan") || strings.Contains(ls, "inf") {
		return nil, fmt.Errorf("%s is not a finite number", s)
	}
	if len(s) > 400 {
		return nil, fmt.Errorf("number too long (%d characters)", len(s))
	}
	// Reject huge exponents before big.Rat tries to expand them.
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		var e int
		if _, err := fmt.Sscan(s[i+1:], &e); err != nil || e > 30 || e < -40 {
			return nil, fmt.Errorf("number %s out of range", s)
		}
	}
	r, ok := new(big.Rat).SetString(s)
	if !ok {
		return nil, fmt.Errorf("invalid number %q", s)
	}
	return r, nil
}

// ToNS converts n, in units of unit nanoseconds (e.g. Second for a value
// in seconds), to integer nanoseconds, rounding half to even. The result
// is exact for values written with up to nanosecond precision.
func ToNS(n json.Number, unit int64) (int64, error) {
	r, err := Rat(n)
	if err != nil {
		return 0, err
	}
	return ratToNS(r.Mul(r, new(big.Rat).SetInt64(unit)))
}

// QuotientNS returns num ÷ den in units of unit nanoseconds as integer
// nanoseconds, rounding half to even (e.g. a count ÷ a rate per minute,
// with unit 60 s, is the window in which the count happened).
func QuotientNS(num, den json.Number, unit int64) (int64, error) {
	a, err := Rat(num)
	if err != nil {
		return 0, err
	}
	b, err := Rat(den)
	if err != nil {
		return 0, err
	}
	if b.Sign() == 0 {
		return 0, errors.New("division by zero")
	}
	a.Quo(a, b)
	return ratToNS(a.Mul(a, new(big.Rat).SetInt64(unit)))
}

var maxNS = new(big.Int).SetInt64(math.MaxInt64)

func ratToNS(r *big.Rat) (int64, error) {
	q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	// Round half to even on |m|/den.
	m2 := new(big.Int).Abs(m)
	m2.Lsh(m2, 1)
	switch c := m2.Cmp(r.Denom()); {
	case c > 0 || (c == 0 && q.Bit(0) == 1):
		if r.Sign() < 0 {
			q.Sub(q, big.NewInt(1))
		} else {
			q.Add(q, big.NewInt(1))
		}
	}
	if new(big.Int).Abs(q).Cmp(maxNS) > 0 {
		return 0, errors.New("value out of range for int64 nanoseconds")
	}
	return q.Int64(), nil
}

// ToFloat returns n × mul as the float64 nearest to the exact product, for
// converting a claimed value to the replay contract's units (e.g. seconds
// to nanoseconds with mul = Second).
func ToFloat(n json.Number, mul int64) (float64, error) {
	r, err := Rat(n)
	if err != nil {
		return 0, err
	}
	f, _ := r.Mul(r, new(big.Rat).SetInt64(mul)).Float64()
	if math.IsInf(f, 0) {
		return 0, fmt.Errorf("number %s out of range", n)
	}
	return f, nil
}

// ToFloatDiv returns n ÷ div as the nearest float64 (e.g. tokens per
// minute to per second with div = 60).
func ToFloatDiv(n json.Number, div int64) (float64, error) {
	r, err := Rat(n)
	if err != nil {
		return 0, err
	}
	f, _ := r.Quo(r, new(big.Rat).SetInt64(div)).Float64()
	return f, nil
}

// Int parses a JSON number that must be a whole number (e.g. a token
// count written as 150 or 150.0).
func Int(n json.Number) (int64, error) {
	r, err := Rat(n)
	if err != nil {
		return 0, err
	}
	if !r.IsInt() {
		return 0, fmt.Errorf("%s is not a whole number", n)
	}
	if !r.Num().IsInt64() {
		return 0, fmt.Errorf("%s out of range", n)
	}
	return r.Num().Int64(), nil
}

// NonNegNS is ToNS that also rejects negative values; what names the
// quantity in the error.
func NonNegNS(n json.Number, unit int64, what string) (int64, error) {
	v, err := ToNS(n, unit)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	if v < 0 {
		return 0, fmt.Errorf("%s: negative duration %s", what, n)
	}
	return v, nil
}
