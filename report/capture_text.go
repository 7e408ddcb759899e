package report

import (
	"fmt"
	"io"
	"math/big"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

var nsToS = big.NewRat(1, 1_000_000_000)

// rate is a float rate (req/s, sends/s) to places digits, as capture
// measured it.
func rate(f float64, places int) string { return Decimal(replay.Float(f), one, places) }

// ms is a duration in ns as ms to three places.
func ms(ns int64) string { return Decimal(replay.Int(ns), nsToMS, 3) }

// ProgressText is the progress line a terminal redraws while capture
// runs, without cursor control or newline. Its rate is requests sent per
// second since the point started (capture.Progress), named so: it is not
// replay's request_throughput, which the summary prints.
func ProgressText(p capture.Progress) string {
	sent := "sent " + rate(p.AchievedRate, 1) + "/s since start"
	if p.OfferedRate > 0 {
		sent += " of " + rate(p.OfferedRate, 1) + "/s offered"
	}
	return fmt.Sprintf("[%d/%d] %s r%d %s  sent %d done %d failed %d in-flight %d  %s  %s",
		p.Cell, p.Cells, p.Point, p.Repeat, p.Phase, p.Sent, p.Done, p.Failed, p.InFlight, sent, progressTimes(p))
}

// ProgressLine is one plain progress line (for a log, not redrawn),
// without its newline. Its rate is requests sent per second since the
// point started, named so beside the summary's request_throughput (ok
// requests over replay's window), a different quantity.
func ProgressLine(p capture.Progress) string {
	done := fmt.Sprint(p.Done)
	if p.Requests > 0 {
		done = fmt.Sprintf("%d/%d", p.Done, p.Requests)
	}
	state := "progress"
	if p.Final {
		state = "finished"
	}
	return fmt.Sprintf("%s: [%d/%d] point %s repeat %d %s: %s done, %d failed, %d in flight, %s sent/s since the point started; %s",
		state, p.Cell, p.Cells, p.Point, p.Repeat, p.Phase, done, p.Failed, p.InFlight, rate(p.AchievedRate, 1), progressTimes(p))
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

// CaptureText writes capture's end-of-run summary of res: the table from
// r, the replay of the run it wrote (CaptureSummary), so each number is
// the one replay prints for that point; when the run could not be
// replayed (replayErr), capture's own counts, each labelled as its own
// quantity. Then the failed requests by reason, what was written and
// whether the run was pre-registered.
func CaptureText(out io.Writer, res *capture.Result, r *replay.Result, replayErr error) error {
	if replayErr == nil {
		type cell struct {
			point  string
			repeat int
		}
		chunks := map[cell]int64{}
		for _, c := range res.Cells {
			chunks[cell{c.Point, c.Repeat}] = c.Chunks
		}
		replayErr = CaptureSummary(out, r, offeredLabel(res.Manifest), func(point string, repeat int) int64 {
			return chunks[cell{point, repeat}]
		})
	}
	if replayErr != nil {
		fmt.Fprintf(out, "(the run could not be replayed for its summary: %v; capture's own counts follow)\n", replayErr)
		if err := CaptureCellStats(out, res); err != nil {
			return err
		}
	}
	return captureFooter(out, res)
}

// offeredLabel names the offered rate of a run: "offered", or in a shard
// run "offered to shard I of N" (its share of the point's rate).
func offeredLabel(m *schema.Manifest) string {
	if sh := m.Shard; sh != nil && sh.Count > 1 {
		return fmt.Sprintf("offered to shard %d of %d", sh.Index, sh.Count)
	}
	return "offered"
}

// CaptureCellStats writes capture's own per-cell table of res.
func CaptureCellStats(out io.Writer, res *capture.Result) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	// Open loop: the arrival rate achieved ((sends − 1) ÷ span of sends,
	// replay's "arrival rate … achieved") against the offered. Closed loop:
	// no offered rate; the requests ÷ the cell's duration, a figure of its
	// own (replay's request_throughput counts ok requests over its window).
	rateCol := "requests ÷ duration (req/s)"
	if slices.ContainsFunc(res.Cells, func(c capture.CellStats) bool { return c.OfferedRate > 0 }) {
		rateCol = "arrival rate req/s (achieved / " + offeredLabel(res.Manifest) + ")"
	}
	fmt.Fprintf(tw, "point\trepeat\trequests\tok\tfailed\tchunks\t%s\tsend lag p99 (ms)\tduration (s)\n", rateCol)
	for _, c := range res.Cells {
		ok := c.ByStatus[schema.StatusOK]
		achieved, lag := rate(c.AchievedRate, 2), "-"
		if c.OfferedRate > 0 {
			achieved += " / " + rate(c.OfferedRate, 2)
			lag = ms(c.SendLagP99)
		}
		fmt.Fprintf(tw, "%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s\t%s\n", c.Point, c.Repeat, c.Requests, ok, c.Requests-ok, c.Chunks,
			achieved, lag, Decimal(replay.Int(int64(c.Duration)), nsToS, 3))
	}
	return tw.Flush()
}

// captureFooter writes the failures by reason and what was written.
func captureFooter(out io.Writer, res *capture.Result) error {
	var b strings.Builder
	state := "complete"
	if res.Manifest.Incomplete {
		state = "incomplete: " + res.Manifest.IncompleteReason
	}
	if len(res.Failures) > 0 {
		// Warmup failures are counted here but in no point's row above.
		var warm int64
		for _, f := range res.Failures {
			warm += f.Warmup
		}
		if warm > 0 {
			fmt.Fprintf(&b, "failed requests by reason (including %d warmup, outside the table):\n", warm)
		} else {
			fmt.Fprintln(&b, "failed requests by reason:")
		}
		for i, f := range res.Failures {
			if i == 10 {
				fmt.Fprintf(&b, "  … %d more reason(s)\n", len(res.Failures)-10)
				break
			}
			fmt.Fprintf(&b, "  %6d  %s", f.Count, f.Kind)
			if f.Warmup > 0 {
				fmt.Fprintf(&b, " (%d warmup)", f.Warmup)
			}
			b.WriteByte('\n')
		}
	}
	fmt.Fprintf(&b, "wrote %s: %d records, %d content chunks, evidence %s (%s)\n", res.Dir, res.Records, res.Chunks, res.Manifest.Evidence, state)
	fmt.Fprintln(&b, PlanLine(res.Manifest))
	_, err := io.WriteString(out, b.String())
	return err
}

// PlanLine says in a summary whether the run was pre-registered.
func PlanLine(m *schema.Manifest) string {
	if m.Plan == nil {
		return "no pre-registered plan: the run was not pre-registered"
	}
	return fmt.Sprintf("pre-registered plan sha256:%s", m.Plan.SHA256)
}
