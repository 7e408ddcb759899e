package replay

import (
	"fmt"
	"math"
	"math/bits"
	"slices"
)

// Exact order statistics in bounded memory. A large distribution of a
// point × repeat (more than spillAt samples) stops holding its samples
// and counts them in a coarse histogram instead (the first pass over the
// records). The records are then read a second time, and each such
// distribution keeps only the samples that fall in the histogram buckets
// holding the ranks it will be asked for (the percentiles, and for a
// ratio its minimum and maximum); a rank's value is the one at its rank
// inside its bucket. The answers are those of a sort of every sample.
// A small run never spills and is read once.

// spillAt is the number of samples from which a distribution that may
// spill counts them in a histogram: its coarseBuckets counters take less
// than half of the 4 bytes a sample it held.
var spillAt int64 = 1 << 18

// coarseBuckets is the number of coarse histogram buckets over int64:
// exact below 1024, then 512 buckets per power of two (a relative width
// of 1/512 at most), mirrored for negative values.
const (
	coarseHalf    = 1024 + 53*512
	coarseBuckets = 2 * coarseHalf
)

// coarseBucket maps x to its bucket; it never decreases as x grows.
func coarseBucket(x int64) int {
	if x >= 0 {
		return coarseHalf + posBucket(uint64(x))
	}
	return coarseHalf - 1 - posBucket(uint64(-(x + 1)))
}

// posBucket maps u < 2⁶³ to [0, coarseHalf).
func posBucket(u uint64) int {
	if u < 1024 {
		return int(u)
	}
	l := bits.Len64(u)   // 11..63
	m := u >> uint(l-10) // [512, 1024)
	return 1024 + (l-11)*512 + int(m-512)
}

// floorDiv is ⌊num/den⌋ for den > 0.
func floorDiv(num, den int64) int64 {
	q := num / den
	if num%den != 0 && num < 0 {
		q--
	}
	return q
}

// spill is the two-pass state of one distribution. In the first pass
// hist counts its samples per bucket; planned, in the second, slot maps a
// bucket to its index in kept (−1: not kept).
type spill struct {
	hist []int64
	n    int64 // the first pass's sample count
	// Second pass.
	planned bool
	slot    []int8 // at most 13 distinct buckets are wanted (ratDistRanks)
	buckets []int  // the kept buckets, ascending
	seen    int64  // samples added in the second pass
}

func newSpill() *spill { return &spill{hist: make([]int64, coarseBuckets)} }

// plan selects the buckets holding the 1-based ranks rs of the n samples
// counted; it returns the second pass's spill.
func (sp *spill) plan(rs []int64) *spill {
	out := &spill{hist: sp.hist, n: sp.n, planned: true, slot: make([]int8, coarseBuckets)}
	for i := range out.slot {
		out.slot[i] = -1
	}
	for _, r := range rs {
		b, _ := sp.locate(r)
		if out.slot[b] < 0 {
			out.slot[b] = 0
			out.buckets = append(out.buckets, b)
		}
	}
	slices.Sort(out.buckets)
	for i, b := range out.buckets {
		out.slot[b] = int8(i)
	}
	return out
}

// locate returns the bucket holding rank r (1-based) and r's rank inside
// it.
func (sp *spill) locate(r int64) (bucket int, in int64) {
	var cum int64
	for b, c := range sp.hist {
		if cum+c >= r {
			return b, r - cum
		}
		cum += c
	}
	return len(sp.hist) - 1, r - cum
}

// check reports a second pass that did not see the first pass's samples
// (the records changed between the passes); kept returns how many values
// each kept bucket got.
func (sp *spill) check(kept func(i int) int64) error {
	if sp.seen != sp.n {
		return fmt.Errorf("the records changed between the two passes: %d samples of a distribution in the first, %d in the second", sp.n, sp.seen)
	}
	for i, b := range sp.buckets {
		if kept(i) != sp.hist[b] {
			return fmt.Errorf("the records changed between the two passes: %d samples in a histogram bucket in the first, %d in the second", sp.hist[b], kept(i))
		}
	}
	return nil
}

// keptSpill is a spill with the values of its kept buckets. An integer
// bucket holding more samples than half its width is counted instead
// (counts[i], from lo[i]; nil for a bucket kept as values, and for every
// bucket of a ratio): a bucket of a long run's ITLs holds a share of all
// of them, so its values grow with the run, while its counters take 4
// bytes per integer in the bucket (1/512 of the values' magnitude) at
// most, whatever the run's size.
type keptSpill[T any] struct {
	*spill
	kept   [][]T
	counts [][]uint32
	lo     []int64
	nc     []int64 // samples counted in counts[i]
}

// intSpill and ratSpill are an intSamples' and a ratSamples' spill with
// the values of their kept buckets.
type (
	intSpill = keptSpill[int64]
	ratSpill = keptSpill[frac]
)

// add counts x in bucket b in the first pass and keeps it in the second
// when b is a wanted bucket.
func (sp *keptSpill[T]) add(b int, x T) {
	if !sp.planned {
		sp.hist[b]++
		sp.n++
		return
	}
	sp.seen++
	if k := sp.slot[b]; k >= 0 {
		sp.kept[k] = append(sp.kept[k], x)
	}
}

