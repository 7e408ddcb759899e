package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/replay"
)

// TestCaptureSummaryNamesLoadFlags: capture's end-of-run table carries
// replay's overloaded and generator-limited verdicts per point × repeat,
// and a warning line counts the flagged ones (the table used to leave them
// out, so a generator-limited run read as plain).
func TestCaptureSummaryNamesLoadFlags(t *testing.T) {
	yes, no := true, false
	point := func(name string, over, gen *bool) *replay.PointResult {
		return &replay.PointResult{Point: name, Overload: &replay.Overload{Loop: replay.LoopClosed,
			Overloaded: replay.Flag{Set: over}, GeneratorLimited: replay.Flag{Set: gen}}}
	}
	r := &replay.Result{Results: []*replay.PointResult{
		point("calm", &no, &no), point("late", &no, &yes), point("both", &yes, &yes), point("unjudged", nil, nil),
	}}
	var b bytes.Buffer
	if err := CaptureSummary(&b, r, "offered", func(string, int) int64 { return 0 }); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	lines := strings.Split(out, "\n")
	if !strings.HasSuffix(strings.TrimSpace(lines[0]), "load flags (replay)") {
		t.Errorf("no load flags column:\n%s", out)
	}
	for i, want := range []string{"-", "generator-limited", "overloaded, generator-limited", "overload undecided"} {
		if !strings.HasSuffix(lines[i+1], "  "+want) {
			t.Errorf("row %d: %q, want it to end with %q", i+1, lines[i+1], want)
		}
	}
	if !strings.Contains(out, "WARNING: 2 of 4 point × repeat rows flagged by replay's overload test") {
		t.Errorf("no warning line counting the flagged rows:\n%s", out)
	}
	b.Reset()
	r.Results = r.Results[:1]
	if err := CaptureSummary(&b, r, "offered", func(string, int) int64 { return 0 }); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), "WARNING") {
		t.Errorf("a warning without a flagged row:\n%s", b.String())
	}
}
