package schema

import (
	"strings"
	"testing"
)

// A publisher's declared count and request numbers bound nothing the
// checker does: a rate run declaring 10^12 requests, with a request
// numbered near it, is rejected at once (the regenerated schedule is
// bounded by the records), and the problems say what is missing.
func TestCompletenessIsBoundedByTheRecords(t *testing.T) {
	seed := int64(1)
	m := &Manifest{Client: Client{Seed: &seed}, Load: Load{Mode: ModeRate, Repeats: 1, Generator: GeneratorBenchsealV1,
		Points: []Point{{Name: "p", Rate: 10, Arrival: ArrivalConstant, Requests: 1_000_000_000_000}}}}
	c := NewRecordChecker(m)
	for i, k := range []string{"0", "1", "999999999999"} {
		s := int64(i) * 100_000_000
		rec := &Record{ID: "p.r0.m" + k, Point: "p", Phase: PhaseMeasure, Status: StatusOK, ScheduledNS: &s, SentNS: s, EndNS: s + 10,
			ChunksNS: []int64{5}, OutputTokens: 1}
		if ps := c.Check(RecordsFile, i+1, rec); len(ps) > 0 {
			t.Fatalf("record %s: %v", k, ps)
		}
	}
	var all []string
	for _, p := range c.Finish() {
		all = append(all, p.String())
	}
	got := strings.Join(all, "\n")
	for _, want := range []string{"999999999997 request(s) are missing", "--set incomplete=true --set incomplete_reason=", "beyond the regenerated schedule", "request numbers run to 999999999999"} {
		if !strings.Contains(got, want) {
			t.Errorf("problems do not say %q:\n%s", want, got)
		}
	}
}
