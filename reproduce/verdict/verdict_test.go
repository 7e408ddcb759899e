package verdict

import (
	"slices"
	"testing"
)

// TestOverallWithholdsReproduced: every claim REPRODUCED is REPRODUCED
// overall only when a measured claim was decided with an interval and the
// setup withholds nothing; a claim NOT REPRODUCED decides it either way.
func TestOverallWithholdsReproduced(t *testing.T) {
	one := 1.0
	ratio := ClaimVerdict{Kind: KindRatio, Verdict: Reproduced, Ratio: &one, Lo: &one, Hi: &one}
	count := ClaimVerdict{Kind: KindExact, Verdict: Reproduced}
	zero := ClaimVerdict{Kind: KindRatio, Verdict: Reproduced, Reason: "0 in every repeat of both"}
	notRep := ClaimVerdict{Kind: KindRatio, Verdict: NotReproduced, Ratio: &one, Lo: &one, Hi: &one}
	undecided := ClaimVerdict{Kind: KindRatio, Verdict: Inconclusive}
	model := "model differs (a; b): a reproduction on another model is not one of the original's claims"
	for _, c := range []struct {
		name     string
		cs       []ClaimVerdict
		setup    []string
		want     Verdict
		withheld []string
	}{
		{"measured and counts", []ClaimVerdict{count, ratio}, nil, Reproduced, nil},
		{"counts only", []ClaimVerdict{count, count}, nil, Inconclusive, []string{OnlyCountsAndFlags}},
		{"counts and a measured 0", []ClaimVerdict{count, zero}, nil, Inconclusive, []string{OnlyCountsAndFlags}},
		{"another model", []ClaimVerdict{count, ratio}, []string{model}, Inconclusive, []string{model}},
		{"not reproduced on another model", []ClaimVerdict{ratio, notRep}, []string{model}, NotReproduced, []string{model}},
		{"a measured claim undecided", []ClaimVerdict{count, undecided}, nil, Inconclusive, nil},
		{"none", nil, nil, Inconclusive, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			v, _, w := Overall(c.cs, c.setup)
			if v != c.want || !slices.Equal(w, c.withheld) && !(len(w) == 0 && len(c.withheld) == 0) {
				t.Fatalf("%s withheld %q, want %s withheld %q", v, w, c.want, c.withheld)
			}
		})
	}
}
