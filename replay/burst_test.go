package replay

import (
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// TestBurstNote: a synthetic run with at least a tenth of its chunk gaps
// at 0 ns gets the note naming the count and docs/capture.md; fewer
// zeros, or a run not synthetic, none.
func TestBurstNote(t *testing.T) {
	for _, c := range []struct {
		evidence string
		gaps     []int64
		want     string
	}{
		{schema.EvidenceSynthetic, []int64{0, 0, 5, 7}, "2 of 4 chunk gaps (50 %) are 0 ns"},
		{schema.EvidenceSynthetic, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, "1 of 10 chunk gaps (10 %)"},
		{schema.EvidenceSynthetic, []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10}, ""},
		{schema.EvidenceSelfRun, []int64{0, 0, 0}, ""},
		{schema.EvidenceSynthetic, nil, ""},
	} {
		g := &group{}
		for _, x := range c.gaps {
			g.itl.add(x)
			if x == 0 {
				g.zeroGaps++
			}
		}
		got := burstNote(&schema.Manifest{Evidence: c.evidence}, map[groupKey]*group{{"p", 0}: g})
		if c.want == "" && got != "" || c.want != "" && (!strings.Contains(got, c.want) || !strings.Contains(got, "docs/capture.md")) {
			t.Errorf("%s %v: note %q, want %q", c.evidence, c.gaps, got, c.want)
		}
	}
}
