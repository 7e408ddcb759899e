package cli

import (
	"context"
	"fmt"
	"io"
	"os"
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
	// Back to the line's start and clear it, then the new text.
	fmt.Fprint(l.w, "\r\033[K"+report.ProgressText(p))
	if p.Final {
		fmt.Fprintln(l.w)
	}
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

// printCaptureSummary prints the end-of-run summary (report.CaptureText)
// from the replay of the run just written, so each number is the one
// replay prints for that point.
func printCaptureSummary(ctx context.Context, w io.Writer, res *capture.Result) {
	r, err := replayCaptured(ctx, res.Dir)
	report.CaptureText(w, res, r, err)
}

// replayCaptured replays the run capture wrote to dir (a run directory,
// which capture has validated: it is not checked again).
func replayCaptured(ctx context.Context, dir string) (*replay.Result, error) {
	run, err := schema.OpenRunDir(dir)
	if err != nil {
		return nil, err
	}
	return replay.Replay(ctx, run, replay.Options{})
}
