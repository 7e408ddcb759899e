package stats

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"
)

// The reference values below were computed once by
// testdata/utest_vectors.py (run with Debian's /usr/bin/python3 and
// python3-scipy 1.10.1): scipy.stats.mannwhitneyu(x, y,
// alternative="two-sided", method="exact"|"asymptotic",
// use_continuity=True) for the cases without ties and the large samples,
// and a brute-force enumeration of every split of the pooled mid-ranks
// for the small samples with ties. They are written here, not recomputed.
func TestMannWhitneyUMatchesScipy(t *testing.T) {
	seq := func(from, n int, add float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = float64(from+i) + add
		}
		return out
	}
	mod := func(n, m int, add float64) []float64 {
		out := make([]float64, n)
		for i := range out {
			out[i] = float64(i%m) + add
		}
		return out
	}
	tests := []struct {
		name   string
		x, y   []float64
		u1, p  float64
		exact  bool
		ties   bool
		source string
	}{
		{"3v3 separated", []float64{1, 2, 3}, []float64{4, 5, 6}, 0, 0.1, true, false, "scipy exact"},
		{"4v4 separated", []float64{1, 2, 3, 4}, []float64{5, 6, 7, 8}, 0, 0.02857142857142857, true, false, "scipy exact"},
		{"5v5 separated", []float64{10.5, 11.2, 9.8, 10.9, 11.5}, []float64{12.1, 11.9, 12.8, 13.0, 11.7}, 0, 0.007936507936507936, true, false, "scipy exact"},
		{"6v5 overlapping", []float64{3, 1, 4, 1.5, 9, 2.6}, []float64{5, 3.5, 8, 9.7, 9.3}, 4, 0.05194805194805195, true, false, "scipy exact"},
		{"4v4 interleaved", []float64{1, 3, 5, 7}, []float64{2, 4, 6, 8}, 6, 0.6857142857142857, true, false, "scipy exact"},
		{"60v60 shifted", seq(1, 60, 0), seq(1, 60, 10.5), 1225, 0.0025668879435241754, false, false, "scipy asymptotic"},
		{"55v60 many ties", mod(55, 7, 0), mod(60, 5, 1), 1620, 0.8670347714230437, false, true, "scipy asymptotic"},
		{"4v4 ties", []float64{1, 2, 2, 3}, []float64{2, 3, 4, 4}, 2.5, 0.2, true, true, "enumeration"},
		{"3v3 ties within", []float64{5, 5, 5}, []float64{6, 6, 7}, 0, 0.1, true, true, "enumeration"},
		{"5v6 ties", []float64{1, 1, 2, 2, 3}, []float64{3, 3, 4, 4, 5, 5}, 1, 0.012987012987012988, true, true, "enumeration"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := MannWhitneyU(tc.x, tc.y)
			if err != nil {
				t.Fatal(err)
			}
			if got.U1 != tc.u1 {
				t.Errorf("U1 = %v, want %v (%s)", got.U1, tc.u1, tc.source)
			}
			if math.Abs(got.P-tc.p) > 1e-12*math.Max(1, tc.p) {
				t.Errorf("p = %.17g, want %.17g (%s)", got.P, tc.p, tc.source)
			}
			if got.Exact != tc.exact || got.Ties != tc.ties {
				t.Errorf("exact %v ties %v, want %v %v", got.Exact, got.Ties, tc.exact, tc.ties)
			}
			// Swapping the samples swaps U and keeps p.
			sw, _ := MannWhitneyU(tc.y, tc.x)
			if sw.U1 != got.U2 || math.Abs(sw.P-got.P) > 1e-15 {
				t.Errorf("swapped: U1 %v p %v, want %v %v", sw.U1, sw.P, got.U2, got.P)
			}
		})
	}
}

func TestMannWhitneyUDegenerateSamplesFail(t *testing.T) {
	if _, err := MannWhitneyU(nil, []float64{1}); !errors.Is(err, ErrSampleSize) {
		t.Errorf("empty sample: %v", err)
	}
	if r, err := MannWhitneyU([]float64{2, 2}, []float64{2, 2, 2}); !errors.Is(err, ErrSamplesEqual) || r.P != 1 {
		t.Errorf("all equal: %v p=%v", err, r.P)
	}
	if _, err := MannWhitneyU([]float64{math.NaN()}, []float64{1}); !errors.Is(err, ErrNaN) || err.Error() != "stats: NaN in a sample" {
		t.Errorf("NaN: %v", err)
	}
}

