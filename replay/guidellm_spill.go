package replay

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// GuideLLM's rate distributions (glRateDist) take one event per chunk, so
// a run with millions of chunks held them all in memory. A glStream holds
// glHeld events; past that it sorts them by time and writes them to a
// temporary file as a run (the overload test's spillFile, read back with
// readAt), and glRateDist's steps then stream over a k-way merge of the
// runs: equal times are merged, glMergeEvents runs on each stretch of
// events between gaps wider than twice glMergeThreshold, the rates and
// durations are sorted by rate the same way (a second glStream), and the
// value distribution is summed in numpy's pairwise order (pairwiseNext)
// over the merged rates, read back from a third. Its answers are
// glRateDist's bit for bit when every event's occurrences are integers
// and their sum is far from 2⁵³ (every running sum and difference is then
// exact, so neither the order of equal times nor a running sum's history
// changes a merged weight, and no merge reaches across such a gap), and
// every time is finite and below 2³⁶ s (a gap's rounding is then far
// below the threshold). The records' chunk events always are; an event
// that is not (a GuideLLM import's fractional tokens per iteration) makes
// its stream hold everything and use glRateDist, as a stream that never
// spilled does: the memory bound is lost, never the answer.

// glHeld is the number of events a glStream holds before it writes them
// to its file as a sorted run (24 bytes an event, 768 KiB).
var glHeld = 1 << 15

// glExactSum bounds the sum of |occurrences| of the spilled streams of one
// distribution, below 2⁵³ with room for the rounding of the bound's own
// float64 sum.
const glExactSum = 1 << 51

// glExactTime bounds |time| (s) on the spilled path.
const glExactTime = 1 << 36

// glReadBlock is the number of events a cursor reads from a run at once.
var glReadBlock = 2048

// glFanIn is the number of runs of a level merged into one.
var glFanIn = 16

// glRun is a sorted run in a stream's file: its offset, its number of
// events and its level (compact).
type glRun struct {
	off, n int64
	level  int
}

// glRec is a stored event: its time (or a rate, in a stream of rates),
// occurrences (or a duration) and its position in the stream.
type glRec struct {
	t, w float64
	seq  int64
}

const glRecSize = 24

// glStream is the events of one rate distribution in the order added:
// held in memory, or past glHeld in sorted runs in a temporary file.
type glStream struct {
	held []glRec
	file *spillFile
	runs []glRun
	n    int64
	err  error // a read error while compacting
	// exact says every event added so far can take the spilled path;
	// sum is the sum of their |occurrences|.
	exact bool
	sum   float64
	// anyKey marks a stream of rates: only a NaN key stops its spilling.
	anyKey bool
}

func newGLStream() *glStream { return &glStream{exact: true} }

// glExactEvent reports whether e can take the spilled path.
func glExactEvent(e glEvent) bool {
	return !math.IsNaN(e.t) && math.Abs(e.t) < glExactTime && !(e.t == 0 && math.Signbit(e.t)) &&
		e.w == math.Trunc(e.w) && math.Abs(e.w) < glExactSum
}

func (s *glStream) add(e glEvent) {
	if s.exact {
		if s.anyKey {
			s.exact = !math.IsNaN(e.t)
		} else {
			s.sum += math.Abs(e.w)
			s.exact = glExactEvent(e) && s.sum < glExactSum
		}
	}
	s.held = append(s.held, glRec{e.t, e.w, s.n})
	s.n++
	if s.exact && len(s.held) >= glHeld {
		s.writeRun(true)
	}
}

// writeRun writes the held events to the file as a run, sorted by time
// (stably) first when sorted is set.
func (s *glStream) writeRun(sorted bool) {
	if sorted {
		slices.SortStableFunc(s.held, func(a, b glRec) int { return cmpFloat(a.t, b.t) })
	}
	if s.file == nil {
		s.file = &spillFile{pattern: "benchseal-replay-*.guidellm"}
	}
	b := make([]byte, 0, len(s.held)*glRecSize)
	for _, r := range s.held {
		b = appendGLRec(b, r)
	}
	off, _ := s.file.write(b)
	s.runs = append(s.runs, glRun{off, int64(len(s.held)), 0})
	s.held = s.held[:0]
	if sorted {
		s.compact()
	}
}

