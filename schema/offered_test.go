package schema

import (
	"cmp"
	"math/rand/v2"
	"slices"
	"strconv"
	"strings"
	"testing"
)

// A closed-loop capture's points relabelled (16 → 1,
// 4 → 64) validated, and decide then named the relabelled run's capacity
// 64. The records' peak of requests in flight bounds the declared
// concurrency from above whatever made them (the bound once ran only
// under benchseal/v1); under benchseal/v1,
// whose workers start together and keep a request in flight each, the
// peak reaches min(C, records) (the old "half the
// concurrency" bound let 4 be relabelled 7).
func TestRelabelledConcurrencyIsInvalid(t *testing.T) {
	// Four workers: requests k = 0..39 in ten waves of four, 100 ms each
	// (longer than LateWorkerNS in all).
	var recs []*Record
	for k := range 40 {
		s := int64(k/4) * 100e6
		recs = append(recs, &Record{ID: "c.r0.m" + strconv.Itoa(k), Point: "c", Phase: PhaseMeasure, Status: StatusOK,
			SentNS: s, EndNS: s + 100e6, ChunksNS: []int64{5, 10}, OutputTokens: 2})
	}
	for _, tc := range []struct {
		gen  string
		conc int
		want string
	}{
		{GeneratorBenchsealV1, 4, ""},
		{GeneratorBenchsealV1, 1, "4 measured requests in flight at once"},
		{GeneratorBenchsealV1, 3, "4 measured requests in flight at once"},
		{GeneratorBenchsealV1, 5, "never has more than 4 measured requests in flight (sent_ns to end_ns), but its declared concurrency 5 means 5"},
		{GeneratorBenchsealV1, 8, "never has more than 4 measured requests in flight (sent_ns to end_ns), but its declared concurrency 8 means 8"},
		{GeneratorBenchsealV1, 64, "declared concurrency 64 means 40"},
		{"", 4, ""},
		{"", 1, "4 measured requests in flight at once (sent_ns to end_ns), more than its declared concurrency 1"},
		{"", 3, "4 measured requests in flight at once (sent_ns to end_ns), more than its declared concurrency 3"},
		// Without the generator only the upper bound holds (and
		// UnverifiedCompleteness says so).
		{"", 64, ""},
		// An import's concurrency is the tool's setting, re-derived
		// from its files, which some tools exceed.
		{"imported", 1, ""},
		// With a failed request (a 429 frees its worker at once) the
		// peak may fall one short of min(C, records) per failure, and
		// never below half of it: one failure admits C + 1, not 2C.
		{"benchseal/v1 one failed", 5, ""},
		{"benchseal/v1 one failed", 6, "under half its declared concurrency 6 or under 6 less its 1 failed request(s)"},
		{"benchseal/v1 one failed", 8, "under half its declared concurrency 8 or under 8 less its 1 failed request(s)"},
		{"benchseal/v1 one failed", 9, "never has more than 4 measured requests in flight (sent_ns to end_ns), under half its declared concurrency 9"},
	} {
		m := &Manifest{Load: Load{Mode: ModeConcurrency, Repeats: 1, Generator: tc.gen,
			Points: []Point{{Name: "c", Concurrency: tc.conc, Requests: 40}}}}
		if tc.gen == "imported" {
			m.Load.Generator, m.Evidence = "", EvidenceImported
		}
		rs := recs
		if tc.gen == "benchseal/v1 one failed" {
			m.Load.Generator = GeneratorBenchsealV1
			rs = append([]*Record(nil), recs...)
			r0 := *recs[39]
			r0.Status, r0.Error = StatusError, "server: HTTP 500"
			rs[39] = &r0
		} else if tc.gen != GeneratorBenchsealV1 {
			rs = nil
			for _, r := range recs {
				r2 := *r
				r2.ID = "x" + r.ID
				rs = append(rs, &r2)
			}
		}
		got, _ := finishProblems(t, m, rs)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("generator %q concurrency %d: problems %q, want %q", tc.gen, tc.conc, got, tc.want)
		}
	}
}

