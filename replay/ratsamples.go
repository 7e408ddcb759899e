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
	xs []frac
	// Accumulators by denominator: denominators below smallDen (token
	// counts, in practice) index dense, the others go to byDen.
	dense []sumAcc
	byDen map[int64]*sumAcc
	// count is the number of samples; mayspill and sp as in intSamples.
	count    int64
	mayspill *bool
	sp       *ratSpill
}

// smallDen bounds the denominators accumulated in ratSamples.dense.
const smallDen = 1 << 12

func (s *ratSamples) add(num, den int64) {
	s.count++
	if s.sp == nil && s.mayspill != nil && s.count > spillAt {
		s.spillSamples()
		*s.mayspill = true
	}
	if s.sp != nil {
		s.addSpilled(frac{num, den})
	} else {
		s.xs = append(s.xs, frac{num, den})
	}
	if den < smallDen {
		if int(den) >= len(s.dense) {
			s.dense = append(s.dense, make([]sumAcc, int(den)+1-len(s.dense))...)
		}
		s.dense[den].add(num)
		return
	}
	if s.byDen == nil {
		s.byDen = map[int64]*sumAcc{}
	}
	a := s.byDen[den]
	if a == nil {
		a = &sumAcc{}
		s.byDen[den] = a
	}
	a.add(num)
}

func (s *ratSamples) n() int64 { return s.count }

// sums returns Σx and Σx², exactly while their common denominator stays
// under exactSumBits bits. Every distinct denominator (a request's output
// tokens − 1) can multiply it, and each exact addition reduces by a GCD
// of that size, so a run whose answers have thousands of distinct long
// lengths (or a crafted one, of distinct primes) made the sums cubic in
// the number of records: 8,000 records took 5 minutes. Past the bound,
// the remaining terms are added in binary floating point of sumFloatPrec
// bits, linear in their count; the error, under 2^−(sumFloatPrec−64) of
// the sums, is far below any digit a report prints or a claim's
// tolerance (1e−6) can see.
func (s *ratSamples) sums() (sum, sq *big.Rat) {
	var acc ratSums
	for d := range s.dense {
		if s.dense[d].n > 0 {
			acc.add(int64(d), &s.dense[d])
		}
	}
	dens := make([]int64, 0, len(s.byDen))
	for d := range s.byDen {
		dens = append(dens, d)
	}
	slices.Sort(dens)
	for _, d := range dens {
		acc.add(d, s.byDen[d])
	}
	return acc.totals()
}

// exactSumBits bounds the denominator of ratSamples' exact sums (the
// least common multiple of 1..4095, every dense denominator, is about
// 5,900 bits, so a run of lengths below 4,097 tokens stays exact).
const exactSumBits = 1 << 13

// sumFloatPrec is the precision of the sums' terms past exactSumBits.
const sumFloatPrec = 1 << 10

// ratSums accumulates Σx and Σx² of ratSamples, by denominator.
type ratSums struct {
	sum, sq   big.Rat
	fsum, fsq *big.Float // terms past exactSumBits; nil before
}

func (r *ratSums) add(d int64, a *sumAcc) {
	s1, s2 := a.sums()
	bd := big.NewInt(d)
	bd2 := new(big.Int).Mul(bd, bd)
	if r.fsum == nil && r.sum.Denom().BitLen()+r.sq.Denom().BitLen()/2 <= exactSumBits {
		r.sum.Add(&r.sum, new(big.Rat).SetFrac(s1, bd))
		r.sq.Add(&r.sq, new(big.Rat).SetFrac(s2, bd2))
		return
	}
	if r.fsum == nil {
		r.fsum, r.fsq = new(big.Float).SetPrec(sumFloatPrec), new(big.Float).SetPrec(sumFloatPrec)
	}
	q := func(num, den *big.Int) *big.Float {
		n := new(big.Float).SetPrec(sumFloatPrec).SetInt(num)
		return n.Quo(n, new(big.Float).SetPrec(sumFloatPrec).SetInt(den))
	}
	r.fsum.Add(r.fsum, q(s1, bd))
	r.fsq.Add(r.fsq, q(s2, bd2))
}

func (r *ratSums) totals() (sum, sq *big.Rat) {
	sum, sq = new(big.Rat).Set(&r.sum), new(big.Rat).Set(&r.sq)
	if r.fsum != nil {
		f, _ := r.fsum.Rat(nil)
		sum.Add(sum, f)
		g, _ := r.fsq.Rat(nil)
		sq.Add(sq, g)
	}
	return sum, sq
}

// ranks returns the order statistics at the given 1-based ranks (each in
// [1, n]), by selection rather than a full sort. It reorders s.xs.
func (s *ratSamples) ranks(rs []int64) []frac {
	if s.sp != nil {
		return s.spilledRanks(rs)
	}
	ks := make([]int, len(rs))
	for i, r := range rs {
		ks[i] = int(r - 1)
	}
	slices.Sort(ks)
	ks = slices.Compact(ks)
	selectFracs(s.xs, 0, ks, 2*bits.Len(uint(len(s.xs))))
	out := make([]frac, len(rs))
	for i, r := range rs {
		out[i] = s.xs[r-1]
	}
	return out
}

// selectFracs reorders xs, which starts at index base of the whole array,
// so that xs[k−base] holds the element a sort by cmpFrac would put at
// index k, for every k in ks (ascending, distinct, within xs). It is a
// quickselect on every wanted index at once (three-way partitions, so
// equal values cost nothing); past depth levels it sorts instead, which
// bounds the worst case to O(n log n).
func selectFracs(xs []frac, base int, ks []int, depth int) {
	for len(ks) > 0 {
		if len(xs) <= 16 || depth == 0 {
			slices.SortFunc(xs, cmpFrac)
			return
		}
		depth--
		p := median3(xs[0], xs[len(xs)/2], xs[len(xs)-1])
		// Dutch flag: xs[:lt] < p, xs[lt:gt] == p, xs[gt:] > p.
		lt, i, gt := 0, 0, len(xs)
		for i < gt {
			switch c := cmpFrac(xs[i], p); {
			case c < 0:
				xs[lt], xs[i] = xs[i], xs[lt]
				lt++
				i++
			case c > 0:
				gt--
				xs[gt], xs[i] = xs[i], xs[gt]
			default:
				i++
			}
		}
		a, _ := slices.BinarySearch(ks, base+lt)
		b, _ := slices.BinarySearch(ks, base+gt)
		if a > 0 {
			selectFracs(xs[:lt], base, ks[:a], depth)
		}
		xs, base, ks = xs[gt:], base+gt, ks[b:]
	}
}

func median3(a, b, c frac) frac {
	if cmpFrac(a, b) > 0 {
		a, b = b, a
	}
	if cmpFrac(b, c) > 0 {
		b = c
		if cmpFrac(a, b) > 0 {
			b = a
		}
	}
	return b
}

func (f frac) value() Value { return Frac(f.num, f.den) }