// checkKept is spill.check of a planned sp (nil before its second pass).
func (sp *keptSpill[T]) checkKept() error {
	if sp == nil || !sp.planned {
		return nil
	}
	return sp.check(func(i int) int64 {
		if sp.counts != nil && sp.counts[i] != nil {
			return sp.nc[i]
		}
		return int64(len(sp.kept[i]))
	})
}

// bucketRange returns the smallest value of coarse bucket b and the
// number of integers in it (the inverse of coarseBucket).
func bucketRange(b int) (lo int64, width uint64) {
	pos := b >= coarseHalf
	p := b - coarseHalf // posBucket of x, or of −(x+1) for x < 0
	if !pos {
		p = coarseHalf - 1 - b
	}
	var ulo uint64
	if p < 1024 {
		ulo, width = uint64(p), 1
	} else {
		l := (p-1024)/512 + 11 // bits.Len64 of the bucket's values
		m := uint64((p-1024)%512 + 512)
		ulo, width = m<<uint(l-10), 1<<uint(l-10)
	}
	if pos {
		return int64(ulo), width
	}
	// −(u+1) for u in [ulo, ulo+width): the smallest is −(ulo+width).
	return -int64(ulo+width-1) - 1, width
}

// countDense makes the planned int spill sp count, rather than keep, the
// values of every kept bucket with more samples than half its width.
func countDense(sp *intSpill) {
	for i, b := range sp.buckets {
		lo, w := bucketRange(b)
		if c := sp.hist[b]; uint64(c) <= w/2 || c >= 1<<32 {
			continue
		}
		if sp.counts == nil {
			sp.counts, sp.lo, sp.nc = make([][]uint32, len(sp.buckets)), make([]int64, len(sp.buckets)), make([]int64, len(sp.buckets))
		}
		sp.counts[i], sp.lo[i] = make([]uint32, w), lo
	}
}

// spillSamples moves s's samples into a histogram; from now on add only
// counts.
func (s *intSamples) spillSamples() {
	sp := newSpill()
	s.each(func(x int64) { sp.hist[coarseBucket(x)]++ })
	sp.n = s.acc.n
	s.blocks, s.neg, s.large = nil, nil, nil
	s.sp = &intSpill{spill: sp}
}

// addSpilled adds x in either pass (its sums, minimum and maximum are
// kept by the caller).
func (s *intSamples) addSpilled(x int64) {
	sp, b := s.sp, coarseBucket(x)
	if sp.counts != nil {
		if k := sp.slot[b]; k >= 0 && sp.counts[k] != nil {
			sp.seen++
			sp.counts[k][x-sp.lo[k]]++
			sp.nc[k]++
			return
		}
	}
	sp.add(b, x)
}

// addDiffsSpilled is addDiffs once s has spilled: it adds the leading
// differences of c that are in [0, 2³²) while the sums are far from
// overflowing, as add and addSpilled would one at a time, and returns the
// rest of c (from the first value of the first difference not added).
func (s *intSamples) addDiffsSpilled(c []int64) []int64 {
	a, sp := &s.acc, s.sp
	mn, mx, sum, lo, hi := s.min, s.max, a.s, a.sqLo, a.sqHi
	// In locals: a store through one of these slices might, as far as the
	// compiler knows, change sp's fields, so it would load them again for
	// every value.
	planned, hist, slot, counts, los, nc, kept := sp.planned, sp.hist, sp.slot, sp.counts, sp.lo, sp.nc, sp.kept
	i := 0
	for ; i < len(c)-1; i++ {
		x := c[i+1] - c[i]
		if uint64(x) >= 1<<32 || sum > math.MaxInt64-x || hi >= 1<<62-1 {
			break
		}
		sum += x
		var cy uint64
		lo, cy = bits.Add64(lo, uint64(x*x), 0)
		hi += cy
		mn, mx = min(mn, x), max(mx, x)
		b := coarseHalf + posBucket(uint64(x))
		if !planned {
			hist[b]++
			continue
		}
		if k := slot[b]; k >= 0 {
			if counts != nil && counts[k] != nil {
				counts[k][x-los[k]]++
				nc[k]++
			} else {
				kept[k] = append(kept[k], x)
			}
		}
	}
	s.min, s.max, a.s, a.sqLo, a.sqHi = mn, mx, sum, lo, hi
	a.n += int64(i)
	if sp.planned {
		sp.seen += int64(i)
	} else {
		sp.n += int64(i)
	}
	return c[i:]
}

// planSamples returns the second pass's samples of a spilled s.
func (s *intSamples) planSamples() intSamples {
	p := s.sp.plan(intDistRanks(s.sp.n))
	sp := &intSpill{spill: p, kept: make([][]int64, len(p.buckets))}
	countDense(sp)
	return intSamples{sp: sp}
}