// Where the records cannot bound the offered load, verify says so:
// the declared concurrency of a
// run without benchseal/v1 is checked only from above, and not at all
// when sent_ns/end_ns are not both measured; a warmup boundary without the
// generator's run order is the publisher's word.
func TestUnverifiedOfferedLoadAndWarmup(t *testing.T) {
	has := func(m *Manifest, word string) bool {
		for _, u := range UnverifiedCompleteness(m) {
			if strings.HasPrefix(u, word) {
				return true
			}
		}
		return false
	}
	pts := []Point{{Name: "c", Concurrency: 4, Requests: 40}}
	v1 := &Manifest{Load: Load{Mode: ModeConcurrency, Generator: GeneratorBenchsealV1, Warmup: Warmup{Requests: 2}, Points: pts}}
	if !has(v1, "server counters: no server-metrics scrapes") {
		t.Errorf("closed loop without scrapes: %q", UnverifiedCompleteness(v1))
	}
	from := int64(0)
	v1.ServerMetrics = &ServerMetrics{Scrapes: []Scrape{{Point: "c", When: ScrapeBefore, File: "server-metrics/000001.prom", FromNS: &from}}}
	if u := UnverifiedCompleteness(v1); len(u) != 0 {
		t.Errorf("benchseal/v1 closed loop: %q, want nothing unverified", u)
	}
	v1.ServerMetrics.Scrapes[0].FromNS = nil
	if !has(v1, "scrape timing: no scrape states from_ns") {
		t.Errorf("scrapes without from_ns: %q", UnverifiedCompleteness(v1))
	}
	other := &Manifest{Load: Load{Mode: ModeConcurrency, Warmup: Warmup{Requests: 2}, Points: pts}}
	if !has(other, "offered load: the declared concurrency of each point is checked only as an upper bound") || !has(other, "warmup boundary:") {
		t.Errorf("no generator: %q", UnverifiedCompleteness(other))
	}
	if has(other, "repeats:") {
		t.Errorf("one point, one repeat: %q", UnverifiedCompleteness(other))
	}
	other.Load.Repeats = 2
	if !has(other, "repeats: without load.generator") {
		t.Errorf("two repeats, no generator: %q", UnverifiedCompleteness(other))
	}
	rm := &Manifest{Load: Load{Mode: ModeRate, Generator: GeneratorBenchsealV1, Points: []Point{{Name: "r", Rate: 20, Requests: 40}}}}
	if !has(rm, "open-loop timing: no server-metrics scrapes") {
		t.Errorf("open loop without scrapes: %q", UnverifiedCompleteness(rm))
	}
	rm.ServerMetrics = &ServerMetrics{Scrapes: []Scrape{{Point: "r", When: ScrapeBefore, File: "server-metrics/000001.prom", FromNS: &from}}}
	if u := UnverifiedCompleteness(rm); len(u) != 0 {
		t.Errorf("open loop with scrapes: %q, want nothing unverified", u)
	}
	other.Load.Warmup = Warmup{}
	if has(other, "warmup boundary:") {
		t.Errorf("no warmup declared: %q", UnverifiedCompleteness(other))
	}
	v1.Provenance = &Provenance{Fields: map[string]FieldOrigin{FieldSent: {Status: FieldAbsent, How: "placeholder 0"}}}
	if !has(v1, "offered load: sent_ns and end_ns are not both measured") {
		t.Errorf("sent_ns absent: %q", UnverifiedCompleteness(v1))
	}
	imp := &Manifest{Evidence: EvidenceImported, Load: Load{Mode: ModeConcurrency, Points: pts}}
	if !has(imp, "offered load: an import's declared concurrency is the tool's own setting") {
		t.Errorf("import: %q", UnverifiedCompleteness(imp))
	}
	rate := &Manifest{Load: Load{Mode: ModeRate, Points: []Point{{Name: "r", Rate: 5, Requests: 40}}}}
	if !has(rate, "offered load: without load.generator no schedule was regenerated") {
		t.Errorf("rate, no generator: %q", UnverifiedCompleteness(rm))
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
// which was not the one at fault.
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

// A rate-mode capture with max_outstanding 8
// relabelled to a cap of 2 validated: the peak in flight was checked in
// concurrency mode only. A rate point's declared cap (load.max_outstanding,
// or a smaller point concurrency) bounds it too; imports are exempt.
func TestRelabelledRateCapIsInvalid(t *testing.T) {
	// Four requests in flight at once, ten times.
	var recs []*Record
	for k := range 40 {
		s := int64(k/4) * 100
		recs = append(recs, &Record{ID: "r.r0.m" + strconv.Itoa(k), Point: "r", Phase: PhaseMeasure, Status: StatusOK,
			SentNS: s, EndNS: s + 100, ChunksNS: []int64{5, 10}, OutputTokens: 2})
	}
	for _, tc := range []struct {
		maxOut, conc int
		imported     bool
		want         string
	}{
		{0, 0, false, ""},
		{4, 0, false, ""},
		{8, 0, false, ""},
		{2, 0, false, "\"load.max_outstanding\": rate point \"r\" repeat 0 has 4 measured requests in flight at once (sent_ns to end_ns), more than its declared cap 2"},
		{8, 3, false, "\"load.points[0].concurrency\": rate point \"r\" repeat 0 has 4 measured requests in flight at once (sent_ns to end_ns), more than its declared cap 3"},
		{0, 3, false, "more than its declared cap 3"},
		{2, 0, true, ""},
	} {
		m := &Manifest{Load: Load{Mode: ModeRate, Repeats: 1, MaxOutstanding: tc.maxOut,
			Points: []Point{{Name: "r", Rate: 10, Concurrency: tc.conc, Requests: 40}}}}
		if tc.imported {
			m.Evidence = EvidenceImported
		}
		got, _ := finishProblems(t, m, recs)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("max_outstanding %d concurrency %d imported %v: problems %q, want %q", tc.maxOut, tc.conc, tc.imported, got, tc.want)
		}
	}
}

// A benchseal/v1 capture whose client.token_counts
// was relabelled "client-tokenizer" escaped the output_tokens bounds
// (max_tokens, one token per chunk), which hold only for the labels the
// load client writes. Under benchseal/v1 any other label is invalid.
func TestBenchsealTokenCountsLabel(t *testing.T) {
	for _, tc := range []struct {
		gen, label string
		bad        bool
	}{
		{GeneratorBenchsealV1, "server-usage", false},
		{GeneratorBenchsealV1, "chunk-count-estimate", false},
		{GeneratorBenchsealV1, "client-tokenizer", true},
		{GeneratorBenchsealV1, "tool-reported", true},
		{GeneratorBenchsealV1, "", true},
		{"", "client-tokenizer", false},
	} {
		m := readManifest(t)
		m.Load.Generator, m.Client.TokenCounts = tc.gen, tc.label
		bad := false
		for _, p := range ValidateManifest(m, "manifest.json") {
			if p.Field == "client.token_counts" {
				bad = true
			}
		}
		if bad != tc.bad {
			t.Errorf("generator %q token_counts %q: invalid %v, want %v", tc.gen, tc.label, bad, tc.bad)
		}
	}
}

// PeakInFlightSeq is the sweep over every send (+1) and end (−1) in time
// order, ends first at one instant, for any spans (an end before its
// send included).
func TestPeakInFlightIsTheSweep(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 6))
	for trial := range 2000 {
		spans := make([][2]int64, rng.IntN(40))
		for i := range spans {
			s := rng.Int64N(50)
			spans[i] = [2]int64{s, s + rng.Int64N(20) - 2}
		}
		for _, instant := range []bool{false, true} {
			type ev struct{ t, d int64 }
			var evs []ev
			for _, s := range spans {
				end := s[1]
				if instant && end == s[0] {
					end++
				}
				evs = append(evs, ev{s[0], 1}, ev{end, -1})
			}
			slices.SortFunc(evs, func(a, b ev) int {
				if a.t != b.t {
					return cmp.Compare(a.t, b.t)
				}
				return cmp.Compare(a.d, b.d)
			})
			var cur, want int64
			for _, e := range evs {
				cur += e.d
				want = max(want, cur)
			}
			if got := peakInFlight(slices.Values(spans), len(spans), instant); got != want {
				t.Fatalf("trial %d instant %v: peak %d, want %d (%v)", trial, instant, got, want, spans)
			}
		}
	}
}

