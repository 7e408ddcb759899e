package replay

import (
	"context"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/synth"
)

// withSpillAt sets spillAt for one test.
func withSpillAt(t *testing.T, n int64) {
	t.Helper()
	old := spillAt
	spillAt = n
	t.Cleanup(func() { spillAt = old })
}

// TestSpilledRanksMatchSort: a distribution that spilled in the first
// pass and kept only its planned buckets in the second gives every
// percentile of a sort of all its samples, for every value set (negatives,
// values ≥ 2³², duplicates, overflowing sums).
func TestSpilledRanksMatchSort(t *testing.T) {
	withSpillAt(t, 100)
	for name, xs := range sampleSets() {
		first := intSamples{mayspill: new(bool)}
		for i := 0; i < len(xs); {
			j := min(len(xs), i+1+i%37)
			first.addAll(xs[i:j])
			i = j
		}
		n := int64(len(xs))
		if n > spillAt && first.sp == nil {
			t.Fatalf("%s: %d samples did not spill", name, n)
		}
		if first.sp == nil {
			continue
		}
		if first.blocks != nil || first.sp.n != n {
			t.Fatalf("%s: the first pass holds its samples or counted %d of %d", name, first.sp.n, n)
		}
		second := first.planSamples()
		second.addAll(xs)
		if err := second.checkSpill(); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		kept := 0
		for _, k := range second.sp.kept {
			kept += len(k)
		}
		sorted := slices.Sorted(slices.Values(xs))
		rs := intDistRanks(n)
		for i, got := range second.ranks(rs) {
			if want := sorted[rs[i]-1]; got != want {
				t.Fatalf("%s: rank %d = %d, want %d", name, rs[i], got, want)
			}
		}
		var plain intSamples
		plain.addAll(xs)
		if d1, d2 := intDist(&plain), intDist(&second); !reflect.DeepEqual(d1, d2) {
			t.Fatalf("%s: two-pass Dist %+v, one-pass %+v", name, d2, d1)
		}
		t.Logf("%s: %d samples, %d kept in the second pass", name, n, kept)
	}
}

func TestSpilledRatRanksMatchSort(t *testing.T) {
	withSpillAt(t, 100)
	rng := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{101, 1000, 100000} {
		var fs []frac
		for range n {
			den := 1 + rng.Int64N(60)
			if rng.IntN(10) == 0 {
				den = smallDen + rng.Int64N(5)
			}
			num := rng.Int64N(1e9)
			switch rng.IntN(10) {
			case 0:
				num = -num
			case 1:
				num = 7 * den
			}
			fs = append(fs, frac{num, den})
		}
		first := ratSamples{mayspill: new(bool)}
		var plain ratSamples
		for _, f := range fs {
			first.add(f.num, f.den)
			plain.add(f.num, f.den)
		}
		if first.sp == nil || first.xs != nil {
			t.Fatalf("n=%d: did not spill", n)
		}
		second := first.planSamples()
		for _, f := range fs {
			second.add(f.num, f.den)
		}
		if err := second.checkSpill(); err != nil {
			t.Fatal(err)
		}
		if d1, d2 := ratDist(&plain), ratDist(&second); !reflect.DeepEqual(d1, d2) {
			t.Fatalf("n=%d: two-pass Dist %+v, one-pass %+v", n, d2, d1)
		}
	}
}

// TestCoarseBucketIsMonotone: the buckets never decrease as values grow,
// at every power of two and its neighbours, both signs.
func TestCoarseBucketIsMonotone(t *testing.T) {
	var xs []int64
	for e := range 63 {
		for _, d := range []int64{-1, 0, 1} {
			v := int64(1)<<e + d
			xs = append(xs, v, -v)
		}
	}
	xs = append(xs, 0, 255, 256, 257, -256, 1<<63-1, -1<<63)
	slices.Sort(xs)
	for i := 1; i < len(xs); i++ {
		a, b := coarseBucket(xs[i-1]), coarseBucket(xs[i])
		if a > b || a < 0 || b >= coarseBuckets {
			t.Fatalf("bucket(%d) = %d, bucket(%d) = %d", xs[i-1], a, xs[i], b)
		}
	}
}

// TestTwoPassReplayEqualsOnePass: a replay whose distributions spill
// (read twice) gives exactly the result of one that holds every sample,
// from a run directory, under the options that may spill and the one
// (MLPerf) that may not.
func TestTwoPassReplayEqualsOnePass(t *testing.T) {
	closed, err := schema.OpenRunDir(zstdSynthRun(t, 6000))
	if err != nil {
		t.Fatal(err)
	}
	open, err := schema.OpenRunDir(synthRunWith(t, func(o *synth.Options) {
		o.Requests, o.Mode, o.Points = 6000, schema.ModeRate, []float64{8, 24, 48}
	}))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		rd *schema.RunDir
		o  Options
	}{
		{closed, Options{}},
		{closed, Options{MLPerf: &MLPerfLimits{TTFTNS: 45e7, TPOTNS: 4e7}}},
		{open, Options{}},
	} {
		rd, o := c.rd, c.o
		want, err := Replay(context.Background(), rd, o)
		if err != nil {
			t.Fatal(err)
		}
		for _, second := range []string{"log in memory", "log in a file", "source"} {
			restore := secondPassFrom(t, second)
			withSpillAt(t, 50)
			got, err := Replay(context.Background(), rd, o)
			spillAt = 1 << 18
			restore()
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, want) {
				t.Errorf("%s, mlperf %v, second pass from the %s: the two-pass replay differs from the one-pass one", rd.Manifest().Load.Mode, o.MLPerf != nil, second)
			}
		}
	}
}

