package stats

import (
	"encoding/binary"
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// The expected intervals below were worked out by hand: for 5 + 5 values
// without ties Pr[U ≤ 4] = 12/252 = 0.0476 ≤ 0.05 < Pr[U ≤ 5] = 19/252
// (the counts 1, 1, 2, 3, 5, 7 of U = 0…5 are the partitions of u into at
// most 5 parts of at most 5), so the 90 % interval runs from the 5th to the
// 21st of the 25 sorted ratios and covers 1 − 24/252; for 3 + 3,
// Pr[U ≤ 0] = 1/20 = 0.05 exactly, so the interval is the whole range and
// covers 0.9.
func TestEquivalenceRatioHandVectors(t *testing.T) {
	orig := []float64{100, 102, 98, 101, 99}
	div := func(xs []float64, k float64) []float64 {
		out := make([]float64, len(xs))
		for i, v := range xs {
			out[i] = v / k
		}
		return out
	}
	const conf55 = 1 - 24.0/252
	tests := []struct {
		name          string
		orig, repro   []float64
		margin        float64
		verdict       EquivalenceVerdict
		ratio, lo, hi float64
		conf          float64
		needed        int // -1: some n above the repeats, checked elsewhere
		reason        string
	}{
		{"same location, spread inside", []float64{100, 100, 100, 100, 100}, []float64{97, 99, 100, 102, 105}, 0.1,
			EquivalenceReproduced, 1, 0.97, 1.05, conf55, 0, ""},
		{"3x faster", orig, div(orig, 3), 0.1,
			EquivalenceNotReproduced, 1.0 / 3, 99.0 / 101 / 3, 101.0 / 99 / 3, conf55, 0, ""},
		{"3x slower", orig, div(orig, 1.0/3), 0.1,
			EquivalenceNotReproduced, 3, 99.0 / 101 * 3, 101.0 / 99 * 3, conf55, 0, ""},
		{"interval straddles the upper bound", []float64{90, 95, 100, 105, 110}, []float64{94.5, 99.75, 105, 110.25, 115.5}, 0.1,
			EquivalenceInconclusive, 1.05, 1.05 * 95 / 105, 1.05 * 105 / 95, conf55, -1, ""},
		{"3+3 ties, the whole range", []float64{100, 100, 100}, []float64{100, 100, 100}, 0.1,
			EquivalenceReproduced, 1, 1, 1, 0.9, 0, ""},
		{"one repeat each", []float64{100}, []float64{100}, 0.1,
			EquivalenceInconclusive, 1, 0, 0, 0, 3, "1 + 1 repeats cannot give a 90 % interval"},
		{"two repeats each", []float64{100, 100}, []float64{105, 105}, 0.1,
			EquivalenceInconclusive, 1.05, 0, 0, 0, 3, "2 + 2 repeats cannot give a 90 % interval"},
		{"a zero", []float64{0, 1}, []float64{1, 1}, 0.1,
			EquivalenceInconclusive, 0, 0, 0, 0, 0, "original value 1 is 0: a ratio needs values above 0"},
		{"a negative", []float64{1, 1}, []float64{1, -2}, 0.1,
			EquivalenceInconclusive, 0, 0, 0, 0, 0, "reproduction value 2 is -2"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := EquivalenceRatio(tc.orig, tc.repro, tc.margin, 0.05)
			if err != nil {
				t.Fatal(err)
			}
			if got.Verdict != tc.verdict {
				t.Errorf("verdict %s, want %s (%+v)", got.Verdict, tc.verdict, got)
			}
			for _, f := range []struct {
				name      string
				got, want float64
			}{{"ratio", got.Ratio, tc.ratio}, {"lo", got.Lo, tc.lo}, {"hi", got.Hi, tc.hi}, {"confidence", got.Confidence, tc.conf}} {
				if math.Abs(f.got-f.want) > 1e-12 {
					t.Errorf("%s %.15g, want %.15g", f.name, f.got, f.want)
				}
			}
			switch {
			case tc.needed >= 0 && got.RepeatsNeeded != tc.needed:
				t.Errorf("repeats needed %d, want %d", got.RepeatsNeeded, tc.needed)
			case tc.needed < 0 && got.RepeatsNeeded <= len(tc.orig):
				t.Errorf("repeats needed %d, want more than the %d there are", got.RepeatsNeeded, len(tc.orig))
			}
			if !strings.Contains(got.Reason, tc.reason) || (tc.reason == "") != (got.Reason == "") {
				t.Errorf("reason %q, want %q", got.Reason, tc.reason)
			}
		})
	}
}

