package replay

import (
	"cmp"
	"math/big"
	"math/bits"
	"slices"
)

// frac is an exact per-request ratio num/den with den > 0 (a TPOT).
type frac struct{ num, den int64 }

func cmpFrac(a, b frac) int {
	if a.num >= 0 && b.num >= 0 {
		h1, l1 := bits.Mul64(uint64(a.num), uint64(b.den))
		h2, l2 := bits.Mul64(uint64(b.num), uint64(a.den))
		if c := cmp.Compare(h1, h2); c != 0 {
			return c
		}
		return cmp.Compare(l1, l2)
	}
	x := new(big.Int).Mul(big.NewInt(a.num), big.NewInt(b.den))
	y := new(big.Int).Mul(big.NewInt(b.num), big.NewInt(a.den))
	return x.Cmp(y)
}

// ratSamples holds exact rational samples, with Σx and Σx² kept per
// denominator so that the totals stay small integers until the end.
type ratSamples struct {
	xs    []frac
	byDen map[int64]*sumAcc
}

func (s *ratSamples) add(num, den int64) {
	if s.byDen == nil {
		s.byDen = map[int64]*sumAcc{}
	}
	s.xs = append(s.xs, frac{num, den})
	a := s.byDen[den]
	if a == nil {
		a = &sumAcc{}
		s.byDen[den] = a
	}
	a.add(num)
}

func (s *ratSamples) n() int64 { return int64(len(s.xs)) }

// sums returns Σx and Σx² exactly.
func (s *ratSamples) sums() (sum, sq *big.Rat) {
	sum, sq = new(big.Rat), new(big.Rat)
	dens := make([]int64, 0, len(s.byDen))
	for d := range s.byDen {
		dens = append(dens, d)
	}
	slices.Sort(dens)
	for _, d := range dens {
		s1, s2 := s.byDen[d].sums()
		bd := big.NewInt(d)
		sum.Add(sum, new(big.Rat).SetFrac(s1, bd))
		sq.Add(sq, new(big.Rat).SetFrac(s2, new(big.Int).Mul(bd, bd)))
	}
	return sum, sq
}

func (s *ratSamples) sort() { slices.SortFunc(s.xs, cmpFrac) }

func (f frac) value() Value { return Frac(f.num, f.den) }
