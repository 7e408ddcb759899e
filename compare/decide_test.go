package compare

import (
	"testing"

	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

// Declared requests an interrupted run never sent are failures in the
// decision table, but not cancelled ones: a cancelled request was sent.
func TestDecideCountsNotSentApart(t *testing.T) {
	m := &schema.Manifest{Load: schema.Load{Mode: schema.ModeConcurrency, Repeats: 2,
		Points: []schema.Point{{Name: "c4", Concurrency: 4, Requests: 10}}}}
	res := &replay.Result{}
	for r, c := range []replay.Counts{
		{Sent: 10, OK: 7, Error: 1, Timeout: 1, Cancelled: 1},
		{Sent: 6, OK: 4, Cancelled: 1, Rejected: 1, NotSent: 4},
	} {
		res.Results = append(res.Results, &replay.PointResult{Point: "c4", Repeat: r, Counts: c, Scalars: map[string]replay.Value{}})
	}
	row := decideRow(&Input{Name: "a", Manifest: m, Result: res}, 0, DecideOptions{Objective: MaxGoodput})
	want := map[string]int64{"error": 1, "timeout": 1, "cancelled": 2, "rejected": 1, "not_sent": 4}
	for k, v := range want {
		if row.Errors[k] != v {
			t.Errorf("errors[%s] = %d, want %d (all: %v)", k, row.Errors[k], v, row.Errors)
		}
	}
	if row.Sent != 20 {
		t.Errorf("declared = %d, want 20", row.Sent)
	}
}
