package replay

import (
	"maps"
	"math"
	"math/big"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/benchseal/benchseal/stats"
)

// sampleSets are value sets that exercise every path of intSamples: small
// values (one histogram level), large ones (two levels), few (sorted), negatives and
// values ≥ 2³² (side lists), many duplicates, and sums that overflow int64.
func sampleSets() map[string][]int64 {
	rng := rand.New(rand.NewPCG(3, 4))
	gen := func(n int, f func() int64) []int64 {
		xs := make([]int64, n)
		for i := range xs {
			xs[i] = f()
		}
		return xs
	}
	return map[string][]int64{
		"small":      gen(5000, func() int64 { return rng.Int64N(1 << 15) }),
		"itl-like":   gen(200000, func() int64 { return 5e6 + rng.Int64N(3e7) }),
		"wide":       gen(100000, func() int64 { return rng.Int64N(1 << 32) }),
		"duplicates": gen(70000, func() int64 { return 1e7 + rng.Int64N(3) }),
		"mixed": gen(100000, func() int64 {
			switch rng.IntN(20) {
			case 0:
				return -rng.Int64N(1 << 40)
			case 1:
				return 1<<32 + rng.Int64N(1<<40)
			}
			return rng.Int64N(1 << 31)
		}),
		"overflow": gen(3000, func() int64 {
			if rng.IntN(2) == 0 {
				return math.MaxInt64 - rng.Int64N(1000)
			}
			return rng.Int64N(1 << 32)
		}),
		"one": {42},
		// Around the sort limit of ranks, across the growing blocks.
		"few":        gen(300, func() int64 { return 5e6 + rng.Int64N(3e8) }),
		"sort-limit": gen(sortBelow, func() int64 { return 5e6 + rng.Int64N(3e8) }),
		"past-limit": gen(sortBelow+1, func() int64 { return 5e6 + rng.Int64N(3e8) }),
	}
}

// addAll adds every x of xs through addDiffs, as addGaps adds a request's
// gaps: xs are the differences of their running sums (from 0, wrapping as
// int64 arithmetic does, so that every x comes back exactly).
func (s *intSamples) addAll(xs []int64) {
	c := make([]int64, len(xs)+1)
	for i, x := range xs {
		c[i+1] = c[i] + x
	}
	s.addDiffs(c)
}

func TestAddAllMatchesAdd(t *testing.T) {
	for name, xs := range sampleSets() {
		var one, all intSamples
		for _, x := range xs {
			one.add(x)
		}
		// Uneven slices, as requests' gaps arrive.
		for i := 0; i < len(xs); {
			j := min(len(xs), i+1+i%37)
			all.addAll(xs[i:j])
			i = j
		}
		s1, q1 := one.acc.sums()
		s2, q2 := all.acc.sums()
		if one.n() != all.n() || one.min != all.min || one.max != all.max || s1.Cmp(s2) != 0 || q1.Cmp(q2) != 0 {
			t.Errorf("%s: addAll gives n=%d min=%d max=%d Σ=%v Σ²=%v; add gives n=%d min=%d max=%d Σ=%v Σ²=%v",
				name, all.n(), all.min, all.max, s2, q2, one.n(), one.min, one.max, s1, q1)
		}
		var sum, sq big.Int
		for _, x := range xs {
			bx := big.NewInt(x)
			sum.Add(&sum, bx)
			sq.Add(&sq, bx.Mul(bx, bx))
		}
		if s2.Cmp(&sum) != 0 || q2.Cmp(&sq) != 0 {
			t.Errorf("%s: Σ=%v Σ²=%v, want %v %v", name, s2, q2, &sum, &sq)
		}
		if !slices.Equal(one.sorted(), all.sorted()) {
			t.Errorf("%s: addAll kept other samples than add", name)
		}
	}
}

func TestRanksMatchSort(t *testing.T) {
	for name, xs := range sampleSets() {
		var s intSamples
		s.addAll(xs)
		sorted := slices.Sorted(slices.Values(xs))
		n := int64(len(xs))
		// Every percentile, the extremes, and more ranks than one
		// second-level pass holds.
		rs := []int64{n, 1}
		for _, p := range Percentiles {
			rs = append(rs, stats.NearestRank(n, p.Num, p.Den))
		}
		for i := range int64(600) {
			rs = append(rs, 1+i*n/600)
		}
		for i, got := range s.ranks(rs) {
			if want := sorted[rs[i]-1]; got != want {
				t.Fatalf("%s: rank %d = %d, want %d", name, rs[i], got, want)
			}
		}
	}
}

