package replay

import (
	"math"
	"slices"
)

// pairwiseSum is numpy's pairwise summation of float64 (add.reduce on a
// contiguous array): blocks of up to 128 summed with 8 accumulators,
// larger arrays split in two at a multiple of 8.
func pairwiseSum(a []float64) float64 {
	n := len(a)
	if n < 8 {
		res := 0.0
		for _, x := range a {
			res += x
		}
		return res
	}
	if n <= 128 {
		var r [8]float64
		copy(r[:], a[:8])
		i := 8
		for ; i < n-n%8; i += 8 {
			for j := range 8 {
				r[j] += a[i+j]
			}
		}
		res := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
		for ; i < n; i++ {
			res += a[i]
		}
		return res
	}
	n2 := n / 2
	n2 -= n2 % 8
	return pairwiseSum(a[:n2]) + pairwiseSum(a[n2:])
}

// npMean is numpy's mean: pairwise sum, then one division.
func npMean(a []float64) float64 { return pairwiseSum(a) / float64(len(a)) }

// npStd is numpy's std (and pandas' with ddof 1): two passes, squared
// deviations from the float mean, pairwise sums.
func npStd(a []float64, ddof int) float64 {
	n := len(a)
	if n-ddof <= 0 {
		return math.NaN()
	}
	m := npMean(a)
	d := make([]float64, n)
	for i, x := range a {
		y := x - m
		d[i] = y * y
	}
	return math.Sqrt(pairwiseSum(d) / float64(n-ddof))
}

// npLerp is numpy's _lerp: a + (b−a)·t for t < 0.5, else b − (b−a)·(1−t).
func npLerp(a, b, t float64) float64 {
	d := b - a
	if t >= 0.5 {
		return b - float64(d*(1-t))
	}
	return a + float64(d*t)
}

// npPercentileLinear is numpy.percentile(a, p) with method "linear" on a
// sorted array: q = p/100, h = (n−1)·q, lerp between x[⌊h⌋] and x[⌊h⌋+1].
func npPercentileLinear(sorted []float64, p float64) float64 {
	n := len(sorted)
	q := p / 100
	h := float64(n-1) * q
	lo := math.Floor(h)
	i := int(lo)
	if i >= n-1 {
		return sorted[n-1]
	}
	if i < 0 {
		return sorted[0]
	}
	return npLerp(sorted[i], sorted[i+1], float64(h)-lo)
}

// floatDist summarises float samples (already in ns) with numpy's linear
// percentiles (numpy.percentile given Percentile.Percent), numpy mean and
// std with the given ddof.
func floatDist(xs []float64, ddof int) Dist {
	d := emptyDist()
	d.N = int64(len(xs))
	if len(xs) == 0 {
		return d
	}
	d.Mean = Float(npMean(xs))
	d.Stddev = Float(npStd(xs, ddof))
	s := slices.Clone(xs)
	slices.Sort(s)
	d.Min, d.Max = Float(s[0]), Float(s[len(s)-1])
	for i, p := range Percentiles {
		d.P[i] = Float(npPercentileLinear(s, p.Percent()))
	}
	return d
}

// pandasDist is floatDist as pandas computes Series.quantile(q) (numpy
// percentile at q·100, q the fraction literal) and std (ddof 1).
func pandasDist(xs []float64) Dist {
	d := floatDist(xs, 1)
	if len(xs) == 0 {
		return d
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	for i, p := range Percentiles {
		d.P[i] = Float(npPercentileLinear(s, p.Frac()*100))
	}
	return d
}
