package schema

import (
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"
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

// allocated returns the bytes f allocates.
func allocated(f func()) uint64 {
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	f()
	runtime.ReadMemStats(&b)
	return b.TotalAlloc - a.TotalAlloc
}

// A shard run's schedule check regenerates only what its records need: a
// run of shard 0 of 4096 at 10^9 requests/s for 1000 h, holding one record
// numbered 4096·10^9, costs a few KiB, not the ~4·10^8 offsets that
// shard.count × the in-flight allowance once asked for.
func TestShardRunScheduleIsBoundedByItsRecords(t *testing.T) {
	seed := int64(1)
	m := &Manifest{Client: Client{Seed: &seed}, Shard: &Shard{Index: 0, Count: MaxShards},
		Load: Load{Mode: ModeRate, Repeats: 1, Generator: GeneratorBenchsealV1,
			Points: []Point{{Name: "p", Rate: 1e9, Arrival: ArrivalPoisson, Duration: Duration(1000 * time.Hour)}}}}
	s, sh := int64(0), int64(0)
	rec := &Record{ID: "p.r0.m4096000000000", Point: "p", Phase: PhaseMeasure, Status: StatusOK, ScheduledNS: &s, SentNS: s,
		EndNS: s + 10, ChunksNS: []int64{5}, OutputTokens: 1, Shard: &sh}
	var got string
	n := allocated(func() { got, _ = finishProblems(t, m, []*Record{rec}) })
	if n > 8<<20 {
		t.Errorf("checking one record allocated %d MiB", n>>20)
	}
	if !strings.Contains(got, "request(s) are missing") {
		t.Errorf("problems do not name the missing requests:\n%s", got)
	}
}

// An incomplete run regenerates past its records only for the phase an
// interruption stopped in, once the run order shows which one that is:
// 64 duration-bounded rate points holding one record each (all but the
// first cut short, so work was removed) cost no 2^22 offsets apiece.
func TestIncompleteRunRegeneratesOnlyTheStoppedPhase(t *testing.T) {
	seed := int64(1)
	var points []Point
	var recs []*Record
	for i := range 64 {
		name := "p" + strconv.Itoa(i)
		points = append(points, Point{Name: name, Rate: 1e6, Arrival: ArrivalPoisson, Duration: Duration(time.Hour)})
		s := int64(i) * int64(2*time.Hour)
		recs = append(recs, &Record{ID: name + ".r0.m0", Point: name, Phase: PhaseMeasure, Status: StatusOK, ScheduledNS: &s,
			SentNS: s, EndNS: s + 10, ChunksNS: []int64{5}, OutputTokens: 1})
	}
	m := &Manifest{Incomplete: true, Client: Client{Seed: &seed},
		Load: Load{Mode: ModeRate, Repeats: 1, Generator: GeneratorBenchsealV1, Points: points}}
	var got string
	n := allocated(func() { got, _ = finishProblems(t, m, recs) })
	if n > 64<<20 {
		t.Errorf("checking 64 records allocated %d MiB", n>>20)
	}
	if !strings.Contains(got, "this is work removed") {
		t.Errorf("problems do not say work was removed:\n%s", got)
	}
	// The one phase an interruption can stop in still counts its unsent
	// requests (up to the regeneration bound).
	_, sum := finishProblems(t, &Manifest{Incomplete: true, Client: Client{Seed: &seed},
		Load: Load{Mode: ModeRate, Repeats: 1, Generator: GeneratorBenchsealV1, Points: points[:1]}}, recs[:1])
	if sum.Missing != maxMissingRegenerated {
		t.Errorf("missing = %d, want %d", sum.Missing, maxMissingRegenerated)
	}
}
