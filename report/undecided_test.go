package report

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/replay"
)

// TestUndecidedOverloadHasOneName: an overloaded flag the overload test
// could not decide reads "undecided" in every text report (text, its
// summary, the sweep, Markdown, HTML and capture's summary), where they
// had said "null", "overload?" and "unknown" for it. The small run's r1/0
// is such a point.
func TestUndecidedOverloadHasOneName(t *testing.T) {
	res, err := replay.Replay(context.Background(), smallRun(), replay.Options{Sweep: &replay.SweepSpec{Metric: "ttft", FromNS: 50e6, ToNS: 250e6, Steps: 5}})
	if err != nil {
		t.Fatal(err)
	}
	if o := res.Point("r1", 0).Overload; o == nil || o.Overloaded.Set != nil {
		t.Fatal("the small run's r1/0 is no longer undecided")
	}
	noSweep, err := replay.Replay(context.Background(), smallRun(), replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	outs := map[string]string{}
	for name, f := range map[string]Format{"text": FormatText, "brief": FormatBrief, "markdown": FormatMarkdown, "html": FormatHTML} {
		var b bytes.Buffer
		if err := Write(&b, f, noSweep); err != nil {
			t.Fatal(err)
		}
		outs[name] = b.String()
	}
	var b bytes.Buffer
	if err := Write(&b, FormatText, res); err != nil {
		t.Fatal(err)
	}
	outs["sweep"] = b.String()
	b.Reset()
	if err := CaptureSummary(&b, noSweep, "offered", func(string, int) int64 { return 0 }); err != nil {
		t.Fatal(err)
	}
	outs["capture"] = b.String()
	for name, out := range outs {
		if !strings.Contains(out, Undecided) {
			t.Errorf("%s does not say %q", name, Undecided)
		}
		for _, old := range []string{"overload?", "overloaded  null", "overloaded: null", "| overloaded | null", "<td>null (", "\tunknown", "  unknown\n"} {
			if strings.Contains(out, old) {
				t.Errorf("%s names an undecided overload %q", name, old)
			}
		}
	}
}
