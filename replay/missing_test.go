package replay

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// Leaving the slowest requests and the failures out of an incomplete run
// never raises SLO attainment: the missing requests count as not sent (the
// sent count stays truthful) and as misses, and the rates over a window
// they would have lengthened are null.
func TestRemovedWorkNeverRaisesAttainment(t *testing.T) {
	slo := &SLOSpec{TTFTNS: ptr(int64(8e7)), E2ENS: ptr(int64(4e8)), OneToken: "pass"}
	for seed := range uint64(20) {
		full := genRun(seed, 200)
		full.m.Load.Points[0].Requests = 200
		a0 := mustReplay(t, full, Options{SLO: slo}).Results[0].Scalars["slo_attainment"].Rat()

		var ok []*schema.Record
		for _, r := range full.recs {
			if r.Status == schema.StatusOK {
				ok = append(ok, r)
			}
		}
		slices.SortFunc(ok, func(a, b *schema.Record) int {
			return int(b.ChunksNS[len(b.ChunksNS)-1] - a.ChunksNS[len(a.ChunksNS)-1])
		})
		drop := map[*schema.Record]bool{}
		for _, r := range ok[:len(ok)/5] {
			drop[r] = true
		}
		cut := &memRun{m: manifest(schema.Point{Name: "p", Requests: 200}), recs: nil}
		cut.m.Incomplete, cut.m.IncompleteReason = true, "interrupted"
		for _, r := range full.recs {
			if r.Status == schema.StatusOK && !drop[r] {
				cut.recs = append(cut.recs, r)
			}
		}
		res := mustReplay(t, cut, Options{SLO: slo})
		p := res.Results[0]
		missing := int64(200 - len(cut.recs))
		if c := p.Counts; c.Sent != int64(len(cut.recs)) || c.NotSent != missing || c.Declared() != 200 || c.Cancelled != 0 ||
			res.Incomplete == nil || res.Incomplete.Missing != missing {
			t.Fatalf("seed %d: counts %+v, incomplete %+v, want sent %d, not sent %d, none cancelled", seed, c, res.Incomplete, len(cut.recs), missing)
		}
		if a1 := p.Scalars["slo_attainment"].Rat(); a1.Cmp(a0) > 0 {
			t.Fatalf("seed %d: attainment rose from %v to %v after removing work", seed, a0, a1)
		}
		for _, s := range []string{"goodput", "request_throughput", "output_token_throughput"} {
			if !p.Scalars[s].IsNull() {
				t.Errorf("seed %d: %s = %v, want null in a point missing requests", seed, s, p.Scalars[s])
			}
		}
		if !strings.Contains(res.Incomplete.Line(), "counted as not sent") || !slices.ContainsFunc(res.Notes, func(n string) bool { return strings.Contains(n, "have no record") }) {
			t.Errorf("incomplete line %q, notes %q", res.Incomplete.Line(), res.Notes)
		}
	}
}

// A manifest declaring more repeats than the load limits allow is bad
// input (ErrInvalid, the field named), never a group allocated per
// declared repeat (out of memory at 3·10^8 repeats).
func TestReplayRejectsLoadBeyondLimits(t *testing.T) {
	run := genRun(1, 10)
	run.m.Incomplete, run.m.IncompleteReason = true, "x"
	run.m.Load.Repeats = 300_000_000
	run.m.Load.Points[0].Requests = 10
	_, err := Replay(t.Context(), run, Options{})
	if !errors.Is(err, schema.ErrInvalid) || !strings.Contains(err.Error(), "load.repeats") {
		t.Fatalf("got %v", err)
	}
}

// The headline went up: nulling one repeat's
// throughputs (an incomplete repeat) made the across-repeat median that of
// the better repeats. A summary over repeats some of which are undefined,
// or missing, is null with the reason.
func TestSummaryOverPartlyUndefinedRepeatsIsNull(t *testing.T) {
	s := SummarizeValues([]Value{Null, Int(10), Int(12)}, CIConfidence)
	if !s.Median.IsNull() || len(s.Warnings) == 0 || !strings.HasPrefix(s.Warnings[0], PartialRepeatsWarning) {
		t.Fatalf("%+v", s)
	}
	if s := SummarizeValues([]Value{Int(10), Int(12)}, CIConfidence); s.Median.IsNull() {
		t.Fatalf("defined repeats: %+v", s)
	}
	prs := []*PointResult{{Point: "p", Repeat: 0, Scalars: map[string]Value{"request_throughput": Int(5)}}}
	for _, ps := range summarise(prs, 2) {
		if m := ps.Metrics["request_throughput"]; !m.Median.IsNull() {
			t.Fatalf("one of two repeats run: median %v", m.Median)
		}
	}
}
