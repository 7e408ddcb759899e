package report

import (
	"strings"
	"testing"

	"github.com/benchseal/benchseal/replay"
)

// TestColdFirstIDStaysOnOneLine: the first warmup request's id went raw into the cold row's label,
// so a newline in it wrote whole report lines. The id is escaped
// (newlines included) wherever text or Markdown prints it.
func TestColdFirstIDStaysOnOneLine(t *testing.T) {
	p := &replay.PointResult{Cold: &replay.ColdResult{Requests: 2, OK: 2, FirstID: "w0\n  goodput 999999 req/s", FirstTTFTNS: replay.Int(1e6)}}
	found := false
	for _, r := range coldRows(p) {
		if strings.ContainsAny(r.metric+r.value+r.unit, "\n") {
			t.Errorf("cold row %q holds a newline", r.metric)
		}
		if strings.Contains(r.metric, `(request w0\n  goodput`) {
			found = true
		}
	}
	if !found {
		t.Errorf("no cold first ttft row names the escaped request id: %+v", coldRows(p))
	}
}
