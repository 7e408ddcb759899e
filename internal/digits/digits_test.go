package digits

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"testing"
)

func TestMillisecondsRoundsHalfToEven(t *testing.T) {
	for _, c := range []struct {
		ns   int64
		want string
	}{
		{370050500, "370.050"}, // a tie: the even neighbour
		{370051500, "370.052"},
		{370050501, "370.051"},
		{2500, "0.002"},
		{3500, "0.004"},
		{-2500, "-0.002"},
		{0, "0.000"},
		{999, "0.001"},
	} {
		if got := Milliseconds(c.ns); got != c.want {
			t.Errorf("Milliseconds(%d) = %q, want %q", c.ns, got, c.want)
		}
	}
}

func TestFloatAndRat(t *testing.T) {
	if got := Float(135.6805, 3); got != "135.680" && got != "135.681" {
		t.Errorf("Float(135.6805, 3) = %q", got)
	}
	if got := Float(0.0625, 3); got != "0.062" { // exact binary tie
		t.Errorf("Float(0.0625, 3) = %q, want 0.062", got)
	}
	if got := Float(math.NaN(), 3); got != "-" {
		t.Errorf("Float(NaN) = %q, want -", got)
	}
	if got := Rat(big.NewRat(-5, 2), 0); got != "-2" {
		t.Errorf("Rat(-5/2, 0) = %q, want -2", got)
	}
	if got := PValue(0.0079365); got != "0.00794" {
		t.Errorf("PValue = %q, want 0.00794", got)
	}
}

// TestCount: the noun follows the count.
func TestCount(t *testing.T) {
	for _, c := range []struct {
		n    int
		want string
	}{{0, "0 shards"}, {1, "1 shard"}, {2, "2 shards"}} {
		if got := Count(c.n, "shard", "shards"); got != c.want {
			t.Errorf("Count(%d) = %q, want %q", c.n, got, c.want)
		}
	}
}

// verbCases are the values the verb-equality tests below spell: zero of
// both signs, negatives, ties, the exponent thresholds of %g (1e-5,
// 1e-4, 1e6, 1e21), the extremes of float64, and NaN and the infinities.
var verbCases = []float64{
	0, math.Copysign(0, -1), 1, -1, 0.5, 2.5, -2.5, 0.0625, 0.1 + 0.2, 1.0 / 3,
	-0.0001, 0.00001, 0.0001, 0.00123456, 123456.789, 999999, 1e6, 1234567,
	1e20, 1e21, 1.5e21, -1e21, 1e-7, 5e-324, math.MaxFloat64, -math.MaxFloat64,
	math.NaN(), math.Inf(1), math.Inf(-1),
}

// TestSpellingsEqualTheVerbsTheyReplace: each function spells every case
// byte for byte as the fmt verb or strconv call its comment names, so
// moving a site to it changes no output.
func TestSpellingsEqualTheVerbsTheyReplace(t *testing.T) {
	for _, f := range verbCases {
		check := func(name, got, want string) {
			t.Helper()
			if got != want {
				t.Errorf("%s(%v) = %q, want %q", name, f, got, want)
			}
		}
		check("Shortest", Shortest(f), fmt.Sprintf("%v", f))
		check("Shortest", Shortest(f), fmt.Sprintf("%g", f))
		check("Decimal", Decimal(f), strconv.FormatFloat(f, 'f', -1, 64))
		for n := range 8 {
			check(fmt.Sprintf("Sig(%d)", n), Sig(f, n), fmt.Sprintf("%.*g", n, f))
			check(fmt.Sprintf("Places(%d)", n), Places(f, n), fmt.Sprintf("%.*f", n, f))
			check(fmt.Sprintf("Sci(%d)", n), Sci(f, n), fmt.Sprintf("%.*e", n, f))
		}
		check("Sig(17)", Sig(f, 17), fmt.Sprintf("%.17g", f))
	}
	for _, fs := range [][]float64{nil, {}, {0.1}, verbCases} {
		if got, want := ShortestList(fs), fmt.Sprintf("%v", fs); got != want {
			t.Errorf("ShortestList(%v) = %q, want %q", fs, got, want)
		}
	}
}

// TestSpellingsOfEdges: the spellings a reader sees at the edges, written
// out so a change in strconv would show here first.
func TestSpellingsOfEdges(t *testing.T) {
	for _, c := range []struct{ got, want string }{
		{Shortest(0), "0"}, {Shortest(math.Copysign(0, -1)), "-0"},
		{Shortest(2.5), "2.5"}, {Shortest(1e6), "1e+06"}, {Shortest(1e21), "1e+21"},
		{Shortest(0.00001), "1e-05"}, {Shortest(0.0001), "0.0001"},
		{Shortest(math.NaN()), "NaN"}, {Shortest(math.Inf(1)), "+Inf"},
		{Decimal(1e21), "1000000000000000000000"}, {Decimal(1e-7), "0.0000001"},
		{Decimal(-2.5), "-2.5"}, {Decimal(math.Inf(-1)), "-Inf"},
		{Sig(0.00123456, 4), "0.001235"}, {Sig(12345, 3), "1.23e+04"}, {Sig(0, 3), "0"},
		{Sig(1e-7, 3), "1e-07"}, {Sig(-1.5, 4), "-1.5"},
		{Places(0.0625, 3), "0.062"}, {Places(-0.0001, 3), "-0.000"}, {Places(2.5, 0), "2"},
		{Places(1e21, 1), "1000000000000000000000.0"}, {Places(math.NaN(), 3), "NaN"},
		{Sci(1.23e-7, 1), "1.2e-07"}, {Sci(0, 1), "0.0e+00"},
	} {
		if c.got != c.want {
			t.Errorf("got %q, want %q", c.got, c.want)
		}
	}
}

// TestRatAwayEqualsFloatString: ties go away from zero, as
// big.Rat.FloatString, where Rat sends them to even.
func TestRatAwayEqualsFloatString(t *testing.T) {
	for _, r := range []*big.Rat{
		big.NewRat(0, 1), big.NewRat(5, 2), big.NewRat(-5, 2), big.NewRat(1, 2000),
		big.NewRat(-1, 2000), big.NewRat(3, 2000), big.NewRat(1, 3), big.NewRat(-2, 3),
		big.NewRat(123456789, 1000), big.NewRat(1, 1e9), new(big.Rat).SetFloat64(1e21),
	} {
		for _, n := range []int{0, 1, 3, 12} {
			if got, want := RatAway(r, n), r.FloatString(n); got != want {
				t.Errorf("RatAway(%s, %d) = %q, want %q", r, n, got, want)
			}
		}
	}
	if got := RatAway(big.NewRat(1, 2000), 3); got != "0.001" {
		t.Errorf("RatAway(1/2000, 3) = %q, want 0.001 (a tie away from zero)", got)
	}
	if got := Rat(big.NewRat(1, 2000), 3); got != "0.000" {
		t.Errorf("Rat(1/2000, 3) = %q, want 0.000 (a tie to even)", got)
	}
}