// spilledRanks is ranks of a spilled s in its second pass.
func (s *intSamples) spilledRanks(rs []int64) []int64 {
	sp := s.sp
	out := make([]int64, len(rs))
	for i, r := range rs {
		b, in := sp.locate(r)
		k := sp.slot[b]
		if sp.counts != nil && sp.counts[k] != nil {
			out[i] = sp.lo[k] + countedRank(sp.counts[k], in)
			continue
		}
		v := sp.kept[k]
		if !slices.IsSorted(v) {
			slices.Sort(v)
		}
		out[i] = v[in-1]
	}
	return out
}

// countedRank is the offset in a counted bucket of its in-th value
// (1-based).
func countedRank(counts []uint32, in int64) int64 {
	var cum int64
	for v, c := range counts {
		if cum += int64(c); cum >= in {
			return int64(v)
		}
	}
	return int64(len(counts) - 1)
}

func (s *intSamples) checkSpill() error { return s.sp.checkKept() }

// intDistRanks are the ranks intDist asks of n samples.
func intDistRanks(n int64) []int64 {
	rs := make([]int64, len(Percentiles))
	for i, p := range Percentiles {
		rs[i] = nearestRank(n, p)
	}
	return rs
}

// ratDistRanks are the ranks ratDist asks of n samples: the minimum, the
// maximum and the percentiles.
func ratDistRanks(n int64) []int64 {
	return append([]int64{1, n}, intDistRanks(n)...)
}

func (s *ratSamples) spillSamples() {
	sp := newSpill()
	for _, x := range s.xs {
		sp.hist[coarseBucket(floorDiv(x.num, x.den))]++
	}
	sp.n = int64(len(s.xs))
	s.xs = nil
	s.sp = &ratSpill{spill: sp}
}

func (s *ratSamples) addSpilled(x frac) { s.sp.add(coarseBucket(floorDiv(x.num, x.den)), x) }

func (s *ratSamples) planSamples() ratSamples {
	p := s.sp.plan(ratDistRanks(s.sp.n))
	return ratSamples{sp: &ratSpill{spill: p, kept: make([][]frac, len(p.buckets))}}
}

func (s *ratSamples) spilledRanks(rs []int64) []frac {
	sp := s.sp
	out := make([]frac, len(rs))
	for i, r := range rs {
		b, in := sp.locate(r)
		v := sp.kept[sp.slot[b]]
		// Selection inside the bucket, as ranks does over all samples.
		selectFracs(v, 0, []int{int(in - 1)}, 2*bits.Len(uint(len(v))))
		out[i] = v[in-1]
	}
	return out
}

func (s *ratSamples) checkSpill() error { return s.sp.checkKept() }

// spillable returns the distributions of g that may spill: those only
// intDist and ratDist read (the MLPerf check reads every TTFT, so with it
// none spills).
func (g *group) spillable() (ints []*intSamples, rats []*ratSamples) {
	if g.cfg.mlperf != nil {
		return nil, nil
	}
	return []*intSamples{&g.ttft, &g.e2e, &g.itl, &g.lag, &g.ttftS, &g.e2eS}, []*ratSamples{&g.tpot}
}

// allowSpill lets g's large distributions spill (the first pass); spilled
// is set when one of any group does: the records will be read again, so
// no group of the first pass keeps its overload data from then on.
func (g *group) allowSpill(spilled *bool) {
	g.firstPass = spilled
	ints, rats := g.spillable()
	for _, s := range ints {
		s.mayspill = spilled
	}
	for _, s := range rats {
		s.mayspill = spilled
	}
}

// groupPlan is what the second pass takes from a group of the first: its
// measured and scheduled request counts (to size its overload data) and
// the planned samples of its spilled distributions (nil: not spilled).
type groupPlan struct {
	sent, scheduled int64
	spanBytes       int
	ints            []*intSamples
	rats            []*ratSamples
}

func (g *group) plan() groupPlan {
	ints, rats := g.spillable()
	p := groupPlan{sent: g.counts.Sent, scheduled: g.lag.n(), spanBytes: g.od.spans.Size()}
	for _, s := range ints {
		var q *intSamples
		if s.sp != nil {
			v := s.planSamples()
			q = &v
		}
		p.ints = append(p.ints, q)
	}
	for _, s := range rats {
		var q *ratSamples
		if s.sp != nil {
			v := s.planSamples()
			q = &v
		}
		p.rats = append(p.rats, q)
	}
	return p
}

// usePlan gives a group of the second pass the planned samples of its
// first-pass twin.
func (g *group) usePlan(p groupPlan) {
	if g.od.file == nil || !g.od.file.on {
		g.od.reserve(p.sent, p.scheduled, p.spanBytes)
	}
	ints, rats := g.spillable()
	for i, s := range ints {
		if i < len(p.ints) && p.ints[i] != nil {
			*s = *p.ints[i]
		}
	}
	for i, s := range rats {
		if i < len(p.rats) && p.rats[i] != nil {
			*s = *p.rats[i]
		}
	}
}

// checkSpills reports a distribution whose second pass disagrees with
// its first.
func (g *group) checkSpills() error {
	ints, rats := g.spillable()
	for _, s := range ints {
		if err := s.checkSpill(); err != nil {
			return err
		}
	}
	for _, s := range rats {
		if err := s.checkSpill(); err != nil {
			return err
		}
	}
	return nil
}
