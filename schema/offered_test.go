package schema

import (
	"strconv"
	"strings"
	"testing"
)

// Attack finding 3: a closed-loop capture's points relabelled (16 → 1,
// 4 → 64) validated, and decide then named the relabelled run's capacity
// 64. The records' peak of requests in flight bounds the declared
// concurrency from above, and benchseal's generator reaches at least half
// of it.
func TestRelabelledConcurrencyIsInvalid(t *testing.T) {
	// Four workers: requests k = 0..39 in ten waves of four.
	var recs []*Record
	for k := range 40 {
		s := int64(k/4) * 100
		recs = append(recs, &Record{ID: "c.r0.m" + strconv.Itoa(k), Point: "c", Phase: PhaseMeasure, Status: StatusOK,
			SentNS: s, EndNS: s + 100, ChunksNS: []int64{5, 10}, OutputTokens: 2})
	}
	for _, tc := range []struct {
		conc int
		want string
	}{
		{4, ""},
		{1, "4 measured requests in flight at once"},
		{64, "under half its declared concurrency 64"},
	} {
		m := &Manifest{Load: Load{Mode: ModeConcurrency, Repeats: 1, Generator: GeneratorBenchsealV1,
			Points: []Point{{Name: "c", Concurrency: tc.conc, Requests: 40}}}}
		got, _ := finishProblems(t, m, recs)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("concurrency %d: problems %q, want %q", tc.conc, got, tc.want)
		}
	}
}