// TestEquivalenceRatioMatchesEnumeration checks the interval, its coverage
// and the verdict against a brute-force enumeration of every split of the
// pooled ranks (the null distribution of U without ties) on random small
// samples, with the bounds 1/(1+m) and 1+m applied to the ratios directly.
func TestEquivalenceRatioMatchesEnumeration(t *testing.T) {
	rng := rand.New(rand.NewPCG(28, 1))
	for trial := range 300 {
		n1, n2 := 1+rng.IntN(6), 1+rng.IntN(6)
		orig, repro := make([]float64, n1), make([]float64, n2)
		shift := []float64{1, 1.04, 1.12, 0.5}[trial%4]
		for i := range orig {
			orig[i] = 100 * (1 + 0.05*rng.NormFloat64())
		}
		for i := range repro {
			repro[i] = 100 * shift * (1 + 0.05*rng.NormFloat64())
		}
		const margin, alpha = 0.1, 0.05
		got, err := EquivalenceRatio(orig, repro, margin, alpha)
		if err != nil {
			t.Fatal(err)
		}
		// Every repro/orig ratio, sorted.
		var ratios []float64
		for _, r := range repro {
			for _, o := range orig {
				ratios = append(ratios, r/o)
			}
		}
		slices.Sort(ratios)
		m := len(ratios)
		med := ratios[m/2]
		if m%2 == 0 {
			med = math.Sqrt(ratios[m/2-1] * ratios[m/2])
		}
		counts := enumerateU(n2, n1)
		total := 0
		for _, c := range counts {
			total += c
		}
		c, cum := -1, 0
		for u, k := range counts {
			cum += k
			if float64(cum)/float64(total) > alpha {
				break
			}
			c = u
		}
		if math.Abs(got.Ratio/med-1) > 1e-12 {
			t.Fatalf("%v %v: ratio %v, want %v", orig, repro, got.Ratio, med)
		}
		if c < 0 || c+1 > m-c {
			if got.Verdict != EquivalenceInconclusive || got.Lo != 0 || got.RepeatsNeeded == 0 {
				t.Fatalf("%v %v: no interval exists, got %+v", orig, repro, got)
			}
			continue
		}
		tail := 0
		for u := 0; u <= c; u++ {
			tail += counts[u]
		}
		lo, hi := ratios[c], ratios[m-c-1]
		want := EquivalenceInconclusive
		switch {
		case lo >= 1/(1+margin) && hi <= 1+margin:
			want = EquivalenceReproduced
		case hi < 1/(1+margin) || lo > 1+margin:
			want = EquivalenceNotReproduced
		}
		if math.Abs(got.Lo/lo-1) > 1e-12 || math.Abs(got.Hi/hi-1) > 1e-12 || got.Verdict != want ||
			math.Abs(got.Confidence-(1-2*float64(tail)/float64(total))) > 1e-12 {
			t.Fatalf("%v %v: got %+v, want [%v, %v] %s", orig, repro, got, lo, hi, want)
		}
		if (got.RepeatsNeeded > 0) != (want == EquivalenceInconclusive) {
			t.Fatalf("%v %v: repeats needed %d with %s", orig, repro, got.RepeatsNeeded, got.Verdict)
		}
	}
}

// enumerateU counts, for every U, the ways to pick which n1 of n1+n2
// distinct ranks belong to the first sample.
func enumerateU(n1, n2 int) []int {
	counts := make([]int, n1*n2+1)
	n := n1 + n2
	for mask := 0; mask < 1<<n; mask++ {
		if popcount(mask) != n1 {
			continue
		}
		// U: pairs (first-sample rank > second-sample rank).
		u, below := 0, 0
		for r := range n {
			if mask&(1<<r) != 0 {
				u += below
			} else {
				below++
			}
		}
		counts[u]++
	}
	return counts
}

func popcount(x int) int {
	k := 0
	for ; x != 0; x &= x - 1 {
		k++
	}
	return k
}

