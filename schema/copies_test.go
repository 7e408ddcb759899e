package schema

import (
	"strconv"
	"strings"
	"testing"
)

// Repeat 1 replaced by repeat 0's records shifted in
// time (ids and repeat renamed, the order shuffled) was valid, so the
// across-repeat medians took the good repeat twice with zero spread.
func TestRepeatCopiedFromAnotherIsInvalid(t *testing.T) {
	m := &Manifest{Load: Load{Mode: ModeConcurrency, Repeats: 3, Generator: GeneratorBenchsealV1, Points: []Point{{Name: "a", Concurrency: 1, Requests: 4}}}}
	cell := func(repeat int, start int64, jitter int64) []*Record {
		var rs []*Record
		for k := range 4 {
			s := start + int64(k)*1_000_000
			rs = append(rs, &Record{ID: "a.r" + strconv.Itoa(repeat) + ".m" + strconv.Itoa(k), Point: "a", Repeat: repeat, Phase: PhaseMeasure,
				Status: StatusOK, SentNS: s, EndNS: s + 900_000 + int64(k)*1000 + jitter, ChunksNS: []int64{100_000 + int64(k), 800_000},
				InputTokens: 10, OutputTokens: 2})
		}
		return rs
	}
	reversed := func(rs []*Record) []*Record {
		out := make([]*Record, len(rs))
		for i, r := range rs {
			out[len(rs)-1-i] = r
		}
		return out
	}
	for _, tc := range []struct {
		name string
		recs []*Record
		want string
	}{
		{"three measurements", append(append(cell(0, 0, 0), cell(1, 10e6, 7)...), cell(2, 20e6, 13)...), ""},
		{"repeat 2 a shifted, reordered copy of repeat 0", append(append(cell(0, 0, 0), cell(1, 10e6, 7)...), reversed(cell(2, 20e6, 0))...),
			`point "a" repeat 2 has, request for request, the same end_ns − sent_ns, chunk offsets, token counts and statuses as point "a" repeat 0 (4 measured requests with chunks)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, _ := finishProblems(t, m, tc.recs)
			if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
				t.Fatalf("problems %q, want %q", got, tc.want)
			}
		})
	}
	// Requests without chunks (rejected at once) carry no timing: cells
	// holding only those are alike without being copies.
	var rej []*Record
	for r := range 3 {
		for k := range 4 {
			rej = append(rej, &Record{ID: "a.r" + strconv.Itoa(r) + ".m" + strconv.Itoa(k), Point: "a", Repeat: r, Phase: PhaseMeasure,
				Status: StatusRejected, SentNS: int64(r*10 + k), EndNS: int64(r*10 + k)})
		}
	}
	if got, _ := finishProblems(t, m, rej); got != "" {
		t.Fatalf("rejected-only repeats: %s", got)
	}
}
