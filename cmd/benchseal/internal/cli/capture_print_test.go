package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/schema"
)

// TestLiveProgressEndsItsLine: a terminal progress line left open (a
// capture that failed before its final progress) is ended, so the next
// message starts on a line of its own; a final line is not ended twice
// (newuser3 finding 8.11).
func TestLiveProgressEndsItsLine(t *testing.T) {
	var b bytes.Buffer
	l := &liveProgress{w: &b}
	l.render(capture.Progress{Cell: 1, Cells: 2, Point: "c1"})
	l.end()
	if !strings.HasSuffix(b.String(), "\n") {
		t.Errorf("open line not ended: %q", b.String())
	}
	b.Reset()
	l.render(capture.Progress{Cell: 2, Cells: 2, Point: "c1", Final: true})
	l.end()
	if s := b.String(); !strings.HasSuffix(s, "\n") || strings.HasSuffix(s, "\n\n") {
		t.Errorf("final line: %q", s)
	}
}

// TestCaptureSummaryRateColumn: "achieved" is the arrival rate against
// the offered one (open loop); a closed loop's single number is labelled
// for what it is (newuser3 finding 8.1).
func TestCaptureSummaryRateColumn(t *testing.T) {
	for _, c := range []struct {
		offered  float64
		want     string
		wantCell string
	}{
		{0, "requests ÷ duration (req/s)", "53.61"},
		{80, "arrival rate req/s (achieved / offered)", "117.17 / 80.00"},
	} {
		var b bytes.Buffer
		printCaptureSummary(&b, &capture.Result{Manifest: &schema.Manifest{}, Cells: []capture.CellStats{
			{Point: "p", Requests: 40, AchievedRate: map[bool]float64{true: 117.17, false: 53.61}[c.offered > 0], OfferedRate: c.offered}}})
		out := b.String()
		if !strings.Contains(out, c.want) || !strings.Contains(out, c.wantCell) || c.offered == 0 && strings.Contains(out, "achieved") {
			t.Errorf("offered %v:\n%s", c.offered, out)
		}
	}
}
