package stats

import (
	"errors"
	"fmt"
	"math"
	"slices"

	"github.com/benchseal/benchseal/internal/digits"
)

// Conditions of this package's errors, one sentinel each. Callers report
// a comparison that meets one as not significant (p = 1) with the error
// as a warning, as benchstat does.
var (
	// ErrSampleSize: a sample has too few values (the U test needs one,
	// a line two).
	ErrSampleSize = errors.New("stats: sample is empty")
	// ErrSamplesEqual: every value of both samples is equal, so no
	// ordering exists to test (for a line: every x is equal, so no slope
	// exists).
	ErrSamplesEqual = errors.New("stats: all samples are equal")
	// ErrNaN: a sample holds NaN, which has no rank.
	ErrNaN = errors.New("stats: NaN in a sample")
	// ErrNotFinite: a point of a line is NaN or infinite.
	ErrNotFinite = errors.New("point not finite")
	// ErrLengthMismatch: a line's x and y values differ in number.
	ErrLengthMismatch = errors.New("x and y lengths differ")
	// ErrTooManyValues: a sample is too large for the exact shift
	// interval (more than ExactLimit values).
	ErrTooManyValues = fmt.Errorf("stats: shift interval needs at most %d values per sample", ExactLimit)
	// ErrConfidence: a confidence level outside (0, 1).
	ErrConfidence = errors.New("confidence out of range")
)

// ExactLimit is the largest sample size (of each sample) for which the
// exact distribution of U is computed, with or without ties; above it the
// normal approximation is used. go-moremath (benchstat) uses the exact
// distribution up to 50 values without ties and 9 with ties, only because
// its algorithm for ties is slow; the dynamic programme here handles ties
// at the same cost.
const ExactLimit = 50

// UTest is the result of a two-sided Mann–Whitney U test of x1 against x2.
type UTest struct {
	N1, N2 int
	// U1 is the U statistic of x1: the number of pairs (a in x1, b in
	// x2) with a > b, plus one half per tie; U2 = N1·N2 − U1.
	U1, U2 float64
	// P is the two-sided p-value.
	P float64
	// Exact says whether P comes from the exact distribution of U (else
	// from the normal approximation with tie and continuity correction).
	Exact bool
	// Ties says whether any value occurs more than once in the pooled
	// sample.
	Ties bool
}

// MannWhitneyU tests the null hypothesis that x1 and x2 come from the same
// distribution against the alternative that one tends to be larger
// (two-sided), with mid-ranks for ties. NaN values are an error.
func MannWhitneyU(x1, x2 []float64) (UTest, error) {
	n1, n2 := len(x1), len(x2)
	res := UTest{N1: n1, N2: n2, P: 1}
	if n1 == 0 || n2 == 0 {
		return res, ErrSampleSize
	}
	type lv struct {
		v     float64
		first bool
	}
	all := make([]lv, 0, n1+n2)
	for _, v := range x1 {
		all = append(all, lv{v, true})
	}
	for _, v := range x2 {
		all = append(all, lv{v, false})
	}
	for _, e := range all {
		if math.IsNaN(e.v) {
			return res, ErrNaN
		}
	}
	slices.SortFunc(all, func(a, b lv) int {
		switch {
		case a.v < b.v:
			return -1
		case a.v > b.v:
			return 1
		}
		return 0
	})
	// Tie groups: sizes and the doubled mid-rank (an integer) of each.
	var groups []int
	r1x2 := 0 // twice the rank sum of x1
	for i := 0; i < len(all); {
		j := i
		k1 := 0
		for ; j < len(all) && all[j].v == all[i].v; j++ {
			if all[j].first {
				k1++
			}
		}
		// ranks i+1 … j; doubled mid-rank i+1+j
		r1x2 += k1 * (i + 1 + j)
		groups = append(groups, j-i)
		if j-i > 1 {
			res.Ties = true
		}
		i = j
	}
	if len(groups) == 1 {
		return res, ErrSamplesEqual
	}
	// U1 = R1 − n1(n1+1)/2, kept doubled as an integer.
	u1x2 := r1x2 - n1*(n1+1)
	res.U1 = float64(float64(u1x2) / 2)
	res.U2 = float64(n1*n2) - res.U1
	if n1 <= ExactLimit && n2 <= ExactLimit {
		res.Exact = true
		res.P = exactP(n1, n2, groups, u1x2)
		return res, nil
	}
	res.P = normalP(n1, n2, groups, res.U1, res.U2)
	return res, nil
}

// exactP is the two-sided p-value min(1, 2·min(Pr[U1 ≤ u], Pr[U1 ≥ u]))
// of the observed doubled U1 = u1x2 under the permutation distribution
// given the tie groups: the convention of scipy's exact method. Both tails
// are summed from the whole distribution. With ties it is not symmetric
// (the mid-ranks are symmetric about (N+1)/2 only when the tie-group
// sizes read the same backwards), so doubling one tail chosen by the
// observed side of the mean would be wrong; without ties the two tails
// mirror each other and this is 2·Pr[U ≤ min(U1, U2)].
func exactP(n1, n2 int, groups []int, u1x2 int) float64 {
	ways := uWays(n1, groups, 2*n1*n2)
	var lo, hi, total float64
	for u, w := range ways {
		total += w
		if u <= u1x2 {
			lo += w
		}
		if u >= u1x2 {
			hi += w
		}
	}
	return min(1, 2*min(lo, hi)/total)
}