func TestRatRanksMatchSort(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for _, n := range []int{1, 2, 17, 1000, 100000} {
		var s ratSamples
		for range n {
			den := 1 + rng.Int64N(60)
			if rng.IntN(10) == 0 {
				den = smallDen + rng.Int64N(5) // kept in the map
			}
			num := rng.Int64N(1e9)
			switch rng.IntN(10) {
			case 0:
				num = -num
			case 1:
				num = 7 * den // many equal values, different fractions
			}
			s.add(num, den)
		}
		sorted := slices.Clone(s.xs)
		slices.SortStableFunc(sorted, cmpFrac)
		rs := []int64{1, int64(n)}
		for _, p := range Percentiles {
			rs = append(rs, stats.NearestRank(int64(n), p.Num, p.Den))
		}
		for i, got := range s.ranks(rs) {
			if want := sorted[rs[i]-1]; cmpFrac(got, want) != 0 {
				t.Fatalf("n=%d: rank %d = %v, want %v", n, rs[i], got, want)
			}
		}
		// Σx and Σx² agree with a sum over the samples.
		sum, sq := s.sums()
		wsum, wsq := new(big.Rat), new(big.Rat)
		for _, x := range s.xs {
			r := big.NewRat(x.num, x.den)
			wsum.Add(wsum, r)
			wsq.Add(wsq, r.Mul(r, r))
		}
		if sum.Cmp(wsum) != 0 || sq.Cmp(wsq) != 0 {
			t.Fatalf("n=%d: sums %v %v, want %v %v", n, sum, sq, wsum, wsq)
		}
	}
}

// TestRatRanksAdversarial checks that selection stays fast (and right) on
// inputs that defeat a median-of-three pivot.
func TestRatRanksAdversarial(t *testing.T) {
	const n = 200000
	var s ratSamples
	for i := range n { // organ pipe
		s.add(int64(min(i, n-i)), 1)
	}
	got := s.ranks([]int64{1, n / 2, n})
	if got[0].num != 0 || got[1].num != n/4 || got[2].num != n/2 {
		t.Fatalf("ranks = %v", got)
	}
}

// TestRatSumsOfDistinctPrimeDenominators: TPOTs whose denominators (output
// tokens − 1) are all distinct primes make an exact sum's denominator their
// product; past exactSumBits the sums add the rest in floating point, which
// keeps them linear in the count, and the mean and variance still agree
// with the exact ones far below any printed digit (and to the ns at 30
// places, where a report rounds to 3).
func TestRatSumsOfDistinctPrimeDenominators(t *testing.T) {
	var s ratSamples
	exact, exactSq := new(big.Rat), new(big.Rat)
	rng := rand.New(rand.NewPCG(5, 6))
	n := 0
	for p := int64(5003); n < 800; p += 2 {
		if !big.NewInt(p).ProbablyPrime(0) {
			continue
		}
		num := rng.Int64N(1e12)
		s.add(num, p)
		x := big.NewRat(num, p)
		exact.Add(exact, x)
		exactSq.Add(exactSq, new(big.Rat).Mul(x, x))
		n++
	}
	var acc ratSums
	for _, d := range slices.Sorted(maps.Keys(s.byDen)) {
		acc.add(d, s.byDen[d])
	}
	if acc.fsum == nil {
		t.Fatalf("the sums of %d distinct prime denominators stayed exact: exactSumBits never reached", n)
	}
	sum, sq := s.sums()
	for _, c := range []struct {
		name       string
		got, exact *big.Rat
	}{{"Σx", sum, exact}, {"Σx²", sq, exactSq}} {
		diff := new(big.Rat).Sub(c.got, c.exact)
		rel := new(big.Rat).Quo(diff.Abs(diff), c.exact)
		if bound := new(big.Rat).SetFrac(big.NewInt(1), new(big.Int).Lsh(big.NewInt(1), sumFloatPrec-64)); rel.Cmp(bound) > 0 {
			f, _ := rel.Float64()
			t.Errorf("%s: relative error %g, above 2^-%d", c.name, f, sumFloatPrec-64)
		}
		g, _ := Exact(c.got).Rounded(30)
		e, _ := Exact(c.exact).Rounded(30)
		if g.Cmp(e) != 0 {
			t.Errorf("%s at 30 places: %s, exact %s", c.name, g, e)
		}
	}
}
