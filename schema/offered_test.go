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

// A closed-loop phase bounded by its duration has no request count, so
// dropping its last requests (the slow tail) kept every other check happy.
// capture's workers each send until the deadline, so each one's last
// request ends after it: a phase whose records stop short is missing work,
// unless the run is marked incomplete (then it counts as the phase the
// interruption stopped in).
func TestDurationPhaseCutShortIsMissingWork(t *testing.T) {
	const sec = int64(1e9)
	// Four workers, 10 s declared: waves of four 1-second requests, the
	// last wave sent at 9.5 s and ending at 10.5 s.
	build := func(waves int) []*Record {
		var recs []*Record
		for k := range 4 * waves {
			s := int64(k/4) * sec
			if k/4 == 9 {
				s = 9*sec + sec/2
			}
			recs = append(recs, &Record{ID: "c.r0.m" + strconv.Itoa(k), Point: "c", Phase: PhaseMeasure, Status: StatusOK,
				SentNS: s, EndNS: s + sec, ChunksNS: []int64{5, 10}, OutputTokens: 2})
		}
		return recs
	}
	for _, tc := range []struct {
		name       string
		waves      int
		incomplete bool
		want       string
	}{
		{"ran its duration", 10, false, ""},
		{"last three waves dropped", 7, false, "cut short"},
		{"last wave dropped", 9, false, "only 0 request(s) end after"},
		{"half dropped", 5, false, "only 0 request(s) end after"},
		{"cut short but marked incomplete", 5, true, ""},
	} {
		m := &Manifest{Load: Load{Mode: ModeConcurrency, Repeats: 1, Generator: GeneratorBenchsealV1,
			Points: []Point{{Name: "c", Concurrency: 4, Duration: Duration(10 * sec)}}}}
		if tc.incomplete {
			m.Incomplete, m.IncompleteReason = true, "interrupted (SIGINT)"
		}
		got, _ := finishProblems(t, m, build(tc.waves))
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("%s: problems %q, want %q", tc.name, got, tc.want)
		}
	}
}

// A problem Finish finds across the records of several files (a bundle's
// shards) names no single file: it used to name the shard read last,
// which was not the one at fault (attack finding).
func TestFinishProblemsAcrossShardsNameNoShard(t *testing.T) {
	m := &Manifest{Load: Load{Mode: ModeConcurrency, Repeats: 1,
		Points: []Point{{Name: "a", Concurrency: 1, Requests: 2}, {Name: "b", Concurrency: 1, Requests: 2}}}}
	for _, tc := range []struct {
		files []string
		want  string
	}{
		{[]string{RecordsFile, RecordsFile}, RecordsFile + ": "},
		{[]string{"records/a/0.jsonl.zst", "records/b/0.jsonl.zst"}, "records: "},
	} {
		c := NewRecordChecker(m)
		for i, f := range tc.files {
			// Point b holds one record of the two declared.
			p := []string{"a", "b"}[i]
			for k := range 2 - i {
				r := &Record{ID: p + strconv.Itoa(k), Point: p, Phase: PhaseMeasure, Status: StatusOK, SentNS: 1, EndNS: 2, ChunksNS: []int64{1}, OutputTokens: 1}
				if ps := c.Check(f, k+1, r); len(ps) > 0 {
					t.Fatal(ps)
				}
			}
		}
		ps := c.Finish()
		if len(ps) == 0 || !strings.HasPrefix(ps[0].String(), tc.want) {
			t.Errorf("files %v: Finish problems %v, want them to start %q", tc.files, ps, tc.want)
		}
	}
}