// TestRepeatsNeededDecides: samples of RepeatsNeeded values spread as the
// model says (EquivalenceRatio's doc) do decide, and one fewer do not.
func TestRepeatsNeededDecides(t *testing.T) {
	for _, tc := range []struct {
		name        string
		orig, repro []float64
	}{
		{"straddles", []float64{90, 95, 100, 105, 110}, []float64{94.5, 99.75, 105, 110.25, 115.5}},
		{"wide, same location", []float64{80, 100, 125}, []float64{85, 100, 118}},
		{"two each", []float64{100, 120}, []float64{101, 119}},
		{"unequal sides", []float64{100, 104}, []float64{98, 101, 103, 99}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := EquivalenceRatio(tc.orig, tc.repro, 0.1, 0.05)
			if err != nil {
				t.Fatal(err)
			}
			n := got.RepeatsNeeded
			if got.Verdict != EquivalenceInconclusive || n <= max(len(tc.orig), len(tc.repro))-1 || n > ExactLimit {
				t.Fatalf("got %+v", got)
			}
			lo, lr := logs(tc.orig), logs(tc.repro)
			resid := append(residuals(lo), residuals(lr)...)
			slices.Sort(resid)
			est := math.Log(got.Ratio)
			model := func(n int) (o, r []float64) {
				for _, q := range hazenQuantiles(resid, n) {
					o = append(o, math.Exp(q))
					r = append(r, math.Exp(q+est))
				}
				return o, r
			}
			o, r := model(n)
			at, err := EquivalenceRatio(o, r, 0.1, 0.05)
			if err != nil || at.Verdict == EquivalenceInconclusive {
				t.Errorf("at %d repeats the model gives %+v, %v", n, at, err)
			}
			start := max(len(tc.orig), len(tc.repro))
			if len(tc.orig) == len(tc.repro) {
				start++
			}
			if n-1 >= max(start, 2) {
				o, r = model(n - 1)
				if before, _ := EquivalenceRatio(o, r, 0.1, 0.05); before.Verdict != EquivalenceInconclusive {
					t.Errorf("already %d repeats decide: %+v", n-1, before)
				}
			}
		})
	}
}

// TestRepeatsNeededCapsAtTheBound: an estimate exactly at the bound cannot
// be decided by any number of repeats; the answer says so.
func TestRepeatsNeededCapsAtTheBound(t *testing.T) {
	orig := []float64{90, 95, 100, 105, 110}
	repro := make([]float64, len(orig))
	for i, v := range orig {
		repro[i] = v * 1.25
	}
	got, err := EquivalenceRatio(orig, repro, 0.25, 0.05)
	if err != nil {
		t.Fatal(err)
	}
	if got.Verdict != EquivalenceInconclusive || got.RepeatsNeeded != ExactLimit+1 || !strings.Contains(got.Reason, "even 50 repeats per side would not decide") {
		t.Errorf("got %+v", got)
	}
}

// TestEquivalenceRatioIsSymmetric: swapping the samples inverts the ratio
// and its interval and keeps the verdict (the bounds are symmetric in log).
func TestEquivalenceRatioIsSymmetric(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 28))
	for range 200 {
		a, b := make([]float64, 1+rng.IntN(8)), make([]float64, 1+rng.IntN(8))
		k := math.Exp(0.3 * rng.NormFloat64())
		for i := range a {
			a[i] = math.Round(10 * (1 + 0.1*rng.NormFloat64()))
		}
		for i := range b {
			b[i] = math.Round(10 * k * (1 + 0.1*rng.NormFloat64()))
		}
		checkSymmetric(t, a, b, 0.1, 0.05)
	}
}

func checkSymmetric(t *testing.T, a, b []float64, margin, alpha float64) {
	t.Helper()
	x, err1 := EquivalenceRatio(a, b, margin, alpha)
	y, err2 := EquivalenceRatio(b, a, margin, alpha)
	if (err1 == nil) != (err2 == nil) {
		t.Fatalf("%v %v: errors %v and %v", a, b, err1, err2)
	}
	if err1 != nil {
		return
	}
	inv := func(v float64) float64 {
		if v == 0 {
			return 0
		}
		return 1 / v
	}
	near := func(p, q float64) bool { return p == q || math.Abs(p/q-1) < 1e-9 }
	if x.Verdict != y.Verdict || !near(x.Ratio, inv(y.Ratio)) || !near(x.Lo, inv(y.Hi)) || !near(x.Hi, inv(y.Lo)) ||
		!near(x.Confidence, y.Confidence) || (x.Reason == "") != (y.Reason == "") {
		t.Fatalf("%v %v: %+v, swapped %+v", a, b, x, y)
	}
}

func TestEquivalenceRatioRejectsBadInput(t *testing.T) {
	ok := []float64{1, 2, 3}
	tests := []struct {
		name          string
		orig, repro   []float64
		margin, alpha float64
		cond          error
		text          string
	}{
		{"empty", nil, ok, 0.1, 0.05, ErrSampleSize, "have 0 and 3"},
		{"too many", make([]float64, ExactLimit+1), ok, 0.1, 0.05, ErrTooManyValues, "at most 50"},
		{"NaN", ok, []float64{1, math.NaN()}, 0.1, 0.05, ErrNaN, "reproduction value 2 is NaN"},
		{"infinite", []float64{math.Inf(1)}, ok, 0.1, 0.05, ErrNotFinite, "original value 1 is +Inf"},
		{"ratio out of range", []float64{1e-200}, []float64{1e200}, 0.1, 0.05, ErrNotFinite, "outside float64's range"},
		{"zero margin", ok, ok, 0, 0.05, ErrMargin, "margin 0"},
		{"NaN margin", ok, ok, math.NaN(), 0.05, ErrMargin, "margin NaN"},
		{"infinite margin", ok, ok, math.Inf(1), 0.05, ErrMargin, "margin +Inf"},
		{"alpha 0.5", ok, ok, 0.1, 0.5, ErrConfidence, "alpha 0.5"},
		{"alpha 0", ok, ok, 0.1, 0, ErrConfidence, "alpha 0"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := EquivalenceRatio(tc.orig, tc.repro, tc.margin, tc.alpha)
			if !errors.Is(err, tc.cond) || !strings.Contains(err.Error(), tc.text) {
				t.Errorf("error %v, want %v containing %q", err, tc.cond, tc.text)
			}
		})
	}
}