// compact merges the last glFanIn runs into one while they are of one
// level (a run of level l holds about glFanIn^l runs' events): at most
// glFanIn runs a level, so a merge reads few runs at once and every event
// is rewritten O(log n) times. The merged run takes their place, so runs
// stay in the order their events were added.
func (s *glStream) compact() {
	for k := len(s.runs); k >= glFanIn; k = len(s.runs) {
		tail := s.runs[k-glFanIn:]
		if tail[0].level != tail[len(tail)-1].level {
			return
		}
		var cs []*glCursor
		for i, r := range tail {
			cs = append(cs, &glCursor{s: s, off: r.off, n: r.n, order: i})
		}
		var err error
		w := glRun{level: tail[0].level + 1, off: -1}
		b := make([]byte, 0, glReadBlock*glRecSize)
		flush := func() {
			off, _ := s.file.write(b)
			if w.off < 0 {
				w.off = off
			}
			b = b[:0]
		}
		glMergeRuns(cs, &err, func(r glRec) bool {
			b = appendGLRec(b, r)
			w.n++
			if len(b) == cap(b) {
				flush()
			}
			return true
		})
		if err != nil {
			// Kept for finish, which reads the runs again; they stay.
			s.err = err
			return
		}
		flush()
		s.runs = append(s.runs[:k-glFanIn], w)
	}
}

func appendGLRec(b []byte, r glRec) []byte {
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(r.t))
	b = binary.LittleEndian.AppendUint64(b, math.Float64bits(r.w))
	return binary.LittleEndian.AppendUint64(b, uint64(r.seq))
}

// spilled reports whether s wrote a run.
func (s *glStream) spilled() bool { return s != nil && len(s.runs) > 0 }

// close removes s's file (nil: nothing to do).
func (s *glStream) close() {
	if s != nil {
		s.file.close()
		s.file, s.runs, s.held = nil, nil, nil
	}
}

// readErr names s's file in a read error.
func (s *glStream) readErr(err error) error {
	name := "memory"
	if s.file != nil && s.file.f != nil {
		name = s.file.f.Name()
	}
	return fmt.Errorf("read back GuideLLM's rate events from %s: %w", name, err)
}

// glCursor reads one run of a stream, or its held events, in order.
type glCursor struct {
	s        *glStream
	off, n   int64 // the rest of the run in the file
	buf      []glRec
	raw      []byte  // a block read, decoded into blk
	blk      []glRec // buf's storage once a block is read
	order    int     // the run's place: equal keys come out in this order
	cur      glRec
	finished bool
}

// next advances c to its next event; it reports false at the end or on
// a read error (kept in *errp).
func (c *glCursor) next(errp *error) bool {
	if len(c.buf) == 0 && c.n > 0 {
		k := min(c.n, int64(glReadBlock))
		if c.raw == nil {
			c.raw, c.blk = make([]byte, k*glRecSize), make([]glRec, 0, k)
		}
		raw := c.raw[:k*glRecSize]
		if err := c.s.file.readAt(raw, c.off); err != nil {
			*errp = c.s.readErr(err)
			c.finished = true
			return false
		}
		c.buf = c.blk[:0]
		for i := int64(0); i < k; i++ {
			p := raw[i*glRecSize:]
			c.buf = append(c.buf, glRec{math.Float64frombits(binary.LittleEndian.Uint64(p)),
				math.Float64frombits(binary.LittleEndian.Uint64(p[8:])), int64(binary.LittleEndian.Uint64(p[16:]))})
		}
		c.off += k * glRecSize
		c.n -= k
	}
	if len(c.buf) == 0 {
		c.finished = true
		return false
	}
	c.cur, c.buf = c.buf[0], c.buf[1:]
	return true
}