// benchstat's table uTestMinP (golang.org/x/perf/benchmath/anone.go) and
// its warning text for n = 3 at α = 0.05.
func TestMinPAndSampleWarningMatchBenchstat(t *testing.T) {
	want := map[int]float64{1: 1, 2: 0.3333333333333333, 3: 0.1, 4: 0.02857142857142857, 5: 0.007936507936507936, 6: 0.0021645021645021645}
	for n, p := range want {
		if got := MinP(n, n); math.Abs(got-p) > 1e-15 {
			t.Errorf("MinP(%d) = %v, want %v", n, got, p)
		}
	}
	r, _ := MannWhitneyU([]float64{1, 2, 3}, []float64{4, 5, 6})
	if w := SampleWarning(r, 0.05); w != "need >= 4 repeats on each side to detect a difference at alpha level 0.05 (the smallest p 3+3 repeats can give is 0.100)" {
		t.Errorf("warning %q", w)
	}
	// 2+6 repeats cannot reach 0.05 either (2/C(8,2) = 0.071), though one
	// side has more than 4: warned (benchstat, which asks both sides to be
	// short, does not).
	r, _ = MannWhitneyU([]float64{1, 2}, []float64{3, 4, 5, 6, 7, 8})
	if w := SampleWarning(r, 0.05); w != "need >= 4 repeats on each side to detect a difference at alpha level 0.05 (the smallest p 2+6 repeats can give is 0.071)" {
		t.Errorf("2+6: warning %q", w)
	}
	// 3+5 can (2/C(8,3) = 0.036): no warning.
	r, _ = MannWhitneyU([]float64{1, 3, 5}, []float64{2, 4, 6, 7, 8})
	if w := SampleWarning(r, 0.05); r.P <= 0.05 || w != "" {
		t.Errorf("3+5 (p %v): warning %q", r.P, w)
	}
	r, _ = MannWhitneyU([]float64{1, 2, 3, 4}, []float64{5, 6, 7, 8})
	if w := SampleWarning(r, 0.05); w != "" {
		t.Errorf("significant comparison warned %q", w)
	}
}

// Values computed by hand: m = 4, sorted p = 0.01, 0.02, 0.03, 0.5;
// 4·0.01 = 0.04, 3·0.02 = 0.06, 2·0.03 = 0.06, 1·0.5 = 0.5; running max.
func TestHolm(t *testing.T) {
	got := Holm([]float64{0.03, 0.5, 0.01, 0.02})
	want := []float64{0.06, 0.5, 0.04, 0.06}
	for i := range want {
		if math.Abs(got[i]-want[i]) > 1e-15 {
			t.Errorf("Holm[%d] = %v, want %v", i, got[i], want[i])
		}
	}
	if got := Holm([]float64{0.4, 0.9}); got[0] != 0.8 || got[1] != 0.9 {
		t.Errorf("Holm = %v, want [0.8 0.9]", got)
	}
	if got := Holm([]float64{0.6, 0.7}); got[0] != 1 || got[1] != 1 {
		t.Errorf("Holm capped = %v", got)
	}
}

func BenchmarkMannWhitneyUExact50(b *testing.B) {
	x, y := make([]float64, 50), make([]float64, 50)
	for i := range x {
		x[i], y[i] = float64(i%17), float64(i%13)+0.5
	}
	for b.Loop() {
		MannWhitneyU(x, y)
	}
}

// Reference values from the enumeration in testdata/utest_vectors.py
// ("shift" lines).
func TestShiftCIMatchesEnumeration(t *testing.T) {
	tests := []struct {
		x, y                []float64
		est, lo, hi, confid float64
	}{
		{[]float64{1, 2, 3, 4, 5}, []float64{6, 7, 8, 9, 10}, -5, -8, -2, 0.9682539682539683},
		{[]float64{10.2, 9.9, 10.8, 10.4, 10.1, 10.6}, []float64{9.1, 9.6, 9.3, 9.8, 9.0, 9.4, 9.7}, 0.9000000000000004, 0.5, 1.4000000000000004, 0.965034965034965},
	}
	for _, tc := range tests {
		s, err := ShiftCI(tc.x, tc.y, 0.95)
		if err != nil {
			t.Fatal(err)
		}
		if !s.Bounded || math.Abs(s.Estimate-tc.est) > 1e-12 || math.Abs(s.Low-tc.lo) > 1e-12 || math.Abs(s.High-tc.hi) > 1e-12 || math.Abs(s.Confidence-tc.confid) > 1e-12 {
			t.Errorf("ShiftCI(%v, %v) = %+v, want est %v [%v, %v] conf %v", tc.x, tc.y, s, tc.est, tc.lo, tc.hi, tc.confid)
		}
	}
	// 3 against 3 cannot reach 95 %: the widest interval covers 90 %.
	s, err := ShiftCI([]float64{1, 2, 3}, []float64{4, 5, 6}, 0.95)
	if err != nil || s.Bounded || math.Abs(s.Confidence-0.9) > 1e-12 {
		t.Errorf("3v3: %+v %v", s, err)
	}
}

