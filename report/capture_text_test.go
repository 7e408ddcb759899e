package report

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/schema"
)

// TestCaptureSummaryRateColumn: "achieved" is the arrival rate against
// the offered one (open loop); a closed loop's single number is labelled
// for what it is.
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
		if err := CaptureCellStats(&b, &capture.Result{Manifest: &schema.Manifest{}, Cells: []capture.CellStats{
			{Point: "p", Requests: 40, AchievedRate: map[bool]float64{true: 117.17, false: 53.61}[c.offered > 0], OfferedRate: c.offered}}}); err != nil {
			t.Fatal(err)
		}
		out := b.String()
		if !strings.Contains(out, c.want) || !strings.Contains(out, c.wantCell) || c.offered == 0 && strings.Contains(out, "achieved") {
			t.Errorf("offered %v:\n%s", c.offered, out)
		}
	}
}

// TestProgressTimesNameWhatTheyCover: the progress line gives the
// current phase's elapsed and remaining time and the whole run's, each
// labelled (it printed the run's elapsed time beside the phase's
// remaining time, as if one clock).
func TestProgressTimesNameWhatTheyCover(t *testing.T) {
	p := capture.Progress{Phase: "measure", Cell: 2, Cells: 4, PhaseElapsed: 12 * time.Second, Remaining: 8 * time.Second,
		Elapsed: 50 * time.Second, RunRemaining: 48 * time.Second}
	if got, want := progressTimes(p), "measure phase 12s elapsed, ~8s left; run 50s elapsed, ~48s left"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	p.Remaining, p.RunRemaining = -1, -1
	if got, want := progressTimes(p), "measure phase 12s elapsed, ? left; run 50s elapsed, ? left"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// TestProgressTexts: the live and the plain progress line, each rate
// named for what it is (sends per second since the point started).
func TestProgressTexts(t *testing.T) {
	p := capture.Progress{Point: "rate-8", Cell: 2, Cells: 4, Repeat: 1, Phase: "measure", Sent: 40, Done: 38, Failed: 1,
		InFlight: 2, Requests: 60, OfferedRate: 8, AchievedRate: 7.96, PhaseElapsed: 5 * time.Second,
		Remaining: 2500 * time.Millisecond, Elapsed: 20 * time.Second, RunRemaining: -1}
	if got, want := ProgressText(p), "[2/4] rate-8 r1 measure  sent 40 done 38 failed 1 in-flight 2  sent 8.0/s since start of 8.0/s offered  measure phase 5s elapsed, ~3s left; run 20s elapsed, ? left"; got != want {
		t.Errorf("live:\ngot  %q\nwant %q", got, want)
	}
	p.Final = true
	if got, want := ProgressLine(p), "finished: [2/4] point rate-8 repeat 1 measure: 38/60 done, 1 failed, 2 in flight, 8.0 sent/s since the point started; measure phase 5s elapsed, ~3s left; run 20s elapsed, ? left"; got != want {
		t.Errorf("plain:\ngot  %q\nwant %q", got, want)
	}
}

// TestCaptureFooterSaysWhichFailuresAreWarmup: the failures by reason
// count warmup requests too, which no point's row counts, and say how
// many; without any, the heading is as before.
func TestCaptureFooterSaysWhichFailuresAreWarmup(t *testing.T) {
	var b bytes.Buffer
	res := &capture.Result{Manifest: &schema.Manifest{}, Failures: []capture.FailureCount{
		{Kind: "rejected: server: 429", Count: 18}, {Kind: "error: client: reset", Count: 3, Warmup: 1}}}
	if err := captureFooter(&b, res); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if !strings.Contains(out, "failed requests by reason (including 1 warmup, outside the table):\n") ||
		!strings.Contains(out, "      3  error: client: reset (1 warmup)\n") || !strings.Contains(out, "     18  rejected: server: 429\n") {
		t.Errorf("with a warmup failure:\n%s", out)
	}
	b.Reset()
	res.Failures[1].Warmup = 0
	if err := captureFooter(&b, res); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); !strings.Contains(out, "failed requests by reason:\n") || strings.Contains(out, "warmup") {
		t.Errorf("without a warmup failure:\n%s", out)
	}
}