// cursors returns a cursor per run of s and one over its held events
// (sorted now), numbered from order on.
func (s *glStream) cursors(order int) []*glCursor {
	var cs []*glCursor
	for _, r := range s.runs {
		cs = append(cs, &glCursor{s: s, off: r.off, n: r.n, order: order})
		order++
	}
	slices.SortStableFunc(s.held, func(a, b glRec) int { return cmpFloat(a.t, b.t) })
	cs = append(cs, &glCursor{s: s, buf: s.held, order: order})
	return cs
}

// glMergeRuns yields the events of cursors cs in key order, equal keys
// in the cursors' order and then in each cursor's, as a stable sort of
// all of them gives. A read error is kept in *errp and ends the walk.
func glMergeRuns(cs []*glCursor, errp *error, yield func(glRec) bool) {
	// A binary heap of the cursors by (key, order).
	less := func(a, b *glCursor) bool {
		if c := cmpFloat(a.cur.t, b.cur.t); c != 0 {
			return c < 0
		}
		return a.order < b.order
	}
	h := cs[:0:0]
	for _, c := range cs {
		if c.next(errp) {
			h = append(h, c)
		}
	}
	down := func(i int) {
		for {
			l, m := 2*i+1, i
			if l < len(h) && less(h[l], h[m]) {
				m = l
			}
			if r := l + 1; r < len(h) && less(h[r], h[m]) {
				m = r
			}
			if m == i {
				return
			}
			h[i], h[m] = h[m], h[i]
			i = m
		}
	}
	for i := len(h)/2 - 1; i >= 0; i-- {
		down(i)
	}
	for len(h) > 0 && *errp == nil {
		if !yield(h[0].cur) {
			return
		}
		if !h[0].next(errp) {
			h[0] = h[len(h)-1]
			h = h[:len(h)-1]
		}
		down(0)
	}
}

// all returns s's events in the order added (read back from its runs).
func (s *glStream) all() ([]glEvent, error) {
	recs := make([]glRec, 0, s.n)
	var err error
	for _, c := range s.cursors(0)[:len(s.runs)] {
		for c.next(&err) {
			recs = append(recs, c.cur)
		}
		if err != nil {
			return nil, err
		}
	}
	recs = append(recs, s.held...)
	slices.SortFunc(recs, func(a, b glRec) int { return int(a.seq - b.seq) })
	out := make([]glEvent, len(recs))
	for i, r := range recs {
		out[i] = glEvent{r.t, r.w}
	}
	return out, nil
}

// glRateDistStreams is glRateDist over the events of streams ss, in
// their order (as appended one after the other), cut to [start, end]
// when bounded.
func glRateDistStreams(ss []*glStream, start, end float64, bounded bool) (Dist, error) {
	spilled, exact, sum := false, true, 0.0
	for _, s := range ss {
		if s.err != nil {
			return emptyDist(), s.err
		}
		spilled = spilled || s.spilled()
		exact, sum = exact && s.exact, sum+s.sum
	}
	if bounded {
		exact = exact && glExactEvent(glEvent{start, 0}) && glExactEvent(glEvent{end, 0})
	}
	if !spilled || !exact || sum >= glExactSum {
		var evs []glEvent
		for _, s := range ss {
			e, err := s.all()
			if err != nil {
				return emptyDist(), err
			}
			evs = append(evs, e...)
		}
		return glRateDist(evs, start, end, bounded), nil
	}
	var cs []*glCursor
	for _, s := range ss {
		cs = append(cs, s.cursors(len(cs))...)
	}
	r := newGLRates()
	defer r.close()
	var err error
	if bounded {
		r.event(glEvent{start, 0})
	}
	glMergeRuns(cs, &err, func(e glRec) bool {
		if !bounded || (e.t >= start && e.t <= end) {
			r.event(glEvent{e.t, e.w})
		}
		return true
	})
	if err != nil {
		return emptyDist(), err
	}
	if bounded {
		r.event(glEvent{end, 0})
	}
	return r.dist()
}