// TestLateWorkerOfAShortCellIsNotRelabelling: an honest capture of c2 with
// 6 requests on a loaded machine failed with "never has more than 1
// measured requests in flight": its second worker started after the first
// had taken every request number. A cell whose sends all fall within
// LateWorkerNS is not held to reach its concurrency; one sending for
// longer is.
func TestLateWorkerOfAShortCellIsNotRelabelling(t *testing.T) {
	for _, tc := range []struct {
		gap  int64
		want string
	}{
		{5e6, ""},
		{100e6, "never has more than 1 measured requests in flight"},
	} {
		var recs []*Record
		for k := range 6 {
			s := int64(k) * tc.gap
			recs = append(recs, &Record{ID: "c2.r0.m" + strconv.Itoa(k), Point: "c2", Phase: PhaseMeasure, Status: StatusOK,
				SentNS: s, EndNS: s + tc.gap - 1000, ChunksNS: []int64{5, 10}, OutputTokens: 2})
		}
		m := &Manifest{Load: Load{Mode: ModeConcurrency, Repeats: 1, Generator: GeneratorBenchsealV1,
			Points: []Point{{Name: "c2", Concurrency: 2, Requests: 6}}}}
		got, _ := finishProblems(t, m, recs)
		if (tc.want == "") != (got == "") || !strings.Contains(got, tc.want) {
			t.Errorf("sends %d ns apart: problems %q, want %q", tc.gap, got, tc.want)
		}
	}
}
