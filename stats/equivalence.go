package stats

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/internal/errcond"
)

// EquivalenceVerdict is the outcome of an equivalence test.
type EquivalenceVerdict string

// The three outcomes of EquivalenceRatio.
const (
	// EquivalenceReproduced: the whole 1 − 2α interval of the ratio lies
	// inside the margin's bounds.
	EquivalenceReproduced EquivalenceVerdict = "REPRODUCED"
	// EquivalenceNotReproduced: the whole interval lies outside them.
	EquivalenceNotReproduced EquivalenceVerdict = "NOT REPRODUCED"
	// EquivalenceInconclusive: the interval straddles a bound, or no
	// interval could be computed.
	EquivalenceInconclusive EquivalenceVerdict = "INCONCLUSIVE"
)

// ErrMargin: an equivalence margin that is not a finite number above 0.
var ErrMargin = errors.New("margin out of range")

// Equivalence is the result of an equivalence test of a reproduction's
// repeats against the original's (EquivalenceRatio).
type Equivalence struct {
	Verdict EquivalenceVerdict
	// Ratio is the Hodges–Lehmann estimate of repro ÷ orig: exp of the
	// median of the pairwise differences log reproᵢ − log origⱼ. Lo and
	// Hi bound its distribution-free interval (ShiftCI's, on the logs,
	// mapped back by exp). Lo, Hi and Confidence are 0 when Reason says
	// no interval exists; Ratio too when the values are not positive.
	Ratio, Lo, Hi float64
	// Confidence is the exact coverage of [Lo, Hi] (≥ 1 − 2α; the exact
	// intervals are discrete, so usually above it).
	Confidence float64
	// RepeatsNeeded is, for INCONCLUSIVE, the repeats per side estimated
	// to decide (see EquivalenceRatio); above ExactLimit it means "more
	// than ExactLimit", the most it searches. 0 for the other verdicts and
	// when the values are not positive.
	RepeatsNeeded int
	// Reason says why there is no interval (too few repeats, values that
	// are not positive) or why RepeatsNeeded passed its cap; "" otherwise.
	Reason string
}

// EquivalenceRatio tests whether repro reproduces orig within margin (0.1
// for 10 %), at level α (e.g. 0.05), on the ratio of their locations.
//
// The test is two one-sided tests (TOST): the ratio is shown to lie within
// the bounds when both "ratio ≤ 1/(1+margin)" and "ratio ≥ 1+margin" are
// rejected at α, which is the same as the 1 − 2α interval lying inside
// [1/(1+margin), 1+margin]. The bounds are symmetric on the log scale (a
// margin of 10 % accepts 0.909 to 1.1), so swapping the two samples inverts
// the ratio and its interval and keeps the verdict. The interval is the
// Hodges–Lehmann shift of the logs with the exact interval of ShiftCI, so
// no distribution is assumed; ties make it slightly conservative.
// REPRODUCED when the interval lies inside the closed bounds, NOT
// REPRODUCED when it lies wholly above or below them, INCONCLUSIVE
// otherwise. Absence of a significant difference never counts as
// reproduced.
//
// RepeatsNeeded, for INCONCLUSIVE, is the smallest n per side (more than
// either side has when both have equally many, else at least the larger
// side, and at most ExactLimit) at which the same test would decide if the
// estimated log ratio stayed and both sides spread as the observed ones
// do: the pooled residuals of each side's logs about its median, read at
// the quantiles (i − ½)/n, i = 1…n (Hazen, linear between order
// statistics), stand in for each sample. It is an estimate, not a
// guarantee. With no observed spread (one value per side, or equal values)
// it is the smallest n that gives any interval.
//
// Samples must be non-empty, at most ExactLimit values each, and free of
// NaN and infinities, and their ratios within float64's range (errors); a
// value ≤ 0 gives INCONCLUSIVE with the
// Reason, because no ratio exists.
func EquivalenceRatio(orig, repro []float64, margin, alpha float64) (Equivalence, error) {
	if err := checkEquivalenceInput(orig, repro, margin, alpha); err != nil {
		return Equivalence{}, err
	}
	res := Equivalence{Verdict: EquivalenceInconclusive}
	if why := nonPositive("original", orig); why != "" {
		res.Reason = why
		return res, nil
	}
	if why := nonPositive("reproduction", repro); why != "" {
		res.Reason = why
		return res, nil
	}
	lo, lr := logs(orig), logs(repro)
	bound := math.Log1p(margin)
	sh := shiftInterval(lr, lo, alpha)
	if err := checkRatioRange(sh); err != nil {
		return Equivalence{}, err
	}
	res.Ratio = math.Exp(sh.Estimate)
	if !sh.Bounded {
		res.Reason = fmt.Sprintf("%d + %d repeats cannot give a %s %% interval (the widest covers %s %%)",
			len(orig), len(repro), digits.Shortest(100*(1-2*alpha)), digits.Sig(100*sh.Confidence, 3))
	} else {
		res.Lo, res.Hi, res.Confidence = math.Exp(sh.Low), math.Exp(sh.High), sh.Confidence
		if v := equivalenceDecision(sh.Low, sh.High, bound); v != EquivalenceInconclusive {
			res.Verdict = v
			return res, nil
		}
	}
	n, ok := repeatsToDecide(lo, lr, sh.Estimate, bound, alpha)
	res.RepeatsNeeded = n
	if !ok {
		msg := fmt.Sprintf("even %d repeats per side would not decide at the observed spread (the estimate %s lies at a bound)", ExactLimit, digits.Sig(res.Ratio, 4))
		res.Reason = joinReason(res.Reason, msg)
	}
	return res, nil
}