// secondPassFrom makes the second pass of a replay read the records log
// in memory, the log in a temporary file, or (the log abandoned: no
// temporary directory) the source again; it returns the undo.
func secondPassFrom(t *testing.T, from string) func() {
	oldMem := logMemory
	oldTmp, hadTmp := os.LookupEnv("TMPDIR")
	switch from {
	case "log in a file":
		logMemory = 1
	case "source":
		logMemory = 1
		if err := os.Setenv("TMPDIR", filepath.Join(t.TempDir(), "absent")); err != nil {
			t.Fatal(err)
		}
	}
	return func() {
		logMemory = oldMem
		if hadTmp {
			os.Setenv("TMPDIR", oldTmp)
		} else {
			os.Unsetenv("TMPDIR")
		}
	}
}

// synthRunWith writes a synthetic run with the options edit sets.
func synthRunWith(t testing.TB, edit func(*synth.Options)) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "run")
	w, err := schema.CreateRun(dir, true)
	if err != nil {
		t.Fatal(err)
	}
	o := synth.DefaultOptions()
	edit(&o)
	if _, err := synth.Generate(context.Background(), o, w); err != nil {
		w.Abort()
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// changingRun returns other records on its second OpenRecords.
type changingRun struct {
	memRun
	opened int
}

func (r *changingRun) OpenRecords() (schema.RecordIterator, error) {
	r.opened++
	recs := r.recs
	if r.opened > 1 {
		recs = recs[:len(recs)-1]
	}
	return &memIter{recs: recs}, nil
}

// TestRecordsChangedBetweenPassesFail: a run whose records would differ on
// a second read is read once (the records log); when the log cannot be
// written and the source is read again, the difference fails with an
// error that says so, rather than returning numbers from two different
// runs.
func TestRecordsChangedBetweenPassesFail(t *testing.T) {
	rd, err := schema.OpenRunDir(zstdSynthRun(t, 3000))
	if err != nil {
		t.Fatal(err)
	}
	it, err := rd.OpenRecords()
	if err != nil {
		t.Fatal(err)
	}
	run := &changingRun{memRun: memRun{m: rd.Manifest()}}
	for {
		rec, err := it.Next()
		if err != nil {
			break
		}
		run.recs = append(run.recs, rec)
	}
	it.Close()
	withSpillAt(t, 50)
	stable, err := Replay(context.Background(), &memRun{m: run.m, recs: run.recs}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// With the records log the source is read once: what it would give a
	// second time does not matter.
	got, err := Replay(context.Background(), run, Options{})
	if err != nil || !reflect.DeepEqual(got, stable) || run.opened != 1 {
		t.Fatalf("with the log: error %v, equal %v, source opened %d times", err, reflect.DeepEqual(got, stable), run.opened)
	}
	// Without it (no temporary directory) the source is read again.
	run.opened = 0
	defer secondPassFrom(t, "source")()
	_, err = Replay(context.Background(), run, Options{})
	if err == nil || !strings.Contains(err.Error(), "changed between the two passes") {
		t.Fatalf("error = %v, want the records changed between the passes", err)
	}
}

// retainedAfterAccumulate replays run and returns the heap in use, after
// a collection, once its records are accumulated.
func retainedAfterAccumulate(t *testing.T, run schema.Run) uint64 {
	t.Helper()
	var ms runtime.MemStats
	testHookAccumulated = func() {
		runtime.GC()
		runtime.ReadMemStats(&ms)
	}
	defer func() { testHookAccumulated = nil }()
	runtime.GC()
	var before runtime.MemStats
	runtime.ReadMemStats(&before)
	if _, err := Replay(context.Background(), run, Options{}); err != nil {
		t.Fatal(err)
	}
	return ms.HeapAlloc - min(ms.HeapAlloc, before.HeapAlloc)
}

// TestReplayHoldsFewBytesPerRecord: what a replay holds once it has read
// the records grows by at most maxBytesPerRecord for each record more: the
// samples of the distributions are no longer held, only those in the
// histogram buckets the percentiles need (about 15 bytes a record here),
// nor append slack; the rest is the overload test's span and kind (about
// 9 bytes a request). It measures live heap after a collection at two run
// sizes, not time: 22 bytes a record more here; holding every sample and
// 16-byte spans it was 207.
func TestReplayHoldsFewBytesPerRecord(t *testing.T) {
	withSpillAt(t, 1<<10) // small runs spill as a million-request one does
	const maxBytesPerRecord = 32
	var sizes [2]uint64
	var records [2]int
	for i, n := range []int{10000, 40000} {
		rd, err := schema.OpenRunDir(zstdSynthRun(t, n))
		if err != nil {
			t.Fatal(err)
		}
		it, err := rd.OpenRecords()
		if err != nil {
			t.Fatal(err)
		}
		mem := &memRun{m: rd.Manifest()}
		for {
			rec, err := it.Next()
			if err != nil {
				break
			}
			mem.recs = append(mem.recs, rec)
		}
		it.Close()
		records[i] = len(mem.recs)
		sizes[i] = retainedAfterAccumulate(t, mem)
	}
	per := float64(int64(sizes[1])-int64(sizes[0])) / float64(records[1]-records[0])
	t.Logf("held after accumulating: %d B for %d records, %d B for %d: %.1f B a record more", sizes[0], records[0], sizes[1], records[1], per)
	if per > maxBytesPerRecord {
		t.Fatalf("a replay holds %.1f bytes more per record, want at most %d", per, maxBytesPerRecord)
	}
}

// TestBucketRangeInvertsCoarseBucket: every coarse bucket's range holds
// exactly the values coarseBucket maps to it, at its ends and past them,
// both signs.
func TestBucketRangeInvertsCoarseBucket(t *testing.T) {
	for b := range coarseBuckets {
		lo, w := bucketRange(b)
		hi := lo + int64(w-1)
		if coarseBucket(lo) != b || coarseBucket(hi) != b {
			t.Fatalf("bucket %d: range [%d, %d] maps to %d and %d", b, lo, hi, coarseBucket(lo), coarseBucket(hi))
		}
		if lo > math.MinInt64 && coarseBucket(lo-1) == b {
			t.Fatalf("bucket %d: %d below its range maps to it", b, lo-1)
		}
		if hi < math.MaxInt64 && coarseBucket(hi+1) == b {
			t.Fatalf("bucket %d: %d above its range maps to it", b, hi+1)
		}
	}
}

// TestDenseSpilledBucketsAreCounted: a distribution whose percentiles
// fall in crowded buckets (a long run's ITLs) counts those buckets' values
// in the second pass instead of keeping them, and still gives every rank
// of a sort of all its samples and the one-pass Dist.
func TestDenseSpilledBucketsAreCounted(t *testing.T) {
	withSpillAt(t, 100)
	rng := rand.New(rand.NewPCG(11, 12))
	xs := make([]int64, 1<<20)
	for i := range xs {
		switch rng.IntN(50) {
		case 0:
			xs[i] = -rng.Int64N(1 << 20)
		case 1:
			xs[i] = rng.Int64N(1 << 40)
		default:
			xs[i] = 8e6 + rng.Int64N(40000) // about 1.5 buckets wide
		}
	}
	first := intSamples{mayspill: new(bool)}
	first.addAll(xs)
	second := first.planSamples()
	second.addAll(xs)
	if err := second.checkSpill(); err != nil {
		t.Fatal(err)
	}
	counted, kept := 0, 0
	for i := range second.sp.kept {
		kept += len(second.sp.kept[i])
		if second.sp.counts != nil && second.sp.counts[i] != nil {
			counted++
		}
	}
	if counted == 0 || kept > len(xs)/10 {
		t.Fatalf("%d buckets counted, %d values kept of %d: the crowded buckets were kept as values", counted, kept, len(xs))
	}
	sorted := slices.Sorted(slices.Values(xs))
	rs := intDistRanks(int64(len(xs)))
	for i, got := range second.ranks(rs) {
		if want := sorted[rs[i]-1]; got != want {
			t.Fatalf("rank %d = %d, want %d", rs[i], got, want)
		}
	}
	var plain intSamples
	plain.addAll(xs)
	if d1, d2 := intDist(&plain), intDist(&second); !reflect.DeepEqual(d1, d2) {
		t.Fatalf("two-pass Dist %+v, one-pass %+v", d2, d1)
	}
}

// TestChangedCountedBucketFails: a second pass whose counted bucket got
// other values than the first pass counted there is refused.
func TestChangedCountedBucketFails(t *testing.T) {
	withSpillAt(t, 100)
	xs := make([]int64, 10000)
	for i := range xs {
		xs[i] = 8e6 + int64(i%3000)
	}
	first := intSamples{mayspill: new(bool)}
	first.addAll(xs)
	second := first.planSamples()
	xs[len(xs)/2] = 1 << 40 // moved out of its bucket
	second.addAll(xs)
	if err := second.checkSpill(); err == nil || !strings.Contains(err.Error(), "changed between the two passes") {
		t.Fatalf("err = %v, want the records changed", err)
	}
}
