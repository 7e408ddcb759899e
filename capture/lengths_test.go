package capture

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"
)

func TestParseLengthSpec(t *testing.T) {
	for in, want := range map[string]string{
		"128":                   "128",
		"16..64":                "16..64",
		"normal:512,128":        "normal:512,128,1,1024",
		"normal:512,128,64,900": "normal:512,128,64,900",
		"lognormal:40,10":       "lognormal:40,10,1,80",
		"list:100,200,100":      "list:100,200,100",
	} {
		d, err := ParseLengthSpec(in)
		if err != nil {
			t.Fatalf("%q: %v", in, err)
		}
		if got := d.String(); got != want {
			t.Errorf("%q reads as %q, want %q", in, got, want)
		}
		if d2, err := ParseLengthSpec(d.String()); err != nil || d2.String() != want {
			t.Errorf("%q does not read back: %v %v", want, d2, err)
		}
	}
	for in, want := range map[string]string{
		"0":               "not a whole number of tokens from 1",
		"64..16":          "the upper end is below the lower",
		"normal:512":      "want normal:MEAN,SD",
		"normal:0.5,1":    "a mean of at least 1",
		"normal:5,1,9,2":  "MAX at least MIN",
		"lognormal:NaN,1": "is not a number of tokens",
		"list:3,-1":       `"-1" is not a whole number`,
		"zipf:1":          `unknown kind "zipf"`,
		"list:" + strings.Repeat("1,", 1<<16) + "1": "more than 65536 lengths",
	} {
		if _, err := ParseLengthSpec(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%.40q: %v, want an error saying %q", in, err, want)
		}
	}
}

// Drawn lengths stay within each distribution's bounds and follow it: a
// uniform's every value, a normal's and a lognormal's mean and spread, an
// empirical list's values only; the same seed draws the same lengths.
func TestDrawnLengthsFollowTheirDistribution(t *testing.T) {
	const n = 20000
	draw := func(spec string) []int {
		d, err := ParseLengthSpec(spec)
		if err != nil {
			t.Fatal(err)
		}
		rng := rand.New(rand.NewPCG(7, 7))
		out := make([]int, n)
		for i := range out {
			out[i] = d.draw(rng)
			if out[i] < d.Lo || out[i] > d.Hi {
				t.Fatalf("%s drew %d outside [%d, %d]", spec, out[i], d.Lo, d.Hi)
			}
		}
		return out
	}
	moments := func(v []int) (mean, sd float64) {
		for _, x := range v {
			mean += float64(x)
		}
		mean /= float64(len(v))
		for _, x := range v {
			sd += (float64(x) - mean) * (float64(x) - mean)
		}
		return mean, math.Sqrt(sd / float64(len(v)-1))
	}
	seen := map[int]int{}
	for _, x := range draw("16..20") {
		seen[x]++
	}
	if len(seen) != 5 {
		t.Errorf("uniform 16..20 drew %v", seen)
	}
	for _, tc := range []struct {
		spec     string
		mean, sd float64
	}{{"normal:512,64", 512, 64}, {"lognormal:400,120", 400, 120}} {
		m, s := moments(draw(tc.spec))
		if math.Abs(m-tc.mean) > 0.02*tc.mean || math.Abs(s-tc.sd) > 0.05*tc.sd {
			t.Errorf("%s: mean %.1f sd %.1f, want about %g and %g", tc.spec, m, s, tc.mean, tc.sd)
		}
	}
	for _, x := range draw("list:7,300,300") {
		if x != 7 && x != 300 {
			t.Fatalf("list drew %d", x)
		}
	}
	a, b := draw("normal:100,30"), draw("normal:100,30")
	for i := range a {
		if a[i] != b[i] {
			t.Fatal("the same seed drew different lengths")
		}
	}
	in, _ := ParseLengthSpec("8..12")
	out, _ := ParseLengthSpec("list:3,5")
	items := drawnItems(1, 2, 50, in, out)
	for _, it := range items {
		if w := len(strings.Fields(it.Prompt)); w != it.InputTokens || it.InputTokens < 8 || it.InputTokens > 12 || (it.OutputTokens != 3 && it.OutputTokens != 5) {
			t.Fatalf("item %d words, %+v", w, it)
		}
	}
}

func FuzzParseLengthSpec(f *testing.F) {
	for _, s := range []string{"128", "1..9", "normal:5,2", "lognormal:40,10,2,99", "list:1,2"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseLengthSpec(s)
		if err != nil {
			return
		}
		if d.Lo < 1 || d.Hi < d.Lo || d.Hi > MaxSyntheticLength {
			t.Fatalf("%q: bounds %d..%d", s, d.Lo, d.Hi)
		}
		rng := rand.New(rand.NewPCG(1, 1))
		if x := d.draw(rng); x < d.Lo || x > d.Hi {
			t.Fatalf("%q drew %d", s, x)
		}
		if d2, err := ParseLengthSpec(d.String()); err != nil || d2.String() != d.String() {
			t.Fatalf("%q: %q does not read back (%v)", s, d.String(), err)
		}
	})
}

// A plan file draws lengths from its input_lengths and output_lengths;
// every point's lengths are then the distributions' bounds, and a point
// stating another is refused.
func TestPlanLengthDistributions(t *testing.T) {
	p, err := DecodePlan(strings.NewReader(`{"mode":"concurrency","seed":1,"input_lengths":"16..64","output_lengths":"list:4,8",
		"points":[{"name":"a","concurrency":1,"requests":3}]}`))
	if err != nil {
		t.Fatal(err)
	}
	if pt := p.Points[0]; pt.InputTokens != 64 || pt.OutputTokens != 8 || p.InputLengths.String() != "16..64" {
		t.Errorf("point lengths %d/%d, input_lengths %v", pt.InputTokens, pt.OutputTokens, p.InputLengths)
	}
	_, err = DecodePlan(strings.NewReader(`{"mode":"concurrency","seed":1,"input_lengths":"16..64",
		"points":[{"name":"a","concurrency":1,"requests":3,"input_tokens":32}]}`))
	if err == nil || !strings.Contains(err.Error(), "points[0]: input_tokens 32 with input_lengths 16..64") {
		t.Errorf("a point's own length beside a distribution: %v", err)
	}
	if _, err := DecodePlan(strings.NewReader(`{"mode":"concurrency","input_lengths":"normal:5","points":[{"name":"a","concurrency":1,"requests":3}]}`)); err == nil {
		t.Error("a bad distribution was accepted")
	}
}