// FuzzEquivalenceRatio: replayed values come from a bundle its publisher
// may have crafted. Any input gives an error or a result whose interval
// holds its estimate, whose verdict follows from it, and that is symmetric.
func FuzzEquivalenceRatio(f *testing.F) {
	enc := func(split byte, vs ...float64) []byte {
		b := []byte{split, 10}
		for _, v := range vs {
			b = binary.LittleEndian.AppendUint64(b, math.Float64bits(v))
		}
		return b
	}
	f.Add(enc(5, 100, 102, 98, 101, 99, 33, 34, 33, 33.5, 32))
	f.Add(enc(1, 100, 100))
	f.Add(enc(2, 0, 1, 1, 1))
	f.Add(enc(3, 1, 1, 1, math.NaN(), 1, 1))
	f.Add(enc(2, 1e308, 5e-324, 1e-300, 1e300))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) < 2 {
			return
		}
		split, margin := int(data[0]), float64(data[1])/100
		var vs []float64
		for b := data[2:]; len(b) >= 8; b = b[8:] {
			vs = append(vs, math.Float64frombits(binary.LittleEndian.Uint64(b)))
		}
		split = min(split, len(vs))
		orig, repro := vs[:split], vs[split:]
		got, err := EquivalenceRatio(orig, repro, margin, 0.05)
		if err != nil {
			return
		}
		switch got.Verdict {
		case EquivalenceReproduced, EquivalenceNotReproduced:
			if got.RepeatsNeeded != 0 || got.Reason != "" || !(got.Lo <= got.Ratio && got.Ratio <= got.Hi) {
				t.Fatalf("%v %v: %+v", orig, repro, got)
			}
		case EquivalenceInconclusive:
			if got.Reason == "" && !(got.Lo <= got.Ratio && got.Ratio <= got.Hi) {
				t.Fatalf("%v %v: %+v", orig, repro, got)
			}
		default:
			t.Fatalf("verdict %q", got.Verdict)
		}
		checkSymmetric(t, orig, repro, margin, 0.05)
	})
}

// TestReproductionRepeatsNeeded: with the original's repeats fixed, the
// reproduction's count that decides, worked out by hand. 2 original
// repeats give a 90 % interval from 5 reproduction repeats on (coverage
// 1 − 2/C(7,2) = 0.905; 4 give 1 − 2/15 = 0.867); 1 original repeat from
// 19 on (1 − 2/20); with no spread the interval is the estimate, so that
// count decides. An original spread of 50 and 150 keeps the modelled
// interval wider than ±10 % however many reproduction repeats run; at
// α = 0.001 one original repeat needs 999 reproduction repeats for any
// interval.
func TestReproductionRepeatsNeeded(t *testing.T) {
	tests := []struct {
		name        string
		orig, repro []float64
		alpha       float64
		want        ReproductionRepeats
	}{
		{"2 original repeats", []float64{100, 100}, []float64{105, 105}, 0.05, ReproductionRepeats{5, true}},
		{"2 original, already 6", []float64{100, 100}, []float64{100, 100, 100, 100, 100, 100}, 0.05, ReproductionRepeats{7, true}},
		{"1 original repeat", []float64{100}, []float64{100}, 0.05, ReproductionRepeats{19, true}},
		{"original too spread", []float64{50, 150}, []float64{100, 100, 100}, 0.05, ReproductionRepeats{ExactLimit + 1, true}},
		{"no interval at all", []float64{100}, []float64{100}, 0.001, ReproductionRepeats{ExactLimit + 1, false}},
		{"a zero", []float64{0, 1}, []float64{1, 1}, 0.05, ReproductionRepeats{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ReproductionRepeatsNeeded(tc.orig, tc.repro, 0.1, tc.alpha)
			if err != nil || got != tc.want {
				t.Fatalf("got %+v, %v; want %+v", got, err, tc.want)
			}
			if got.Needed != 0 && got.Needed <= len(tc.repro) {
				t.Errorf("needed %d, but the reproduction already ran %d", got.Needed, len(tc.repro))
			}
		})
	}
	if _, err := ReproductionRepeatsNeeded(nil, []float64{1}, 0.1, 0.05); err == nil {
		t.Error("an empty original accepted")
	}
}
