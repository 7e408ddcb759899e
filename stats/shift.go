package stats

import (
	"slices"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/internal/errcond"
)

// Shift is the Hodges–Lehmann estimate of how much x1 is shifted against
// x2, with its distribution-free confidence interval from the exact
// distribution of U (Moses): with c the largest integer such that
// Pr[U ≤ c] ≤ (1 − confidence)/2, the interval runs from the (c+1)-th to
// the (n1·n2 − c)-th smallest pairwise difference x1ᵢ − x2ⱼ. Ties make
// the interval slightly conservative.
type Shift struct {
	// Estimate is the median of the pairwise differences x1ᵢ − x2ⱼ.
	Estimate float64
	// Low and High bound the interval; Bounded is false when the samples
	// are too small for any interval at the requested confidence (then
	// Low and High are the smallest and largest differences and mean
	// nothing).
	Low, High float64
	Bounded   bool
	// Confidence is the exact coverage of the interval (≥ the requested
	// confidence when Bounded).
	Confidence float64
}

// ShiftCI estimates the shift of x1 against x2 with a confidence interval
// at the given level (e.g. 0.95). Samples must be non-empty and at most
// ExactLimit values each.
func ShiftCI(x1, x2 []float64, confidence float64) (Shift, error) {
	n1, n2 := len(x1), len(x2)
	if n1 == 0 || n2 == 0 {
		return Shift{}, ErrSampleSize
	}
	if n1 > ExactLimit || n2 > ExactLimit {
		return Shift{}, ErrTooManyValues
	}
	if !(confidence > 0 && confidence < 1) {
		return Shift{}, errcond.Errorf(ErrConfidence, "stats: confidence %s is not in (0, 1)", digits.Shortest(confidence))
	}
	return shiftInterval(x1, x2, (1-confidence)/2), nil
}

// shiftInterval is ShiftCI with the tail probability given directly: c is
// the largest integer with Pr[U ≤ c] ≤ alphaHalf. EquivalenceRatio passes
// its α here unchanged, because 1 − (1 − 2α) rounds: at α = 0.05 it gives
// 0.04999999999999999, which would drop 3 + 3 values' only interval
// (Pr[U ≤ 0] = 1/20 exactly).
func shiftInterval(x1, x2 []float64, alphaHalf float64) Shift {
	n1, n2 := len(x1), len(x2)
	d := make([]float64, 0, n1*n2)
	for _, a := range x1 {
		for _, b := range x2 {
			d = append(d, a-b)
		}
	}
	slices.Sort(d)
	m := len(d)
	s := Shift{Estimate: d[m/2], Low: d[0], High: d[m-1]}
	if m%2 == 0 {
		s.Estimate = (d[m/2-1] + d[m/2]) / 2
	}
	c, conf := shiftCutoff(n1, n2, alphaHalf)
	s.Confidence = conf
	if c < 0 {
		// Even the widest interval [d₁, d_m] covers less than asked.
		return s
	}
	s.Low, s.High = d[c], d[m-c-1]
	s.Bounded = true
	return s
}

// shiftCutoff returns the c of shiftInterval for samples of n1 and n2
// values, from the distribution of U without ties, and the exact coverage
// of the interval from the (c+1)-th to the (n1·n2 − c)-th difference; c is
// −1 when no interval reaches 1 − 2·alphaHalf, and then the coverage is the
// widest interval's.
func shiftCutoff(n1, n2 int, alphaHalf float64) (c int, confidence float64) {
	m := n1 * n2
	ones := make([]int, n1+n2)
	for i := range ones {
		ones[i] = 1
	}
	ways := uWays(n1, ones, 2*m) // by doubled U; odd indices are 0
	total := binomial(n1+n2, n1)
	c = -1
	var cum float64
	for u := 0; 2*u < len(ways); u++ {
		cum += ways[2*u]
		if cum/total > alphaHalf {
			break
		}
		c = u
	}
	if c < 0 || c+1 > m-c {
		return -1, 1 - 2*ways[0]/total
	}
	var tail float64
	for u := 0; u <= c; u++ {
		tail += ways[2*u]
	}
	return c, 1 - 2*tail/total
}