// glRates is the streamed part of glRateDist after the sort: events at
// equal times merged, GuideLLM's merge of close events (per stretch
// between wide gaps), and each event's rate and duration, sorted by rate
// in a stream of their own.
type glRates struct {
	seg     []glEvent // the stretch being gathered, equal times merged
	n       int64     // events after the merge
	occ     float64   // their occurrences' sum (exact)
	have    bool      // prev is set
	prev    glEvent   // the last merged event, its duration not yet known
	prevMid float64   // the midpoint before prev (n ≥ 2)
	rates   *glStream
}

func newGLRates() *glRates { return &glRates{rates: newGLValues()} }

// newGLValues returns a stream of (value, weight) pairs sorted by value.
func newGLValues() *glStream {
	s := newGLStream()
	s.anyKey = true
	return s
}

// glValueDistStream is DistributionSummary.from_values over the (value,
// weight) pairs in s. N is the number of samples given.
func glValueDistStream(s *glStream) (Dist, error) {
	d := emptyDist()
	d.N = s.n
	if s.err != nil {
		return d, s.err
	}
	return d, glSummariseAny(&d, s)
}

// glSummariseAny is glSummarise of the pairs in s: in memory when s never
// spilled or took a NaN, else streamed.
func glSummariseAny(d *Dist, s *glStream) error {
	if s.spilled() && s.exact {
		return glSummariseStream(d, s)
	}
	recs, err := s.all()
	if err != nil {
		return err
	}
	xs, ws := make([]float64, len(recs)), make([]float64, len(recs))
	for i, e := range recs {
		xs[i], ws[i] = e.t, e.w
	}
	glSummarise(d, xs, ws)
	return nil
}

func (r *glRates) close() { r.rates.close() }

// event takes the next event in time order.
func (r *glRates) event(e glEvent) {
	if k := len(r.seg); k > 0 {
		last := &r.seg[k-1]
		if last.t == e.t {
			last.w += e.w
			return
		}
		if e.t-last.t > 2*glMergeThreshold {
			r.flush()
		}
	}
	r.seg = append(r.seg, glEvent{e.t, 0 + e.w})
}

// flush merges the gathered stretch and takes its events.
func (r *glRates) flush() {
	if len(r.seg) == 0 {
		return
	}
	for _, e := range glMergeEvents(r.seg) {
		r.merged(e)
	}
	r.seg = r.seg[:0]
}

// merged takes the next merged event: the one before it now has its
// duration, from the midpoint before it to the one after.
func (r *glRates) merged(e glEvent) {
	r.n++
	r.occ += e.w
	if !r.have {
		r.prev, r.have = e, true
		return
	}
	mid := float64((e.t + r.prev.t) / 2)
	var dur float64
	if r.n == 2 {
		dur = mid - r.prev.t
	} else {
		dur = mid - r.prevMid
	}
	r.rates.add(glEvent{r.prev.w / dur, dur})
	r.prev, r.prevMid = e, mid
}

// dist finishes: the last event's duration, then the value distribution
// of the rates weighted by their durations.
func (r *glRates) dist() (Dist, error) {
	r.flush()
	d := emptyDist()
	if r.n <= 1 {
		d.N = r.n
		return d, nil
	}
	dur := r.prev.t - r.prevMid
	if dur < glEpsilon {
		dur = glEpsilon
	}
	r.rates.add(glEvent{r.prev.w / dur, dur})
	d.N = int64(math.RoundToEven(r.occ))
	if r.rates.err != nil {
		return d, r.rates.err
	}
	return d, glSummariseAny(&d, r.rates)
}

