package schema

import (
	"math/rand/v2"
	"runtime"
	"strconv"
	"strings"
	"testing"
)

// Ids remembered by their number give the same duplicate problems (with
// the first line) as ids remembered by hash: in order, out of order,
// repeated, numbers far past the records, leading zeros, prefixes that
// are numbers' prefixes, no number at all.
func TestSequentialIDsFindTheSameDuplicates(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	m := &Manifest{Load: Load{Mode: ModeConcurrency, Repeats: 2, Generator: GeneratorBenchsealV1, Warmup: Warmup{Requests: 1},
		Points: []Point{{Name: "a", Concurrency: 1}, {Name: "a.r0", Concurrency: 1}}}}
	ids := func() string {
		k := strconv.Itoa(rng.IntN(300))
		switch rng.IntN(12) {
		case 0:
			k = strconv.Itoa(1_000_000_000_000 + rng.IntN(3))
		case 1:
			k = "0" + k
		case 2, 3:
			k = strconv.Itoa(500_000 + rng.IntN(300)) // numbered from far up
		}
		pt := []string{"a", "a.r0", "b", "c1", ""}[rng.IntN(5)]
		id := pt + ".r" + strconv.Itoa(rng.IntN(3)) + "." + string("mwx"[rng.IntN(3)]) + k
		switch rng.IntN(10) {
		case 0:
			return id + "x"
		case 1:
			return k
		}
		return id
	}
	for trial := range 10 {
		byK, byHash := NewRecordChecker(m), NewRecordChecker(m)
		byHash.seq.slot = map[seqKey]int{}
		for range maxSeqPrefixes {
			byHash.seq.slot[seqKey{"", -len(byHash.seq.slot) - 1}] = 0 // full: every id hashed
		}
		for line := 1; line <= 5000; line++ {
			rec := &Record{ID: ids(), Point: "a", Phase: PhaseMeasure, Status: StatusOK}
			var got, want []string
			for _, p := range byK.Check(RecordsFile, line, rec) {
				if p.Field == "id" && strings.HasPrefix(p.Message, "duplicate") {
					got = append(got, p.Message)
				}
			}
			for _, p := range byHash.Check(RecordsFile, line, rec) {
				if p.Field == "id" && strings.HasPrefix(p.Message, "duplicate") {
					want = append(want, p.Message)
				}
			}
			if strings.Join(got, "|") != strings.Join(want, "|") {
				t.Fatalf("trial %d line %d id %q: %v, want %v", trial, line, rec.ID, got, want)
			}
		}
	}
}

// Ids in runs (numbered one after the other on lines one after the
// other, as a writer in request-number order leaves them, several
// prefixes in blocks, files restarting the lines) give the same duplicate
// problems as ids remembered by hash: a repeat of any earlier id names
// its first line, and a number between runs or below them moves the
// slice to lines without losing one.
func TestSequentialIDsInRunsFindTheSameDuplicates(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	for trial := range 20 {
		byK, byHash := NewRecordChecker(nil), NewRecordChecker(nil)
		byHash.seq.slot = map[seqKey]int{}
		for range maxSeqPrefixes {
			byHash.seq.slot[seqKey{"", -len(byHash.seq.slot) - 1}] = 0
		}
		next := map[string]int{}
		var seen []string
		line := 1
		for range 4000 {
			var id string
			switch r := rng.IntN(200); {
			case r == 0 && len(seen) > 0:
				id = seen[rng.IntN(len(seen))] // a duplicate, near or far
			case r == 1 && trial%2 == 1:
				id = "p" + strconv.Itoa(rng.IntN(3)) + "-" + strconv.Itoa(1_000_000+rng.IntN(4000)) // out of order
			case r == 2:
				line = 1 // the next file
			default:
				p := "p" + strconv.Itoa(line/500%3) + "-"
				id = p + strconv.Itoa(1_000_000+next[p])
				next[p]++
			}
			if id == "" {
				continue
			}
			seen = append(seen, id)
			rec := &Record{ID: id, Point: "a", Phase: PhaseMeasure, Status: StatusOK}
			got, want := dupMessages(byK.Check(RecordsFile, line, rec)), dupMessages(byHash.Check(RecordsFile, line, rec))
			if got != want {
				t.Fatalf("trial %d line %d id %q: %v, want %v", trial, line, id, got, want)
			}
			line++
		}
	}
}

// dupMessages joins the duplicate-id problems among ps.
func dupMessages(ps []Problem) string {
	var out []string
	for _, p := range ps {
		if p.Field == "id" && strings.HasPrefix(p.Message, "duplicate") {
			out = append(out, p.Message)
		}
	}
	return strings.Join(out, "|")
}

// Ids in runs cost the checker a few bytes a run, not a few bytes a
// record.
func TestSequentialIDsInRunsCostLessThanABit(t *testing.T) {
	g := newSeqIDs()
	for _, p := range []string{"c4-r0-", "c4-r1-"} {
		s, _, _ := g.slice(p + "0000000")
		for i := range 100_000 {
			if _, dup := g.see(s, int64(i), 1+s*100_000+i); dup {
				t.Fatalf("%s%d: a duplicate", p, i)
			}
		}
		if g.dense[s] || len(g.runs[s]) != 1 {
			t.Errorf("%s: dense %v, %d runs; want one run", p, g.dense[s], len(g.runs[s]))
		}
	}
	if first, dup := g.see(1, 5, 7); !dup || first != 100_006 {
		t.Errorf("a repeat of c4-r1-5: first line %d (dup %v), want 100006", first, dup)
	}
}

// A number far past the records allocates no slot for the numbers
// before it.
func TestSequentialIDsAreBoundedByTheRecords(t *testing.T) {
	g := newSeqIDs()
	g.slice("r0")
	for i := range 100 {
		g.see(0, int64(i)*1_000_000_000, i+1)
	}
	if n := len(g.lines[0]); n > 2*100+seqIDSlack {
		t.Errorf("100 ids spread to 10^11 hold %d slots", n)
	}
	if _, dup := g.see(0, 99_000_000_000, 500); !dup {
		t.Error("a repeated far request number is not a duplicate")
	}
}

// Numbered ids cost the checker a few bytes a record, not a hashed id in
// a map.
func TestSequentialIDsCostFewBytes(t *testing.T) {
	const n = 200_000
	recs := make([]*Record, n)
	for i := range recs {
		recs[i] = &Record{ID: "c4-m-" + strconv.Itoa(1_000_000+i), Point: "c4", Phase: PhaseMeasure, Status: StatusOK}
	}
	c := NewRecordChecker(nil)
	var a, b runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&a)
	for i, r := range recs {
		c.Check(RecordsFile, i+1, r)
	}
	runtime.GC()
	runtime.ReadMemStats(&b)
	runtime.KeepAlive(c)
	runtime.KeepAlive(recs)
	per := (int64(b.HeapAlloc) - int64(a.HeapAlloc)) / n
	if per > 16 {
		t.Errorf("the checker holds %d bytes a record after %d numbered ids", per, n)
	}
}
