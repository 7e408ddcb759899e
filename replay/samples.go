package replay

import (
	"math/big"
	"math/bits"
	"slices"
)

// sumAcc accumulates Σx and Σx² of int64 samples exactly: machine words
// while they cannot overflow, spilled into big integers when they might.
type sumAcc struct {
	n          int64
	s          int64
	sBig       big.Int
	sqLo, sqHi uint64
	sqBig      big.Int
}

func (a *sumAcc) add(x int64) {
	a.n++
	r := a.s + x
	if (x > 0 && r < a.s) || (x < 0 && r > a.s) {
		a.sBig.Add(&a.sBig, big.NewInt(a.s))
		r = x
	}
	a.s = r
	ux := uint64(x)
	if x < 0 {
		ux = uint64(-x)
	}
	hi, lo := bits.Mul64(ux, ux)
	var c uint64
	a.sqLo, c = bits.Add64(a.sqLo, lo, 0)
	a.sqHi, c = bits.Add64(a.sqHi, hi, c)
	if c != 0 || a.sqHi >= 1<<62 {
		// c != 0 cannot happen while sqHi < 2^62 before the add, since
		// hi < 2^62 too; spill to keep that invariant.
		w := new(big.Int).SetUint64(a.sqHi)
		w.Lsh(w, 64)
		w.Add(w, new(big.Int).SetUint64(a.sqLo))
		if c != 0 {
			w.Add(w, new(big.Int).Lsh(big.NewInt(1), 128))
		}
		a.sqBig.Add(&a.sqBig, w)
		a.sqLo, a.sqHi = 0, 0
	}
}

// sums returns Σx and Σx².
func (a *sumAcc) sums() (s, sq *big.Int) {
	s = new(big.Int).Add(&a.sBig, big.NewInt(a.s))
	w := new(big.Int).SetUint64(a.sqHi)
	w.Lsh(w, 64)
	w.Add(w, new(big.Int).SetUint64(a.sqLo))
	sq = w.Add(w, &a.sqBig)
	return s, sq
}

// meanStd returns the exact mean Σx/n and population standard deviation
// √((nΣx² − (Σx)²)/n²).
func meanStd(n int64, s, sq *big.Int) (mean, std Value) {
	if n == 0 {
		return Null, Null
	}
	bn := big.NewInt(n)
	mean = ratio(s, bn)
	v := new(big.Int).Mul(bn, sq)
	v.Sub(v, new(big.Int).Mul(s, s))
	std = sqrtOf(new(big.Rat).SetFrac(v, new(big.Int).Mul(bn, bn)))
	return mean, std
}

const blockSize = 1 << 16

// intSamples holds int64 samples compactly for exact order statistics:
// values in [0, 2³²) as uint32 in fixed-size blocks (growing never copies),
// others in side lists. Selection uses a histogram of the top 16 bits, so
// no full sort and no second copy of the data are needed.
type intSamples struct {
	blocks [][]uint32
	neg    []int64 // < 0
	large  []int64 // ≥ 2³²
	acc    sumAcc
	min    int64
	max    int64
}

func (s *intSamples) add(x int64) {
	if s.acc.n == 0 || x < s.min {
		s.min = x
	}
	if s.acc.n == 0 || x > s.max {
		s.max = x
	}
	s.acc.add(x)
	switch {
	case x < 0:
		s.neg = append(s.neg, x)
	case x >= 1<<32:
		s.large = append(s.large, x)
	default:
		if len(s.blocks) == 0 || len(s.blocks[len(s.blocks)-1]) == blockSize {
			s.blocks = append(s.blocks, make([]uint32, 0, blockSize))
		}
		b := &s.blocks[len(s.blocks)-1]
		*b = append(*b, uint32(x))
	}
}

func (s *intSamples) n() int64 { return s.acc.n }

// each calls f for every sample (in no particular order).
func (s *intSamples) each(f func(int64)) {
	for _, x := range s.neg {
		f(x)
	}
	for _, b := range s.blocks {
		for _, x := range b {
			f(int64(x))
		}
	}
	for _, x := range s.large {
		f(x)
	}
}

// ranks returns the order statistics at the given 1-based ranks (each in
// [1, n]).
func (s *intSamples) ranks(rs []int64) []int64 {
	out := make([]int64, len(rs))
	slices.Sort(s.neg)
	slices.Sort(s.large)
	nneg := int64(len(s.neg))
	nsmall := s.acc.n - nneg - int64(len(s.large))
	var want []int64 // ranks within the small values, 1-based
	for i, r := range rs {
		switch {
		case r <= nneg:
			out[i] = s.neg[r-1]
		case r > nneg+nsmall:
			out[i] = s.large[r-nneg-nsmall-1]
		default:
			want = append(want, r-nneg)
		}
	}
	if len(want) == 0 {
		return out
	}
	var hi uint32
	for _, b := range s.blocks {
		for _, x := range b {
			hi = max(hi, x)
		}
	}
	shift := max(bits.Len32(hi)-16, 0)
	var hist [1 << 16]int64
	for _, b := range s.blocks {
		for _, x := range b {
			hist[x>>shift]++
		}
	}
	// For each wanted rank find its bucket and the rank inside it.
	type target struct{ bucket, inRank int64 }
	tg := make([]target, len(want))
	need := map[int64][]uint32{}
	for i, r := range want {
		var cum int64
		for bk := range int64(1 << 16) {
			if cum+hist[bk] >= r {
				tg[i] = target{bk, r - cum}
				need[bk] = nil
				break
			}
			cum += hist[bk]
		}
	}
	for _, b := range s.blocks {
		for _, x := range b {
			bk := int64(x >> shift)
			if v, ok := need[bk]; ok {
				need[bk] = append(v, x)
			}
		}
	}
	for _, v := range need {
		slices.Sort(v)
	}
	j := 0
	for i, r := range rs {
		if r <= nneg || r > nneg+nsmall {
			continue
		}
		t := tg[j]
		out[i] = int64(need[t.bucket][t.inRank-1])
		j++
	}
	return out
}

// sorted returns all samples sorted (used by peer definitions, which need
// whole arrays).
func (s *intSamples) sorted() []int64 {
	out := make([]int64, 0, s.acc.n)
	s.each(func(x int64) { out = append(out, x) })
	slices.Sort(out)
	return out
}
