package cli

import (
	"bytes"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/capture"
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