// bruteP is the exact two-sided p-value by enumeration, independent of
// the dynamic programme: every split of the pooled sample into n1 and n2
// values, U1 from the doubled mid-ranks, p = min(1, 2·min(share of splits
// with U1 ≤ observed, share with U1 ≥ observed)).
func bruteP(x1, x2 []float64) float64 {
	pooled := append(append([]float64{}, x1...), x2...)
	n, n1 := len(pooled), len(x1)
	rank2 := make([]int, n) // doubled mid-rank: 1 + #smaller·2 + #equal
	for i, v := range pooled {
		less, eq := 0, 0
		for _, w := range pooled {
			switch {
			case w < v:
				less++
			case w == v:
				eq++
			}
		}
		rank2[i] = 2*less + eq + 1
	}
	u := func(idx []int) int {
		s := 0
		for _, i := range idx {
			s += rank2[i]
		}
		return s - n1*(n1+1)
	}
	first := make([]int, n1)
	for i := range first {
		first[i] = i
	}
	obs := u(first)
	var lo, hi, total int
	var rec func(start int, idx []int)
	rec = func(start int, idx []int) {
		if len(idx) == n1 {
			total++
			if s := u(idx); s <= obs {
				lo++
			}
			if s := u(idx); s >= obs {
				hi++
			}
			return
		}
		for i := start; i <= n-(n1-len(idx)); i++ {
			rec(i+1, append(idx, i))
		}
	}
	rec(0, nil)
	return math.Min(1, 2*float64(min(lo, hi))/float64(total))
}

// Asymmetric tie groups (group sizes that do not read the same
// backwards), most with the larger sample first: the U distribution is
// not symmetric, so doubling the tail on the observed side of the mean
// is wrong (it gave p = 0 for [10 10] against [5 5 5]). Each expected p is
// written out and also recomputed by enumeration here.
func TestMannWhitneyUExactWithAsymmetricTiesMatchesEnumeration(t *testing.T) {
	tests := []struct {
		x, y []float64
		p    float64 // 2·min(lower, upper tail)
	}{
		// Mid-ranks 2 (three 5s) and 4.5 (two 10s); 10 splits give
		// U1 = 1, 3.5, 6 in 3, 6, 1 ways; observed 6 is the top: 2·1/10
		// (the old code said 0: it took the lower tail at U2 = 0, which
		// U1 cannot reach).
		{[]float64{10, 10}, []float64{5, 5, 5}, 0.2},
		{[]float64{5, 5, 5}, []float64{10, 10}, 0.2},
		// 35 splits; the observed U1 = 12 needs all three 10s: 2·1/35.
		{[]float64{10, 10, 10}, []float64{5, 5, 5, 5}, 2.0 / 35},
		// The rest from testdata/utest_vectors.py (scipy's rankdata and
		// itertools.combinations).
		{[]float64{1, 1, 1, 1, 3, 1}, []float64{2, 3}, 0.21428571428571427},
		{[]float64{4, 3, 3, 4, 3, 4}, []float64{2, 2}, 0.07142857142857142},
		{[]float64{1, 1, 2, 2, 2, 3}, []float64{1, 3, 3}, 0.6666666666666666},
		{[]float64{7, 7, 7, 7, 8}, []float64{8, 9, 9}, 0.07142857142857142},
	}
	for _, tc := range tests {
		got, err := MannWhitneyU(tc.x, tc.y)
		if err != nil {
			t.Fatal(err)
		}
		want := bruteP(tc.x, tc.y)
		if math.Abs(want-tc.p) > 1e-12 {
			t.Fatalf("enumeration of %v vs %v = %v, written %v", tc.x, tc.y, want, tc.p)
		}
		if !got.Exact || math.Abs(got.P-want) > 1e-12 {
			t.Errorf("%v vs %v: p = %.17g (exact %v), enumeration %.17g", tc.x, tc.y, got.P, got.Exact, want)
		}
	}
}

// Small tied samples drawn from a fixed-seed generator (values 1..4, 1–6
// a side) agree with the enumeration in every case.
func TestMannWhitneyUExactMatchesEnumerationOnRandomTies(t *testing.T) {
	rng := rand.New(rand.NewPCG(8, 400))
	for i := range 400 {
		x := make([]float64, 1+rng.IntN(6))
		y := make([]float64, 1+rng.IntN(6))
		for j := range x {
			x[j] = float64(1 + rng.IntN(4))
		}
		for j := range y {
			y[j] = float64(1 + rng.IntN(4))
		}
		got, err := MannWhitneyU(x, y)
		if errors.Is(err, ErrSamplesEqual) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		if want := bruteP(x, y); math.Abs(got.P-want) > 1e-12 {
			t.Errorf("case %d: %v vs %v: p = %.17g, enumeration %.17g", i, x, y, got.P, want)
		}
	}
}

// The dynamic programme's distribution of U, bounded row by row by the
// reachable rank sums, still holds every one of the C(N, n1) splits, for
// random tie groups up to 50 values a side.
func TestUWaysHoldsEverySplit(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for i := range 100 {
		n1 := 1 + rng.IntN(ExactLimit)
		n := n1 + 1 + rng.IntN(ExactLimit)
		var groups []int
		for s := 0; s < n; {
			g := min(1+rng.IntN(8), n-s)
			groups = append(groups, g)
			s += g
		}
		var total float64
		for _, w := range uWays(n1, groups, 2*n1*(n-n1)) {
			total += w
		}
		if b := binomial(n, n1); math.Abs(total-b) > 1e-9*b {
			t.Fatalf("case %d: n1 %d, groups %v: %v splits, want %v", i, n1, groups, total, b)
		}
	}
}
