package cli

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"text/tabwriter"
	"time"

	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/report"
	"github.com/benchseal/benchseal/schema"
)

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// liveProgress redraws one progress line on a terminal and knows whether
// that line is still open (drawn without its newline).
type liveProgress struct {
	w    io.Writer
	open bool
}

// render redraws the line; the final one ends it.
func (l *liveProgress) render(p capture.Progress) {
	renderProgress(l.w, p)
	l.open = !p.Final
}

// end closes a line left open (a capture that failed before its final
// progress), so what is printed next starts on a line of its own.
func (l *liveProgress) end() {
	if l.open {
		fmt.Fprintln(l.w)
		l.open = false
	}
}

func renderProgress(w io.Writer, p capture.Progress) {
	// Sends per second since the point started (capture.Progress), named
	// so: it is not replay's request_throughput, which the summary prints.
	rate := fmt.Sprintf("sent %.1f/s since start", p.AchievedRate)
	if p.OfferedRate > 0 {
		rate = fmt.Sprintf("sent %.1f/s since start of %.1f/s offered", p.AchievedRate, p.OfferedRate)
	}
	fmt.Fprintf(w, "\r\033[K[%d/%d] %s r%d %s  sent %d done %d failed %d in-flight %d  %s  %s",
		p.Cell, p.Cells, p.Point, p.Repeat, p.Phase, p.Sent, p.Done, p.Failed, p.InFlight, rate, progressTimes(p))
	if p.Final {
		fmt.Fprintln(w)
	}
}

// progressTimes says where the run is in time, each figure named for
// what it covers: the current phase of the point (elapsed, remaining) and
// the whole run (elapsed, remaining: an estimate from the cells done).
func progressTimes(p capture.Progress) string {
	est := func(d time.Duration) string {
		if d < 0 {
			return "?"
		}
		return "~" + d.Round(time.Second).String()
	}
	return fmt.Sprintf("%s phase %s elapsed, %s left; run %s elapsed, %s left",
		p.Phase, p.PhaseElapsed.Round(time.Second), est(p.Remaining), p.Elapsed.Round(time.Second), est(p.RunRemaining))
}

// maxFailuresShown is how many failed requests capture prints as they
// happen; the rest are counted in the summary.
const maxFailuresShown = 5

// progressLineInterval is how often capture prints a progress line when
// stderr is not a terminal.
const progressLineInterval = 10 * time.Second

// failurePrinter prints the first n failed requests as they end, then says
// that later ones are only counted.
func failurePrinter(w io.Writer, n int) func(capture.Failure) {
	shown := 0
	return func(f capture.Failure) {
		switch {
		case shown < n:
			fmt.Fprintf(w, "benchseal: request %s (point %s repeat %d %s) failed: %s: %s\n", f.ID, f.Point, f.Repeat, f.Phase, f.Status, schema.EscapeText(f.Error, false))
		case shown == n:
			fmt.Fprintln(w, "benchseal: more requests failed; they are counted by reason in the summary")
		default:
			return
		}
		shown++
	}
}

// progressLine prints one plain progress line (no cursor control). Its
// rate is requests sent per second since the point started, named so
// beside the summary's request_throughput (ok requests over replay's
// window), a different quantity.
func progressLine(w io.Writer, p capture.Progress) {
	done := fmt.Sprint(p.Done)
	if p.Requests > 0 {
		done = fmt.Sprintf("%d/%d", p.Done, p.Requests)
	}
	state := "progress"
	if p.Final {
		state = "finished"
	}
	fmt.Fprintf(w, "%s: [%d/%d] point %s repeat %d %s: %s done, %d failed, %d in flight, %.1f sent/s since the point started; %s\n",
		state, p.Cell, p.Cells, p.Point, p.Repeat, p.Phase, done, p.Failed, p.InFlight, p.AchievedRate, progressTimes(p))
}

