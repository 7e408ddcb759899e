package schema

import (
	"strconv"
	"strings"
	"testing"
)

// genRecords returns measured records k of point p, repeat 0, under
// GeneratorBenchsealV1: scheduled at k × 100 ms when rate is set, else
// sent by two workers in waves 100 ms apart; point "a" from 0, "b" 100 s
// later and so on, as capture runs them one after another.
func genRecords(p string, rate bool, ks ...int) []*Record {
	var out []*Record
	for _, k := range ks {
		s := int64(p[0]-'a')*100_000_000_000 + int64(k)*100_000_000
		if !rate {
			s = int64(p[0]-'a')*100_000_000_000 + int64(k/2)*100_000_000 + int64(k%2)
		}
		r := &Record{ID: p + ".r0.m" + strconv.Itoa(k), Point: p, Phase: PhaseMeasure, Status: StatusOK, SentNS: s, EndNS: s + 10,
			ChunksNS: []int64{5}, OutputTokens: 1}
		if rate {
			r.ScheduledNS = &s
		}
		out = append(out, r)
	}
	return out
}

func finishProblems(t *testing.T, m *Manifest, recs []*Record) (string, RunSummary) {
	t.Helper()
	c := NewRecordChecker(m)
	for i, r := range recs {
		if ps := c.Check(RecordsFile, i+1, r); len(ps) > 0 {
			t.Fatalf("record %s: %v", r.ID, ps)
		}
	}
	var all []string
	for _, p := range c.Finish() {
		all = append(all, p.String())
	}
	return strings.Join(all, "\n"), c.Summary()
}

// Under incomplete: true a publisher deleted requests
// from the middle of a phase, or from a phase whose later phases are
// complete. An interruption leaves only complete phases, then one phase
// holding a contiguous prefix, then nothing; anything else is invalid.
func TestIncompleteRunHoldsOnlyWhatAnInterruptionLeaves(t *testing.T) {
	seed := int64(7)
	rateRun := func(points ...Point) *Manifest {
		return &Manifest{Incomplete: true, Client: Client{Seed: &seed}, Load: Load{Mode: ModeRate, Repeats: 1, Generator: GeneratorBenchsealV1, Points: points}}
	}
	closed := func(points ...Point) *Manifest {
		return &Manifest{Incomplete: true, Load: Load{Mode: ModeConcurrency, Repeats: 1, Generator: GeneratorBenchsealV1, Points: points}}
	}
	ten := func(ks ...int) []int { return ks }
	for _, tc := range []struct {
		name    string
		m       *Manifest
		recs    []*Record
		want    string // "" = valid
		missing int64
	}{
		{"hole in a duration-bounded rate phase", rateRun(Point{Name: "a", Rate: 10, Arrival: ArrivalConstant, Duration: Duration(1e9)}),
			genRecords("a", true, ten(0, 1, 2, 4, 5, 6, 7, 8, 9)...), "request numbers run to 9 (10 requests, counting from 0) but only 9 records exist: 1 request(s) are missing", 0},
		{"hole in a counted phase", closed(Point{Name: "a", Concurrency: 2, Requests: 10}),
			genRecords("a", false, ten(0, 1, 2, 3, 5, 6)...), "request numbers run to 6", 0},
		{"short phase before a complete one", closed(Point{Name: "a", Concurrency: 2, Requests: 5}, Point{Name: "b", Concurrency: 2, Requests: 5}),
			append(genRecords("a", false, 0, 1, 2, 3), genRecords("b", false, 0, 1, 2, 3, 4)...), `point "b" repeat 0 (measure) has records, but point "a" repeat 0 (measure) before it`, 0},
		{"short rate phase before a later one", rateRun(Point{Name: "a", Rate: 10, Arrival: ArrivalConstant, Duration: Duration(1e9)}, Point{Name: "b", Rate: 10, Arrival: ArrivalConstant, Requests: 2}),
			append(genRecords("a", true, 0, 1, 2, 3, 4, 5, 6, 7, 8), genRecords("b", true, 0, 1)...), `point "b" repeat 0 (measure) has records, but point "a" repeat 0 (measure)`, 0},
		{"interrupted in the second point", closed(Point{Name: "a", Concurrency: 2, Requests: 5}, Point{Name: "b", Concurrency: 2, Requests: 5}),
			append(genRecords("a", false, 0, 1, 2, 3, 4), genRecords("b", false, 0, 1, 2)...), "", 2},
		{"interrupted in a duration-bounded rate phase", rateRun(Point{Name: "a", Rate: 10, Arrival: ArrivalConstant, Duration: Duration(1e9)}),
			genRecords("a", true, 0, 1, 2, 3), "", 6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, sum := finishProblems(t, tc.m, tc.recs)
			if tc.want == "" {
				if got != "" || sum.Missing != tc.missing {
					t.Fatalf("want valid with %d missing, got %d missing:\n%s", tc.missing, sum.Missing, got)
				}
				return
			}
			if !strings.Contains(got, tc.want) {
				t.Fatalf("problems do not say %q:\n%s", tc.want, got)
			}
		})
	}
}
