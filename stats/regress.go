package stats

import (
	"iter"
	"math"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/internal/errcond"
)

// Fit is the ordinary least-squares line y = Intercept + Slope·x through
// n points, with a two-sided confidence interval of the slope from
// Student's t distribution with n − 2 degrees of freedom:
// Slope ± t(1 − (1 − Confidence)/2; n − 2) · SE, where
// SE = √(Σ residual² ÷ (n − 2) ÷ Σ(x − x̄)²). The interval assumes
// independent, normally distributed residuals of equal variance.
type Fit struct {
	N                int
	Slope, Intercept float64
	// SE is the standard error of the slope (0 when the points lie on
	// the line); Low and High bound the interval. Bounded is false with
	// fewer than three points, which leave no degree of freedom for an
	// interval (then SE, Low and High are 0 and mean nothing).
	SE, Low, High float64
	Bounded       bool
	Confidence    float64
}

// LinearFit fits ys over xs by least squares and bounds the slope at the
// given confidence (e.g. 0.95). It needs at least two points, xs that are
// not all equal, and finite values.
func LinearFit(xs, ys []float64, confidence float64) (Fit, error) {
	if len(xs) != len(ys) {
		return Fit{}, errcond.Errorf(ErrLengthMismatch, "stats: %d x values but %d y values", len(xs), len(ys))
	}
	return LinearFitSeq(func(yield func(x, y float64) bool) {
		for i := range xs {
			if !yield(xs[i], ys[i]) {
				return
			}
		}
	}, len(xs), confidence)
}

// LinearFitSeq is LinearFit of the n points (x, y) that pts yields, in
// the same order each time it is ranged over (three times: the means,
// the sums of squares, the residuals), so that points kept outside memory
// (replay's spilled overload data) fit to the same bits as the slices
// LinearFit is given.
func LinearFitSeq(pts iter.Seq2[float64, float64], n int, confidence float64) (Fit, error) {
	switch {
	case n < 2:
		return Fit{}, errcond.Errorf(ErrSampleSize, "stats: a line needs at least 2 points, have %d", n)
	case !(confidence > 0 && confidence < 1):
		return Fit{}, errcond.Errorf(ErrConfidence, "stats: confidence %s is not in (0, 1)", digits.Shortest(confidence))
	}
	var mx, my float64
	i := 0
	for x, y := range pts {
		if math.IsNaN(x) || math.IsInf(x, 0) || math.IsNaN(y) || math.IsInf(y, 0) {
			return Fit{}, errcond.Errorf(ErrNotFinite, "stats: point %d is not finite", i)
		}
		mx += x
		my += y
		i++
	}
	mx, my = mx/float64(n), my/float64(n)
	var sxx, sxy float64
	for x, y := range pts {
		dx := x - mx
		sxx += float64(dx * dx)
		sxy += float64(dx * (y - my))
	}
	if sxx == 0 {
		return Fit{}, errcond.Errorf(ErrSamplesEqual, "stats: all x values are equal, so no slope exists")
	}
	f := Fit{N: n, Slope: sxy / sxx, Confidence: confidence}
	f.Intercept = my - float64(f.Slope*mx)
	if n < 3 {
		return f, nil
	}
	var sse float64
	for x, y := range pts {
		r := y - f.Intercept - float64(f.Slope*x)
		sse += float64(r * r)
	}
	df := float64(n - 2)
	f.SE = math.Sqrt(sse / df / sxx)
	t := TQuantile(1-float64((1-confidence)/2), df)
	f.Low, f.High, f.Bounded = f.Slope-float64(t*f.SE), f.Slope+float64(t*f.SE), true
	return f, nil
}

// TQuantile returns the p-quantile of Student's t distribution with df > 0
// degrees of freedom (0 < p < 1), by bisection on its distribution
// function to about 1e-12.
func TQuantile(p, df float64) float64 {
	if p == 0.5 {
		return 0
	}
	if p < 0.5 {
		return -TQuantile(1-p, df)
	}
	lo, hi := 0.0, 1.0
	for tCDF(hi, df) < p {
		hi *= 2
		if hi > 1e300 {
			return math.Inf(1)
		}
	}
	for range 200 {
		mid := (lo + hi) / 2
		if tCDF(mid, df) < p {
			lo = mid
		} else {
			hi = mid
		}
		if hi-lo <= 1e-12*hi {
			break
		}
	}
	return (lo + hi) / 2
}

// tCDF is Student's t distribution function at t ≥ 0:
// 1 − I_{df/(df+t²)}(df/2, 1/2) / 2.
func tCDF(t, df float64) float64 {
	return 1 - float64(regIncBeta(df/(df+float64(t*t)), df/2, 0.5)/2)
}

// regIncBeta is the regularised incomplete beta function I_x(a, b), from
// its continued fraction (evaluated by the modified Lentz method), using
// the symmetry I_x(a, b) = 1 − I_{1−x}(b, a) where the fraction converges
// slowly.
func regIncBeta(x, a, b float64) float64 {
	switch {
	case x <= 0:
		return 0
	case x >= 1:
		return 1
	}
	la, _ := math.Lgamma(a + b)
	lb, _ := math.Lgamma(a)
	lc, _ := math.Lgamma(b)
	front := math.Exp(la - lb - lc + float64(a*math.Log(x)) + float64(b*math.Log1p(-x)))
	if x > (a+1)/(a+b+2) {
		return 1 - front*betaFraction(1-x, b, a)/b
	}
	return front * betaFraction(x, a, b) / a
}

func betaFraction(x, a, b float64) float64 {
	const tiny = 1e-300
	c, d := 1.0, 1-(a+b)*x/(a+1)
	if math.Abs(d) < tiny {
		d = tiny
	}
	d = 1 / d
	h := d
	for m := 1; m <= 500; m++ {
		fm := float64(m)
		for _, num := range []float64{
			fm * (b - fm) * x / ((a + 2*fm - 1) * (a + 2*fm)),
			-(a + fm) * (a + b + fm) * x / ((a + 2*fm) * (a + 2*fm + 1)),
		} {
			d = 1 + float64(num*d)
			if math.Abs(d) < tiny {
				d = tiny
			}
			c = 1 + num/c
			if math.Abs(c) < tiny {
				c = tiny
			}
			d = 1 / d
			h *= d * c
		}
		if math.Abs(float64(d*c)-1) < 1e-15 {
			break
		}
	}
	return h
}