// printCaptureSummary prints the end-of-run table from the replay of the
// run just written (report.CaptureSummary), so each number is the one
// replay prints for that point; if the run cannot be replayed, capture's
// own counts, each labelled as its own quantity.
func printCaptureSummary(ctx context.Context, w io.Writer, res *capture.Result) {
	if err := printReplayedSummary(ctx, w, res); err != nil {
		fmt.Fprintf(w, "(the run could not be replayed for its summary: %v; capture's own counts follow)\n", err)
		printCellStats(w, res)
	}
	printCaptureFooter(w, res)
}

func printReplayedSummary(ctx context.Context, w io.Writer, res *capture.Result) error {
	run, closeRun, err := openRunOrBundle(res.Dir)
	if err != nil {
		return err
	}
	defer closeRun()
	r, err := replay.Replay(ctx, run, replay.Options{})
	if err != nil {
		return err
	}
	chunks := map[[2]string]int64{}
	for _, c := range res.Cells {
		chunks[[2]string{c.Point, strconv.Itoa(c.Repeat)}] = int64(c.Chunks)
	}
	offered := "offered"
	if sh := res.Manifest.Shard; sh != nil && sh.Count > 1 {
		offered = fmt.Sprintf("offered to shard %d of %d", sh.Index, sh.Count)
	}
	return report.CaptureSummary(w, r, offered, func(point string, repeat int) int64 { return chunks[[2]string{point, strconv.Itoa(repeat)}] })
}

// printCellStats is capture's own per-cell table.
func printCellStats(w io.Writer, res *capture.Result) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	offered := "offered"
	if sh := res.Manifest.Shard; sh != nil && sh.Count > 1 {
		offered = fmt.Sprintf("offered to shard %d of %d", sh.Index, sh.Count) // its share of the point's rate
	}
	// Open loop: the arrival rate achieved ((sends − 1) ÷ span of sends,
	// replay's "arrival rate … achieved") against the offered. Closed loop:
	// no offered rate; the requests ÷ the cell's duration, a figure of its
	// own (replay's request_throughput counts ok requests over its window).
	rateCol := "requests ÷ duration (req/s)"
	if slices.ContainsFunc(res.Cells, func(c capture.CellStats) bool { return c.OfferedRate > 0 }) {
		rateCol = "arrival rate req/s (achieved / " + offered + ")"
	}
	fmt.Fprintf(tw, "point\trepeat\trequests\tok\tfailed\tchunks\t%s\tsend lag p99 (ms)\tduration (s)\n", rateCol)
	for _, c := range res.Cells {
		ok := c.ByStatus[schema.StatusOK]
		rate := fmt.Sprintf("%.2f", c.AchievedRate)
		lag := "-"
		if c.OfferedRate > 0 {
			rate = fmt.Sprintf("%.2f / %.2f", c.AchievedRate, c.OfferedRate)
			lag = fmt.Sprintf("%.3f", float64(c.SendLagP99)/1e6)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%.3f\n", c.Point, c.Repeat, c.Requests, ok, c.Requests-ok, c.Chunks,
			rate, lag, c.Duration.Seconds())
	}
	tw.Flush()
}

// printCaptureFooter prints the failures by reason and what was written.
func printCaptureFooter(w io.Writer, res *capture.Result) {
	state := "complete"
	if res.Manifest.Incomplete {
		state = "incomplete: " + res.Manifest.IncompleteReason
	}
	if len(res.Failures) > 0 {
		fmt.Fprintln(w, "failed requests by reason:")
		for i, f := range res.Failures {
			if i == 10 {
				fmt.Fprintf(w, "  … %d more reason(s)\n", len(res.Failures)-10)
				break
			}
			fmt.Fprintf(w, "  %6d  %s\n", f.Count, f.Kind)
		}
	}
	fmt.Fprintf(w, "wrote %s: %d records, %d content chunks, evidence %s (%s)\n", res.Dir, res.Records, res.Chunks, res.Manifest.Evidence, state)
	fmt.Fprintln(w, planLine(res.Manifest))
}