// checkEquivalenceInput returns the error for samples or settings
// EquivalenceRatio cannot test: empty or too large samples, NaN or
// infinite values, a margin or α out of range.
func checkEquivalenceInput(orig, repro []float64, margin, alpha float64) error {
	switch {
	case len(orig) == 0 || len(repro) == 0:
		return errcond.Errorf(ErrSampleSize, "stats: equivalence needs at least one value per side, have %d and %d", len(orig), len(repro))
	case len(orig) > ExactLimit || len(repro) > ExactLimit:
		return errcond.Errorf(ErrTooManyValues, "stats: equivalence needs at most %d values per side, have %d and %d", ExactLimit, len(orig), len(repro))
	case !(margin > 0) || math.IsInf(margin, 0):
		return errcond.Errorf(ErrMargin, "stats: margin %s is not a finite number above 0", digits.Shortest(margin))
	case !(alpha > 0 && alpha < 0.5):
		return errcond.Errorf(ErrConfidence, "stats: alpha %s is not in (0, 0.5)", digits.Shortest(alpha))
	}
	for _, sd := range []struct {
		name string
		xs   []float64
	}{{"original", orig}, {"reproduction", repro}} {
		side := sd.name
		for i, v := range sd.xs {
			if math.IsNaN(v) {
				return errcond.Errorf(ErrNaN, "stats: %s value %d is NaN", side, i+1)
			}
			if math.IsInf(v, 0) {
				return errcond.Errorf(ErrNotFinite, "stats: %s value %d is %s", side, i+1, digits.Shortest(v))
			}
		}
	}
	return nil
}

// maxLogRatio is log(math.MaxFloat64): a log ratio beyond it in either
// direction has no finite ratio, or (below −709.78) only a subnormal one;
// one limit for both keeps swapped samples symmetric.
const maxLogRatio = 709.782712893384

// checkRatioRange refuses log ratios whose exp is outside float64's normal
// range (positive values more than e^709 apart), so that no ratio or bound
// prints as +Inf or 0.
func checkRatioRange(sh Shift) error {
	for _, v := range []float64{sh.Estimate, sh.Low, sh.High} {
		if math.Abs(v) > maxLogRatio {
			return errcond.Errorf(ErrNotFinite, "stats: the ratio of the reproduction to the original, e^%s, is outside float64's range", digits.Sig(v, 4))
		}
	}
	return nil
}

