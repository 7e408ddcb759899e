package replay

import (
	"math"
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

// blockSize is the largest block of intSamples; the first is
// firstBlockSize, and each next one twice the one before, so a
// distribution of a few samples (one of many points × repeats) holds a
// few hundred bytes, not a whole block.
const (
	blockSize      = 1 << 16
	firstBlockSize = 1 << 6
)

// intSamples holds int64 samples compactly for exact order statistics:
// values in [0, 2³²) as uint32 in blocks (growing never copies), others
// in side lists. Selection uses a histogram of the top 16 bits, so
// no full sort and no second copy of the data are needed.
type intSamples struct {
	blocks [][]uint32
	neg    []int64 // < 0
	large  []int64 // ≥ 2³²
	acc    sumAcc
	min    int64
	max    int64
	// mayspill, when set, lets s count its samples in a histogram once
	// it holds spillAt of them; sp is then set, and so is *mayspill
	// (twopass.go).
	mayspill *bool
	sp       *intSpill
}

func (s *intSamples) add(x int64) {
	if s.acc.n == 0 || x < s.min {
		s.min = x
	}
	if s.acc.n == 0 || x > s.max {
		s.max = x
	}
	s.acc.add(x)
	if s.sp == nil && s.mayspill != nil && s.acc.n > spillAt {
		s.spillSamples()
		*s.mayspill = true
		s.sp.n-- // x is added below
	}
	if s.sp != nil {
		s.addSpilled(x)
		return
	}
	switch {
	case x < 0:
		s.neg = append(s.neg, x)
	case x >= 1<<32:
		s.large = append(s.large, x)
	default:
		s.room()
		b := &s.blocks[len(s.blocks)-1]
		*b = append(*b, uint32(x))
	}
}

// addDiffs adds c[j]−c[j−1] for every j ≥ 1 (as int64 arithmetic wraps),
// as add would one at a time: the gaps between a request's chunk times,
// taken as they are added, so that no slice of them is built. A fast path
// for the common case (values in [0, 2³²), sums far from overflowing)
// keeps the accumulators in registers and appends straight into the
// current block (once s has spilled, addDiffsSpilled: it counts them in
// their buckets).
func (s *intSamples) addDiffs(c []int64) {
	for len(c) > 1 {
		if s.sp != nil && s.acc.n > 0 {
			if rest := s.addDiffsSpilled(c); len(rest) < len(c) {
				c = rest
				continue
			}
		}
		if x := c[1] - c[0]; s.acc.n == 0 || uint64(x) >= 1<<32 || s.acc.sqHi >= 1<<62-1 || s.sp != nil || (s.mayspill != nil && s.acc.n >= spillAt) {
			s.add(x)
			c = c[1:]
			continue
		}
		s.room()
		blk := s.blocks[len(s.blocks)-1]
		m := min(len(c)-1, cap(blk)-len(blk))
		a := &s.acc
		mn, mx, sum, lo, hi := s.min, s.max, a.s, a.sqLo, a.sqHi
		i := 0
		for ; i < m; i++ {
			x := c[i+1] - c[i]
			// x < 2³² keeps x² in 64 bits; hi < 2⁶²−1 before the add
			// keeps it below 2⁶² after (no spill needed).
			if uint64(x) >= 1<<32 || sum > math.MaxInt64-x || hi >= 1<<62-1 {
				break
			}
			sum += x
			var cy uint64
			lo, cy = bits.Add64(lo, uint64(x*x), 0)
			hi += cy
			mn, mx = min(mn, x), max(mx, x)
			blk = append(blk, uint32(x))
		}
		s.min, s.max, a.s, a.sqLo, a.sqHi = mn, mx, sum, lo, hi
		a.n += int64(i)
		s.blocks[len(s.blocks)-1] = blk
		if i < m {
			s.add(c[i+1] - c[i]) // the value that left the fast path
			i++
		}
		c = c[i:]
	}
}

// room starts a new block when the last one is full: twice the size of
// the one before, up to blockSize.
func (s *intSamples) room() {
	k := len(s.blocks)
	if k > 0 && len(s.blocks[k-1]) < cap(s.blocks[k-1]) {
		return
	}
	size := firstBlockSize
	if k > 0 {
		size = min(2*cap(s.blocks[k-1]), blockSize)
	}
	s.blocks = append(s.blocks, make([]uint32, 0, size))
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

// sortBelow is the number of samples under which ranks sorts a copy of
// them rather than histogram them.
const sortBelow = 1 << 12

// ranks returns the order statistics at the given 1-based ranks (each in
// [1, n]). Values in [0, 2³²) are selected by a two-level radix histogram:
// the top 16 significant bits locate each rank's bucket, the low bits
// inside the bucket give its value exactly. That is two passes over the
// samples, with no full sort and no copy of them.
func (s *intSamples) ranks(rs []int64) []int64 {
	if s.sp != nil {
		return s.spilledRanks(rs)
	}
	return s.heldRanks(rs)
}

// heldRanks is ranks of the samples s holds (it did not spill).
func (s *intSamples) heldRanks(rs []int64) []int64 {
	out := make([]int64, len(rs))
	slices.Sort(s.neg)
	slices.Sort(s.large)
	nneg := int64(len(s.neg))
	nsmall := s.acc.n - nneg - int64(len(s.large))
	var want, at []int64 // ranks within the small values (1-based), and where they go
	for i, r := range rs {
		switch {
		case r <= nneg:
			out[i] = s.neg[r-1]
		case r > nneg+nsmall:
			out[i] = s.large[r-nneg-nsmall-1]
		default:
			want = append(want, r-nneg)
			at = append(at, int64(i))
		}
	}
	if len(want) == 0 {
		return out
	}
	for i, v := range s.smallRanks(want, nsmall) {
		out[at[i]] = v
	}
	return out
}

// smallRanks returns the values of the 1-based ranks want among the
// nsmall samples held in s.blocks: a sort of a small count, else a
// histogram of up to 2^16 buckets over the values' top bits.
func (s *intSamples) smallRanks(want []int64, nsmall int64) []int64 {
	out := make([]int64, len(want))
	if nsmall <= sortBelow {
		// A histogram of 2^16 buckets is more work than a sort.
		small := make([]uint32, 0, nsmall)
		for _, b := range s.blocks {
			small = append(small, b...)
		}
		slices.Sort(small)
		for i, r := range want {
			out[i] = int64(small[r-1])
		}
		return out
	}
	var hi uint32
	if s.max >= 0 && s.max < 1<<32 {
		hi = uint32(s.max)
	} else {
		for _, b := range s.blocks {
			for _, x := range b {
				hi = max(hi, x)
			}
		}
	}
	shift := uint(max(bits.Len32(hi)-16, 0))
	hist := make([]int64, int(hi>>shift)+1)
	for _, b := range s.blocks {
		for _, x := range b {
			hist[x>>shift]++
		}
	}
	// Locate each wanted rank: its bucket and its rank inside the bucket.
	bucket, inRank := make([]uint32, len(want)), make([]int64, len(want))
	for i, r := range want {
		var cum int64
		for bk, c := range hist {
			if cum+c >= r {
				bucket[i], inRank[i] = uint32(bk), r-cum
				break
			}
			cum += c
		}
	}
	if shift == 0 {
		for i := range want {
			out[i] = int64(bucket[i])
		}
		return out
	}
	s.refineRanks(out, hist, shift, bucket, inRank)
	return out
}

// refineRanks is smallRanks' second level, for the buckets that hold a
// wanted rank (bucket[i], at rank inRank[i] inside it), up to 255 buckets
// a pass (slot[bk] is the bucket's index in the pass, plus one): a sparse
// bucket's values are collected and sorted, a dense one's low bits
// histogrammed, whichever takes less memory. It sets out[i].
func (s *intSamples) refineRanks(out, hist []int64, shift uint, bucket []uint32, inRank []int64) {
	slot := make([]uint8, len(hist))
	mask := uint32(1)<<shift - 1
	for lo := 0; lo < len(bucket); lo += 255 {
		part := bucket[lo:min(lo+255, len(bucket))]
		clear(slot)
		var (
			low  [][]int64  // dense buckets: counts of the low bits
			vals [][]uint32 // sparse buckets: the values
		)
		for _, bk := range part {
			if slot[bk] != 0 {
				continue
			}
			if c := hist[bk]; c <= int64(1)<<shift/4 {
				low, vals = append(low, nil), append(vals, make([]uint32, 0, c))
			} else {
				low, vals = append(low, make([]int64, 1<<shift)), append(vals, nil)
			}
			slot[bk] = uint8(len(low))
		}
		for _, b := range s.blocks {
			for _, x := range b {
				if k := slot[x>>shift]; k != 0 {
					if h := low[k-1]; h != nil {
						h[x&mask]++
					} else {
						vals[k-1] = append(vals[k-1], x)
					}
				}
			}
		}
		for _, v := range vals {
			slices.Sort(v)
		}
		for i, bk := range part {
			k, r := slot[bk]-1, inRank[lo+i]
			if low[k] == nil {
				out[lo+i] = int64(vals[k][r-1])
				continue
			}
			var cum int64
			for v, c := range low[k] {
				if cum+c >= r {
					out[lo+i] = int64(bk)<<shift | int64(v)
					break
				}
				cum += c
			}
		}
	}
}

// sorted returns all samples sorted (used by peer definitions, which need
// whole arrays).
func (s *intSamples) sorted() []int64 {
	out := make([]int64, 0, s.acc.n)
	s.each(func(x int64) { out = append(out, x) })
	slices.Sort(out)
	return out
}