// glSummariseStream is glSummarise of the rates and durations in rates
// (spilled, exact): sorted by rate (glMergeRuns), equal rates merged and
// non-positive weights dropped into a stream read three times, for the
// pairwise sums of the weights, of value × probability, and of the
// squared deviations with the running probabilities.
func glSummariseStream(d *Dist, rates *glStream) error {
	u := newGLStream()
	defer u.close()
	var err error
	var cur glEvent
	have := false
	put := func() {
		if have && cur.w > 0 {
			u.held = append(u.held, glRec{cur.t, cur.w, u.n})
			if u.n++; len(u.held) >= glHeld {
				u.writeRun(false)
			}
		}
	}
	glMergeRuns(rates.cursors(0), &err, func(e glRec) bool {
		if have && cur.t == e.t {
			cur.w += e.w
			return true
		}
		put()
		cur, have = glEvent{e.t, 0 + e.w}, true
		return true
	})
	put()
	if err != nil {
		return err
	}
	k := int(u.n)
	if k == 0 {
		return nil
	}
	ones := false
	total := pairwiseNext(k, u.values(&err, func(e glEvent) float64 { return e.w }))
	if total <= glEpsilon {
		ones = true
		total = pairwiseNext(k, u.values(&err, func(glEvent) float64 { return 1 }))
	}
	prob := func(e glEvent) float64 {
		if ones {
			return 1 / total
		}
		return e.w / total
	}
	mean := pairwiseNext(k, u.values(&err, func(e glEvent) float64 { return float64(e.t * prob(e)) }))
	c, first, last := 0.0, true, 0.0
	found := make([]bool, len(Percentiles))
	variance := pairwiseNext(k, u.values(&err, func(e glEvent) float64 {
		p := prob(e)
		if first {
			d.Min, first = Float(e.t), false
		}
		last = e.t
		c += p
		for i, pc := range Percentiles {
			if !found[i] && cmpFloat(c, pc.Frac()) >= 0 {
				d.P[i], found[i] = Float(e.t), true
			}
		}
		y := e.t - mean
		return float64(float64(y*y) * p)
	}))
	if err != nil {
		return err
	}
	for i := range Percentiles {
		if !found[i] {
			d.P[i] = Float(last)
		}
	}
	d.Mean = Float(mean)
	d.Stddev = Float(math.Sqrt(variance))
	d.Max = Float(last)
	return nil
}

// values returns a function giving f of s's events one by one in the
// order added (runs written in order, then the held ones), 0 past the
// end or after a read error (kept in *errp).
func (s *glStream) values(errp *error, f func(glEvent) float64) func() float64 {
	cs := s.cursors(0)
	// cursors sorted the held events; they were added in order of rate,
	// which that sort keeps.
	i := 0
	return func() float64 {
		for i < len(cs) {
			if cs[i].next(errp) {
				return f(glEvent{cs[i].cur.t, cs[i].cur.w})
			}
			if *errp != nil {
				return 0
			}
			i++
		}
		return 0
	}
}

// pairwiseNext is pairwiseSum of the next n values next gives, taken in
// order: the same additions in the same order, holding only the eight
// partial sums of a block and the recursion's stack.
func pairwiseNext(n int, next func() float64) float64 {
	if n < 8 {
		res := 0.0
		for range n {
			res += next()
		}
		return res
	}
	if n <= 128 {
		var r [8]float64
		for j := range 8 {
			r[j] = next()
		}
		i := 8
		for ; i < n-n%8; i += 8 {
			for j := range 8 {
				r[j] += next()
			}
		}
		res := ((r[0] + r[1]) + (r[2] + r[3])) + ((r[4] + r[5]) + (r[6] + r[7]))
		for ; i < n; i++ {
			res += next()
		}
		return res
	}
	n2 := n / 2
	n2 -= n2 % 8
	left := pairwiseNext(n2, next)
	return left + pairwiseNext(n-n2, next)
}
