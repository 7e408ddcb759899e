package schema

import (
	"strings"
	"testing"
)

// In a closed-loop benchseal/v1 capture the publisher
// swapped warmup records with the slowest measured ones (ids, phase and
// item exchanged, counts unchanged). capture runs warmup strictly before
// measure, so a "warmup" request sent after a measured one is invalid.
func TestPhasesOfAGeneratedRunDoNotOverlap(t *testing.T) {
	m := func() *Manifest {
		return &Manifest{Load: Load{Mode: ModeConcurrency, Repeats: 1, Generator: GeneratorBenchsealV1,
			Warmup: Warmup{Requests: 1},
			Points: []Point{{Name: "a", Concurrency: 1, Requests: 2}, {Name: "b", Concurrency: 1, Requests: 2}}}}
	}
	rec := func(id, point, phase string, sent int64) *Record {
		d := int64(90)
		if point == "b" {
			d = 80 // not a copy of point a
		}
		return &Record{ID: id, Point: point, Phase: phase, Status: StatusOK, SentNS: sent, EndNS: sent + d,
			ChunksNS: []int64{50}, OutputTokens: 1}
	}
	// honest: a warmup, a measure, b warmup, b measure, 100 ns apart.
	honest := func() []*Record {
		return []*Record{
			rec("a.r0.w0", "a", PhaseWarmup, 0),
			rec("a.r0.m0", "a", PhaseMeasure, 100), rec("a.r0.m1", "a", PhaseMeasure, 200),
			rec("b.r0.w0", "b", PhaseWarmup, 300),
			rec("b.r0.m0", "b", PhaseMeasure, 400), rec("b.r0.m1", "b", PhaseMeasure, 500),
		}
	}
	for _, tc := range []struct {
		name string
		edit func([]*Record)
		want string
	}{
		{"honest", func([]*Record) {}, ""},
		{"phases touching (end = next send)", func(rs []*Record) { rs[0].EndNS = 100 }, ""},
		{"warmup swapped with the last measured request", func(rs []*Record) {
			rs[0].SentNS, rs[2].SentNS = rs[2].SentNS, rs[0].SentNS
			rs[0].EndNS, rs[2].EndNS = rs[0].SentNS+90, rs[2].SentNS+90
		}, `point "a" repeat 0 (measure): request "a.r0.m1" was sent at 0 ns, before request "a.r0.w0" of point "a" repeat 0 (warmup) ended (end_ns 290)`},
		{"warmup ends after the first measured send", func(rs []*Record) { rs[0].EndNS = 101 },
			`request "a.r0.m0" was sent at 100 ns, before request "a.r0.w0" of point "a" repeat 0 (warmup) ended (end_ns 101)`},
		{"next point's warmup during this point's measure", func(rs []*Record) { rs[3].SentNS, rs[3].EndNS = 150, 240 },
			`point "b" repeat 0 (warmup): request "b.r0.w0" was sent at 150 ns, before request "a.r0.m1" of point "a" repeat 0 (measure) ended (end_ns 290)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rs := honest()
			tc.edit(rs)
			got, _ := finishProblems(t, m(), rs)
			if tc.want == "" && got != "" {
				t.Fatalf("want valid, got:\n%s", got)
			}
			if !strings.Contains(got, tc.want) {
				t.Fatalf("problems do not say %q:\n%s", tc.want, got)
			}
		})
	}
}
