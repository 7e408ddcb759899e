package report

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/compare"
	"github.com/benchseal/benchseal/replay"
)

// TestCompareTextClosesWithAVerdictAndExplainsItsCells: compare's text
// ends with a line per compared input counting the metrics it tested
// better and worse on; a "?" change (A's median 0) and a half interval
// "(at most x; …)" each get a footnote saying how to read them.
func TestCompareTextClosesWithAVerdictAndExplainsItsCells(t *testing.T) {
	cr, err := compare.Compare(compareInputs(t), compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var tested []int
	for i, c := range cr.Comparisons {
		if c.Tested {
			tested = append(tested, i)
		}
	}
	if len(tested) < 3 {
		t.Fatalf("only %d tested comparisons", len(tested))
	}
	// One significantly better, one worse; one with A's median 0; one
	// side bounded above only.
	better, worse, zero, half := &cr.Comparisons[tested[0]], &cr.Comparisons[tested[1]], &cr.Comparisons[tested[2]], &cr.Comparisons[tested[0]]
	better.Significant, better.Better = true, true
	worse.Significant = true
	zero.Base.Summary.Median, zero.Change = replay.Int(0), replay.Null
	half.Patch.Summary.CILow, half.Patch.Summary.CIHigh = replay.Null, replay.Int(5)
	var b bytes.Buffer
	if err := CompareText(&b, cr); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	same := len(tested) - 2
	want := fmt.Sprintf("VERDICT: B against A: mixed: better on 1, worse on 1, not significant on %d of %d metric × load tests at p ≤ 0.05", same, len(tested))
	if !strings.Contains(out, want) {
		t.Errorf("no %q in\n%s", want, out)
	}
	lines := strings.Split(strings.TrimRight(out, "\n"), "\n")
	if !strings.HasPrefix(lines[len(lines)-1], "VERDICT: ") {
		t.Errorf("the report does not end with its verdict: %q", lines[len(lines)-1])
	}
	for _, want := range []string{
		") ? : the relative change is undefined: A's median is 0\n",
		") (at most x; no lower bound from N repeats): an interval bounded on one side only",
		"~ ?(",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
}