// nonPositive names the first value of xs that is not above 0, or "".
func nonPositive(side string, xs []float64) string {
	for i, v := range xs {
		if !(v > 0) {
			return fmt.Sprintf("%s value %d is %s: a ratio needs values above 0", side, i+1, digits.Shortest(v))
		}
	}
	return ""
}

func logs(xs []float64) []float64 {
	out := make([]float64, len(xs))
	for i, v := range xs {
		out[i] = math.Log(v)
	}
	return out
}

// RatioVerdict judges a ratio interval [lo, hi] (both above 0) against
// margin as EquivalenceRatio does: inside [1/(1+margin), 1+margin] is
// reproduced, wholly outside not reproduced, else inconclusive. A
// reproduction attestation's stated intervals are judged with it, so
// that the level and reproduce apply one rule.
func RatioVerdict(lo, hi, margin float64) EquivalenceVerdict {
	if !(lo > 0 && hi >= lo) || !(margin > 0) {
		return EquivalenceInconclusive
	}
	return equivalenceDecision(math.Log(lo), math.Log(hi), math.Log1p(margin))
}

// equivalenceDecision judges the log-ratio interval [low, high] against
// the bounds ±bound: inside the closed bounds, wholly outside them, or
// neither.
func equivalenceDecision(low, high, bound float64) EquivalenceVerdict {
	switch {
	case low >= -bound && high <= bound:
		return EquivalenceReproduced
	case high < -bound || low > bound:
		return EquivalenceNotReproduced
	}
	return EquivalenceInconclusive
}

// repeatsToDecide is RepeatsNeeded's search (see EquivalenceRatio): the
// smallest n at which the model samples' interval decides, and false with
// ExactLimit+1 when none up to ExactLimit does. The model samples differ
// by the estimate plus qᵢ − qⱼ, a set symmetric about the estimate, so
// the interval is the estimate ± the (n² − c)-th smallest qᵢ − qⱼ.
func repeatsToDecide(lo, lr []float64, estimate, bound, alpha float64) (int, bool) {
	resid := append(residuals(lo), residuals(lr)...)
	slices.Sort(resid)
	start := max(len(lo), len(lr))
	if len(lo) == len(lr) {
		start++
	}
	for n := max(start, 2); n <= ExactLimit; n++ {
		c := equalCutoffs.get(n, alpha)
		if c < 0 {
			continue
		}
		q := hazenQuantiles(resid, n)
		d := make([]float64, 0, n*n)
		for _, a := range q {
			for _, b := range q {
				d = append(d, a-b)
			}
		}
		slices.Sort(d)
		w := d[n*n-c-1]
		if equivalenceDecision(estimate-w, estimate+w, bound) != EquivalenceInconclusive {
			return n, true
		}
	}
	return ExactLimit + 1, false
}

// residuals returns xs minus their median.
func residuals(xs []float64) []float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = float64((s[n/2-1] + s[n/2]) / 2)
	}
	for i := range s {
		s[i] -= med
	}
	return s
}

// hazenQuantiles reads the sorted values at the probabilities (i − ½)/n,
// i = 1…n: position p·k − ½ among k values (0-based), linear between
// neighbours, clamped to the ends. With n = k it returns the values.
func hazenQuantiles(sorted []float64, n int) []float64 {
	k := len(sorted)
	out := make([]float64, n)
	for i := range out {
		pos := float64((float64(i)+0.5)/float64(n)*float64(k)) - 0.5
		pos = min(max(pos, 0), float64(k-1))
		j := int(pos)
		if j >= k-1 {
			out[i] = sorted[k-1]
			continue
		}
		f := pos - float64(j)
		out[i] = sorted[j] + float64(f*(sorted[j+1]-sorted[j]))
	}
	return out
}

