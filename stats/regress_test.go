package stats

import (
	"errors"
	"math"
	"testing"
)

func TestTQuantileMatchesClosedFormsAndTables(t *testing.T) {
	tests := []struct {
		p, df, want, tol float64
		source           string
	}{
		// Closed forms: df 1 is the Cauchy distribution, tan(π(p − ½));
		// df 2 has t = (2p − 1) / √(2p(1 − p)).
		{0.975, 1, math.Tan(math.Pi * 0.475), 1e-9, "closed form df 1"},
		{0.9, 1, math.Tan(math.Pi * 0.4), 1e-9, "closed form df 1"},
		{0.975, 2, 0.95 / math.Sqrt(2*0.975*0.025), 1e-9, "closed form df 2"},
		{0.7, 2, 0.4 / math.Sqrt(2*0.7*0.3), 1e-9, "closed form df 2"},
		// Printed tables of Student's t (two-sided 95 % and 99 %, one-sided 95 %).
		{0.975, 3, 3.182446, 1e-5, "table"},
		{0.975, 10, 2.228139, 1e-5, "table"},
		{0.975, 18, 2.100922, 1e-5, "table"},
		{0.975, 30, 2.042272, 1e-5, "table"},
		{0.95, 5, 2.015048, 1e-5, "table"},
		{0.995, 100, 2.625891, 1e-5, "table"},
		{0.5, 7, 0, 0, "symmetry"},
		{0.025, 10, -2.228139, 1e-5, "symmetry"},
	}
	for _, tc := range tests {
		if got := TQuantile(tc.p, tc.df); math.Abs(got-tc.want) > tc.tol {
			t.Errorf("TQuantile(%v, %v) = %.9f, want %.9f (%s)", tc.p, tc.df, got, tc.want, tc.source)
		}
	}
}

func TestLinearFitSlopeAndInterval(t *testing.T) {
	// ys = 2, 4, 5, 4, 5 over 1…5: slope 0.6, intercept 2.2, residual sum
	// of squares 2.4, Σ(x − x̄)² = 10, so SE = √(2.4/3/10) = √0.08; the 95 %
	// interval is 0.6 ± t(0.975; 3)·√0.08.
	f, err := LinearFit([]float64{1, 2, 3, 4, 5}, []float64{2, 4, 5, 4, 5}, 0.95)
	if err != nil {
		t.Fatal(err)
	}
	half := 3.182446305 * math.Sqrt(0.08)
	for _, c := range []struct {
		name      string
		got, want float64
	}{{"slope", f.Slope, 0.6}, {"intercept", f.Intercept, 2.2}, {"se", f.SE, math.Sqrt(0.08)}, {"low", f.Low, 0.6 - half}, {"high", f.High, 0.6 + half}} {
		if math.Abs(c.got-c.want) > 1e-6 {
			t.Errorf("%s = %v, want %v", c.name, c.got, c.want)
		}
	}
	if !f.Bounded || f.N != 5 || f.Confidence != 0.95 {
		t.Errorf("fit = %+v", f)
	}
	// A steady rise is significant: the interval excludes 0.
	xs, ys := make([]float64, 20), make([]float64, 20)
	for i := range xs {
		xs[i] = float64(i)
		ys[i] = 3*float64(i) + float64(i%3) // rise 3 per step, bounded noise
	}
	g, err := LinearFit(xs, ys, 0.95)
	if err != nil || !(g.Low > 0) {
		t.Errorf("steady rise: %+v, %v; want low > 0", g, err)
	}
	// A flat series with noise is not: the interval contains 0.
	for i := range ys {
		ys[i] = float64((i * 7) % 5)
	}
	h, err := LinearFit(xs, ys, 0.95)
	if err != nil || !(h.Low < 0 && h.High > 0) {
		t.Errorf("flat: %+v, %v; want 0 inside the interval", h, err)
	}
}

func TestLinearFitTwoPointsHasNoInterval(t *testing.T) {
	f, err := LinearFit([]float64{0, 2}, []float64{1, 5}, 0.95)
	if err != nil || f.Slope != 2 || f.Bounded {
		t.Errorf("got %+v, %v; want slope 2 without an interval", f, err)
	}
}

func TestLinearFitRejectsBadInput(t *testing.T) {
	for name, c := range map[string]struct {
		in   [2][]float64
		cond error
	}{
		"one point":      {[2][]float64{{1}, {1}}, ErrSampleSize},
		"lengths differ": {[2][]float64{{1, 2}, {1}}, ErrLengthMismatch},
		"constant x":     {[2][]float64{{3, 3, 3}, {1, 2, 3}}, ErrSamplesEqual},
		"nan":            {[2][]float64{{1, 2, math.NaN()}, {1, 2, 3}}, ErrNotFinite},
		"inf":            {[2][]float64{{1, 2, 3}, {1, math.Inf(1), 3}}, ErrNotFinite},
	} {
		if _, err := LinearFit(c.in[0], c.in[1], 0.95); !errors.Is(err, c.cond) {
			t.Errorf("%s: err = %v, want %v", name, err, c.cond)
		}
	}
	if _, err := LinearFit([]float64{1, 2, 3}, []float64{1, 2, 3}, 1); !errors.Is(err, ErrConfidence) {
		t.Errorf("confidence 1: err = %v, want ErrConfidence", err)
	}
}
