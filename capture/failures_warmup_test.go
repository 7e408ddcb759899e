package capture

import (
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// TestFailureCountsSayWhichAreWarmup: a failed warmup request is counted
// under its reason and as warmup, since no point's counts include it.
func TestFailureCountsSayWhichAreWarmup(t *testing.T) {
	var l failureLog
	for _, ph := range []string{schema.PhaseWarmup, schema.PhaseMeasure, schema.PhaseMeasure} {
		l.record(&schema.Record{Phase: ph, Status: schema.StatusError, Error: "client: reset"}, nil)
	}
	got := l.counts()
	if len(got) != 1 || got[0].Count != 3 || got[0].Warmup != 1 {
		t.Errorf("counts %+v, want one reason of 3 with 1 warmup", got)
	}
}
