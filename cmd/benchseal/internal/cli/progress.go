package cli

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/benchseal/benchseal/internal/progress"
	"github.com/benchseal/benchseal/report"
)

// The progress line: drawn only on a terminal, first after progressDelay
// (a command that ends sooner prints nothing) and then at most every
// progressInterval.
const (
	progressDelay    = 500 * time.Millisecond
	progressInterval = 250 * time.Millisecond
)

// workLine shows the libraries' progress.Update values as one line on
// stderr, redrawn in place and cleared when the command ends. It is used
// only when stderr is a terminal: on a pipe or a file nothing is written,
// so logs and the scripts that read stderr see only the command's own
// messages (docs/format.md, "Progress of long work").
type workLine struct {
	mu    sync.Mutex
	w     io.Writer
	plain bool // NO_COLOR or TERM=dumb: no escape sequences, blanks instead
	now   func() time.Time
	start time.Time
	last  time.Time
	drawn int // the length of the line on screen, 0 when none
}

// phaseLogAfter is how long a phase runs before, off a terminal, a line
// says it is under way: work that short is no wait worth a line, and the
// scripts that read stderr of small runs see only the command's messages.
const phaseLogAfter = 5 * time.Second

// progressSink is what a command's progress goes to: the terminal's line
// or, off a terminal, the phase log.
type progressSink interface {
	fn() progress.Func
	clear()
}

// newProgress returns the sink for stderr w: the redrawn line on a
// terminal, else a plain line per long phase, else (BENCHSEAL_PROGRESS=off)
// nothing.
func newProgress(w io.Writer, terminal bool, getenv func(string) string) progressSink {
	if l := newWorkLine(w, terminal, getenv); l != nil {
		return l
	}
	if getenv("BENCHSEAL_PROGRESS") == "off" {
		return (*phaseLog)(nil)
	}
	return &phaseLog{w: w, now: time.Now}
}

// phaseLog writes, where stderr is a pipe or a file, one plain line when
// a phase has run phaseLogAfter ("…, 5s so far") and one when it ends
// ("…: done in 12.1s"): a log of long work shows what it waited on, and
// holds no carriage return or escape.
type phaseLog struct {
	mu        sync.Mutex
	w         io.Writer
	now       func() time.Time
	phase     string
	start     time.Time
	last      progress.Update
	announced bool
}

// update is the progress.Func of the phase log.
func (p *phaseLog) update(u progress.Update) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.now()
	if u.Phase != p.phase || p.start.IsZero() {
		p.end(t)
		p.phase, p.start, p.announced = u.Phase, t, false
	}
	p.last = u
	if !p.announced && t.Sub(p.start) >= phaseLogAfter {
		fmt.Fprintf(p.w, "%s, %s so far\n", report.WorkProgressText(u), t.Sub(p.start).Round(time.Second))
		p.announced = true
	}
}

// end closes the current phase at t: a line only if it was announced.
func (p *phaseLog) end(t time.Time) {
	if p.announced {
		fmt.Fprintf(p.w, "%s: done in %s\n", report.WorkProgressText(p.last), t.Sub(p.start).Round(100*time.Millisecond))
	}
	p.announced = false
}

// fn returns the log's progress.Func, nil when it is off.
func (p *phaseLog) fn() progress.Func {
	if p == nil {
		return nil
	}
	return p.update
}

// clear ends the last phase, when the command ends.
func (p *phaseLog) clear() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.end(p.now())
}

// newWorkLine returns the progress line for stderr w, or nil when
// w is not a terminal.
func newWorkLine(w io.Writer, terminal bool, getenv func(string) string) *workLine {
	if !terminal {
		return nil
	}
	// NO_COLOR set to anything but "" turns escapes off (https://no-color.org).
	return &workLine{w: w, plain: getenv("NO_COLOR") != "" || getenv("TERM") == "dumb", now: time.Now}
}

// update is the progress.Func: it redraws the line when it is due.
func (p *workLine) update(u progress.Update) {
	p.mu.Lock()
	defer p.mu.Unlock()
	t := p.now()
	if p.start.IsZero() {
		p.start = t
	}
	if t.Sub(p.start) < progressDelay || (!p.last.IsZero() && t.Sub(p.last) < progressInterval) {
		return
	}
	p.last = t
	p.draw(report.WorkProgressText(u))
}

// draw replaces the line on screen with s.
func (p *workLine) draw(s string) {
	if p.plain {
		fmt.Fprintf(p.w, "\r%s%s", s, strings.Repeat(" ", max(0, p.drawn-len(s))))
	} else {
		fmt.Fprintf(p.w, "\r%s\x1b[K", s)
	}
	p.drawn = len(s)
}

// clear removes the line, before the command's own output on stderr.
func (p *workLine) clear() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.drawn == 0 {
		return
	}
	if p.plain {
		fmt.Fprintf(p.w, "\r%s\r", strings.Repeat(" ", p.drawn))
	} else {
		fmt.Fprint(p.w, "\r\x1b[K")
	}
	p.drawn = 0
}

// fn returns the line's progress.Func, nil for no line.
func (p *workLine) fn() progress.Func {
	if p == nil {
		return nil
	}
	return p.update
}
