package replay

import (
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestSweepStepFormsTheDocsNameParse: every `:N` step count docs/replay.md's
// Sweeps paragraph names is accepted by ParseSweep (it named `:0` as the
// round limits, which the parser refuses).
func TestSweepStepFormsTheDocsNameParse(t *testing.T) {
	b, err := os.ReadFile("../docs/replay.md")
	if err != nil {
		t.Fatal(err)
	}
	_, para, ok := strings.Cut(string(b), "**Sweeps**")
	if !ok {
		t.Fatal("docs/replay.md has no Sweeps paragraph")
	}
	para, _, _ = strings.Cut(para, "\n\n")
	for _, m := range regexp.MustCompile("`[^`]*(:[0-9]+)`").FindAllStringSubmatch(para, -1) {
		if _, err := ParseSweep("ttft=1ms..2ms" + m[1]); err != nil {
			t.Errorf("docs/replay.md names %s: %v", m[0], err)
		}
	}
}