// uWays returns, for every doubled U from 0 to limitX2, the number of ways
// to draw the n1 values of the first sample from the pooled tie groups
// (sizes in rank order) with that U: a dynamic programme over the groups
// on the number of values taken and the doubled rank sum.
func uWays(n1 int, groups []int, limitX2 int) []float64 {
	base := n1 * (n1 + 1) // doubled rank sum at U = 0
	limit := base + limitX2
	// ways[k][s]: ways to take k values among the groups so far with
	// doubled rank sum s ≤ limit.
	ways := make([][]float64, n1+1)
	for k := range ways {
		ways[k] = make([]float64, limit+1)
	}
	ways[0][0] = 1
	pos := 0
	var binom []float64
	for _, t := range groups {
		r := 2*pos + t + 1 // doubled mid-rank of the group
		binom = binom[:0]
		for j := 0; j <= t; j++ {
			binom = append(binom, binomial(t, j))
		}
		// k descends and j ≥ 1, so rows k−j are read before they are
		// updated for this group: each group is applied once.
		for k := min(n1, pos+t); k >= 1; k-- {
			row := ways[k]
			// k values among the first pos+t ranks sum (doubled) to at
			// most the k largest of them, and at least the k smallest.
			top, bottom := min(limit, k*(2*(pos+t)-k+1)), k*(k+1)
			for j := 1; j <= t && j <= k; j++ {
				src, shift, cj := ways[k-j], j*r, binom[j]
				for s := top; s >= max(shift, bottom); s-- {
					if v := src[s-shift]; v != 0 {
						row[s] += float64(cj * v)
					}
				}
			}
		}
		pos += t
	}
	if base > limit {
		return nil
	}
	return ways[n1][base:]
}

// binomial is C(n, k) in floating point.
func binomial(n, k int) float64 {
	c := 1.0
	for i := 1; i <= k; i++ {
		c = c * float64(n-k+i) / float64(i)
	}
	return c
}

// normalP is the two-sided p-value of the normal approximation with tie
// and continuity correction: σ² = n1·n2/12·((N+1) − Σ(t³−t)/(N(N−1))),
// z = (max(U1,U2) − n1·n2/2 − ½)/σ, p = 2·(1 − Φ(z)).
func normalP(n1, n2 int, groups []int, u1, u2 float64) float64 {
	n := float64(n1 + n2)
	var tie float64
	for _, t := range groups {
		ft := float64(t)
		tie += float64(ft*ft*ft) - ft
	}
	sigma := math.Sqrt(float64(n1) * float64(n2) / 12 * ((n + 1) - tie/(n*(n-1))))
	mu := float64(float64(n1) * float64(n2) / 2)
	z := (math.Max(u1, u2) - mu - 0.5) / sigma
	return min(1, math.Erfc(z/math.Sqrt2))
}

// MinP is the smallest two-sided p-value the exact U test can give for
// samples of n1 and n2 distinct values: 2 ÷ C(n1+n2, n1) (1 when either
// is empty).
func MinP(n1, n2 int) float64 {
	if n1 <= 0 || n2 <= 0 {
		return 1
	}
	return min(1, 2/binomial(n1+n2, n1))
}

// SamplesNeeded is the smallest n such that two samples of n values each
// can reach p ≤ alpha, and the operator benchstat prints with it (">=";
// ">" with 50 when even 50 cannot).
func SamplesNeeded(alpha float64) (op string, n int) {
	for n = 1; n <= ExactLimit; n++ {
		if MinP(n, n) <= alpha {
			return ">=", n
		}
	}
	return ">", ExactLimit
}

// SampleWarning says that a comparison is not significant and could not
// be with these sample sizes: that even the most extreme ordering of n1+n2
// values (MinP) gives p > alpha. Its text starts as benchstat's ("need >=
// 4 ... to detect a difference at alpha level 0.05"), names the samples
// for what they are here (repeats, on each side: the rule SamplesNeeded
// applies) and gives the smallest p these sizes allow, so that "n=2+2"
// beside it does not read as four samples that suffice. "" when none
// applies. benchstat warns only when both sides are below SamplesNeeded;
// 2+6 repeats (smallest p 0.071) is warned here too.
func SampleWarning(t UTest, alpha float64) string {
	if t.P <= alpha {
		return ""
	}
	if mp := MinP(t.N1, t.N2); mp > alpha {
		op, n := SamplesNeeded(alpha)
		return fmt.Sprintf("need %s %d repeats on each side to detect a difference at alpha level %s (the smallest p %d+%d repeats can give is %s)", op, n, digits.Shortest(alpha), t.N1, t.N2, digits.Places(mp, 3))
	}
	return ""
}

// Holm returns the Holm–Bonferroni adjusted p-values of ps, in the same
// order: with the p-values sorted ascending p₍₁₎ ≤ … ≤ p₍ₘ₎, the adjusted
// p₍ᵢ₎ is max over j ≤ i of min(1, (m − j + 1)·p₍ⱼ₎). Rejecting where the
// adjusted value is ≤ α controls the family-wise error rate at α.
func Holm(ps []float64) []float64 {
	m := len(ps)
	idx := make([]int, m)
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int {
		switch {
		case ps[a] < ps[b]:
			return -1
		case ps[a] > ps[b]:
			return 1
		}
		return 0
	})
	out := make([]float64, m)
	run := 0.0
	for rank, i := range idx {
		v := min(1, float64(m-rank)*ps[i])
		run = max(run, v)
		out[i] = run
	}
	return out
}