func joinReason(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// equalCutoffs keeps shiftCutoff(n, n, α) for n ≤ ExactLimit at the last α
// asked: repeatsToDecide walks n up to ExactLimit for every INCONCLUSIVE
// claim, and the cutoff for n = 50 takes milliseconds. It holds one α at a
// time, so it stays ExactLimit entries however it is called.
var equalCutoffs cutoffCache

type cutoffCache struct {
	mu    sync.Mutex
	alpha float64
	c     [ExactLimit + 1]int
	have  [ExactLimit + 1]bool
}

func (cc *cutoffCache) get(n int, alpha float64) int {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.alpha != alpha {
		cc.alpha, cc.have = alpha, [ExactLimit + 1]bool{}
	}
	if !cc.have[n] {
		cc.c[n], _ = shiftCutoff(n, n, alpha)
		cc.have[n] = true
	}
	return cc.c[n]
}

// ReproductionRepeats is how many repeats a reproduction needs when the
// original's are fixed (ReproductionRepeatsNeeded).
type ReproductionRepeats struct {
	// Needed is the smallest reproduction repeat count, above the
	// reproduction's and at most ExactLimit, at which the test would
	// decide; ExactLimit+1 when none up to ExactLimit would.
	Needed int
	// Interval is false when the original's repeats give no 1 − 2α
	// interval with any reproduction repeat count up to ExactLimit: only
	// more original repeats can decide.
	Interval bool
}

// ReproductionRepeatsNeeded is EquivalenceRatio's RepeatsNeeded for a
// reviewer who cannot add repeats to the original: the original keeps
// its len(orig) values and only the reproduction's count m grows, from
// len(repro)+1. The model is EquivalenceRatio's (the estimated log ratio
// stays; both sides spread as the pooled residuals of their logs about
// their medians, read at Hazen quantiles), with the exact interval of
// len(orig) and m values. It is an estimate, not a guarantee.
// EquivalenceRatio's own results are not changed by it. The samples must
// be ones EquivalenceRatio accepts; a value ≤ 0 gives the zero value.
func ReproductionRepeatsNeeded(orig, repro []float64, margin, alpha float64) (ReproductionRepeats, error) {
	if err := checkEquivalenceInput(orig, repro, margin, alpha); err != nil {
		return ReproductionRepeats{}, err
	}
	if nonPositive("original", orig) != "" || nonPositive("reproduction", repro) != "" {
		return ReproductionRepeats{}, nil
	}
	lo, lr := logs(orig), logs(repro)
	estimate := shiftInterval(lr, lo, alpha).Estimate
	bound := math.Log1p(margin)
	resid := append(residuals(lo), residuals(lr)...)
	slices.Sort(resid)
	no := len(lo)
	qo := hazenQuantiles(resid, no)
	out := ReproductionRepeats{Needed: ExactLimit + 1}
	for m := len(lr) + 1; m <= ExactLimit; m++ {
		c := mixedCutoffs.get(no, m, alpha)
		if c < 0 {
			continue
		}
		out.Interval = true
		qr := hazenQuantiles(resid, m)
		d := make([]float64, 0, no*m)
		for _, a := range qr {
			for _, b := range qo {
				d = append(d, estimate+a-b)
			}
		}
		slices.Sort(d)
		if equivalenceDecision(d[c], d[len(d)-c-1], bound) != EquivalenceInconclusive {
			out.Needed = m
			return out, nil
		}
	}
	return out, nil
}

// mixedCutoffs keeps shiftCutoff(n1, n2, α) for the pairs
// ReproductionRepeatsNeeded asks, at the last α asked: every INCONCLUSIVE
// claim of a report walks the same n2 with the same n1.
var mixedCutoffs pairCutoffCache

type pairCutoffCache struct {
	mu    sync.Mutex
	alpha float64
	c     map[[2]int]int
}

func (cc *pairCutoffCache) get(n1, n2 int, alpha float64) int {
	cc.mu.Lock()
	defer cc.mu.Unlock()
	if cc.c == nil || cc.alpha != alpha {
		cc.alpha, cc.c = alpha, map[[2]int]int{}
	}
	k := [2]int{n1, n2}
	c, ok := cc.c[k]
	if !ok {
		c, _ = shiftCutoff(n1, n2, alpha)
		cc.c[k] = c
	}
	return c
}
