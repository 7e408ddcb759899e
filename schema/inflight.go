package schema

import (
	"iter"
	"math/big"
	"math/bits"
	"slices"
)

// A cell's measured [sent, end] spans are held (a SpanLog) while they are
// few. A cell with more of them is checked as its records arrive instead
// (spanStream), in memory bounded by the reorder window and the requests
// in flight, not by the records: capture writes each phase's records in
// request-number order, so their sends come nearly in time order, and a
// sweep over the sends in time order needs only the ends of the requests
// still in flight. The answers are those of sorting every span.
var (
	// logSpans is the most spans a cell holds; past it the cell streams.
	logSpans = 1 << 16
	// reorderSpans is the reorder window of a streaming cell: the spans
	// it holds to release them in send order. A span sent before one
	// already released breaks the stream (spanStream.broken).
	reorderSpans = 1 << 15
)

// offeredCell is what a RecordChecker keeps of one cell's spans: the log
// while it holds at most logSpans of them, then the stream.
type offeredCell struct {
	log SpanLog
	st  *spanStream
}

// add adds the span [sent, end]; conc is the cell's workers for the
// turnaround test (0: no test).
func (o *offeredCell) add(sent, end, conc int64) {
	if o.st != nil {
		o.st.add(sent, end)
		return
	}
	o.log.Add(sent, end)
	if o.log.Len() > logSpans {
		o.st = newSpanStream(conc)
		for s := range o.log.Values() {
			o.st.add(s[0], s[1])
		}
		o.log = SpanLog{}
	}
}

// cellSpans is what checkOfferedCell asks of a cell's spans.
type cellSpans interface {
	spanCount() int
	// peak and peakInstant are peakInFlight, instant false and true.
	peak() int64
	peakInstant() int64
	late() bool // lateStart
	turnaround(conc int64) string
	// unordered: the spans could not be swept (spanStream.broken).
	unordered() bool
}

// spans returns the cell's spans when it has any, swept to the end.
func (o *offeredCell) spans() cellSpans {
	if o.st != nil {
		o.st.finish()
		return o.st
	}
	if o.log.Len() == 0 {
		return nil
	}
	return heldSpans{&o.log}
}

// heldSpans answers cellSpans from the held spans.
type heldSpans struct{ l *SpanLog }

func (h heldSpans) spanCount() int     { return h.l.Len() }
func (h heldSpans) peak() int64        { return PeakInFlightSeq(h.l.Values(), h.l.Len()) }
func (h heldSpans) peakInstant() int64 { return peakInFlight(h.l.Values(), h.l.Len(), true) }
func (h heldSpans) late() bool         { return lateStart(h.l.Values()) }
func (h heldSpans) unordered() bool    { return false }
func (h heldSpans) turnaround(conc int64) string {
	return turnaroundProblem(h.l.Values(), h.l.Len(), conc)
}

// PeakInFlightSwept is PeakInFlightSeq of spans none of which ends
// before it is sent, swept as they come (spanStream) in memory bounded by
// the reorder window and the requests in flight rather than by the spans.
// ok is false when a span came sent before one the window had already
// released (spans too far out of send order); the caller then sorts them
// (PeakInFlightSeq).
func PeakInFlightSwept(spans iter.Seq[[2]int64]) (peak int64, ok bool) {
	s := newSpanStream(0) // no turnaround test
	for sp := range spans {
		s.add(sp[0], sp[1])
	}
	s.finish()
	return s.top, !s.broken
}

// spanStream sweeps a cell's spans in send order as they arrive: the
// requests in flight at a send are the ends pushed and not yet passed, so
// two heaps of ends (the second counting a request that ends the instant
// it is sent as in flight for 1 ns, see peakInFlight) give the peaks, and
// the ends leave them in ascending order (every end to come is at or past
// its send, later than those passed), which the turnaround test
// (turnaroundProblem) pairs with the sends.
type spanStream struct {
	conc int64
	n    int64
	// buf is the reorder window, a min-heap by send; last is the send
	// released last; broken: a span came sent before it.
	buf      [][2]int64
	released bool
	last     int64
	broken   bool
	// The sweep: t is the send of the group of equal sends being
	// released (k of them, the first at index j0 in send order).
	t, j0, k  int64
	ends, ins []int64 // min-heaps
	top, low  int64
	first     int64 // the earliest send
	// The turnaround test (turnaroundProblem), while at most conc are in
	// flight (else noGaps): queue holds the ends passed, in ascending
	// order, from the qHead-th on; lo is the conc-th send; startSum sums
	// the sends from the conc-th on, endSum the passed ends' max(end,
	// lo) but those passed before lo was known (early of them, each
	// before lo); lowGaps counts the turnarounds up to
	// MaxMedianTurnaroundNS, highGaps holds those above it.
	queue    []int64
	qHead    int64
	lo       int64
	startSum int128
	endSum   int128
	passed   int64
	early    int64
	lowGaps  int64
	highGaps []int64
	noGaps   bool
}

func newSpanStream(conc int64) *spanStream {
	return &spanStream{conc: conc, noGaps: conc < 1}
}

func spanLess(a, b [2]int64) bool { return a[0] < b[0] }
func endLess(a, b int64) bool     { return a < b }

func (s *spanStream) add(sent, end int64) {
	if s.broken {
		return
	}
	if s.released && sent < s.last {
		s.broken = true
		s.buf, s.ends, s.ins, s.queue, s.highGaps = nil, nil, nil, nil, nil
		return
	}
	s.buf = heapPush(s.buf, [2]int64{sent, end}, spanLess)
	if len(s.buf) > reorderSpans {
		var sp [2]int64
		sp, s.buf = heapPop(s.buf, spanLess)
		s.release(sp)
	}
}

// finish releases the spans left in the window and closes the sweep.
func (s *spanStream) finish() {
	if s.broken {
		return
	}
	for len(s.buf) > 0 {
		var sp [2]int64
		sp, s.buf = heapPop(s.buf, spanLess)
		s.release(sp)
	}
	s.buf = nil
	if s.released {
		s.closeGroup()
	}
}

// release sweeps the span sp, the earliest send left.
func (s *spanStream) release(sp [2]int64) {
	if !s.released {
		s.released, s.first, s.t = true, sp[0], sp[0]
	} else if sp[0] > s.t {
		s.closeGroup()
		s.t, s.j0, s.k = sp[0], s.n, 0
	}
	s.last = sp[0]
	s.n++
	s.k++
	s.ends = heapPush(s.ends, sp[1], endLess)
	e := sp[1]
	if e == sp[0] {
		e++
	}
	s.ins = heapPush(s.ins, e, endLess)
}

// closeGroup passes the ends up to the group's send t and takes the
// peaks (peakInFlight: an end at a send's instant has freed its slot);
// for the turnaround test it pairs each send of the group from the
// conc-th on with the end conc places before it in ascending order.
func (s *spanStream) closeGroup() {
	t := s.t
	for len(s.ins) > 0 && s.ins[0] <= t {
		_, s.ins = heapPop(s.ins, endLess)
	}
	s.low = max(s.low, int64(len(s.ins)))
	if s.noGaps {
		for len(s.ends) > 0 && s.ends[0] <= t {
			_, s.ends = heapPop(s.ends, endLess)
		}
		s.top = max(s.top, int64(len(s.ends)))
		return
	}
	end := s.j0 + s.k // one past the group's last index
	if s.j0 < s.conc && end >= s.conc {
		s.lo = t
	}
	if end >= s.conc {
		s.startSum.add(t, end-max(s.j0, s.conc-1))
	}
	for len(s.ends) > 0 && s.ends[0] <= t {
		var e int64
		e, s.ends = heapPop(s.ends, endLess)
		s.passed++
		if end >= s.conc {
			s.endSum.add(max(e, s.lo), 1)
		} else {
			s.early++ // e ≤ t < lo
		}
		s.queue = append(s.queue, e)
	}
	s.top = max(s.top, int64(len(s.ends)))
	if s.top > s.conc {
		// turnaroundProblem is not asked (the peak exceeds the
		// concurrency), and the ends it would pair may not have passed.
		s.noGaps, s.queue, s.highGaps = true, nil, nil
		return
	}
	for j := max(s.j0, s.conc); j < end; j++ {
		// At most conc in flight: the (j−conc)-th end has passed.
		if g := t - s.queue[j-s.conc-s.qHead]; g <= MaxMedianTurnaroundNS {
			s.lowGaps++
		} else {
			s.highGaps = append(s.highGaps, g)
		}
	}
	if drop := end - s.conc - s.qHead; drop > 0 {
		s.queue = s.queue[drop:]
		s.qHead += drop
	}
}

func (s *spanStream) spanCount() int     { return int(s.n) }
func (s *spanStream) peak() int64        { return s.top }
func (s *spanStream) peakInstant() int64 { return s.low }
func (s *spanStream) late() bool         { return s.last-s.first < LateWorkerNS }
func (s *spanStream) unordered() bool    { return s.broken }

// turnaround is turnaroundProblem of the swept spans for the stream's
// conc workers (the cell's, the one argument checkOfferedCell passes),
// asked only when the peak is at most conc. Its busy time is exact (an
// integer sum; the held spans' float sum equals it while it stays below
// 2⁵³ ns).
func (s *spanStream) turnaround(int64) string {
	n, conc := s.n, s.conc
	if conc < 1 || n-conc < minTurnarounds || s.noGaps {
		return ""
	}
	lo, hi := s.lo, s.last
	m := n - conc
	if hi <= lo || m/2 < s.lowGaps {
		return ""
	}
	slices.Sort(s.highGaps)
	median := s.highGaps[m/2-s.lowGaps]
	// The time in flight within [lo, hi] is Σ (hi − max(send, lo)) over
	// the sends less Σ (hi − max(end, lo)) over the ends up to hi (those
	// passed: every end later than hi is still in the heap).
	var b int128
	b.add(hi, n-s.passed)
	b.add(-lo, conc-1)
	b.add(lo, s.early)
	b.sub(s.startSum)
	b.addInt(s.endSum)
	busy, _ := b.big().Float64()
	idle := 1 - busy/(float64(conc)*float64(hi-lo))
	if idle <= MaxIdleShare {
		return ""
	}
	return turnaroundText(conc, idle, median)
}

// int128 is a two's complement 128-bit integer, for sums of int64.
type int128 struct {
	hi int64
	lo uint64
}

// add adds k·x (k ≥ 0, k·x within 128 bits).
func (a *int128) add(x, k int64) {
	if k <= 16 {
		for range k {
			a.addInt(int128{hi: x >> 63, lo: uint64(x)})
		}
		return
	}
	p := new(big.Int).Mul(big.NewInt(x), big.NewInt(k))
	a.addInt(int128FromBig(p))
}

func (a *int128) addInt(b int128) {
	var c uint64
	a.lo, c = bits.Add64(a.lo, b.lo, 0)
	a.hi += b.hi + int64(c)
}

func (a *int128) sub(b int128) {
	var c uint64
	a.lo, c = bits.Sub64(a.lo, b.lo, 0)
	a.hi -= b.hi + int64(c)
}

func (a int128) big() *big.Int {
	b := big.NewInt(a.hi)
	b.Lsh(b, 64)
	return b.Add(b, new(big.Int).SetUint64(a.lo))
}

func int128FromBig(p *big.Int) int128 {
	lo := new(big.Int).And(p, new(big.Int).SetUint64(^uint64(0))).Uint64()
	return int128{hi: new(big.Int).Rsh(p, 64).Int64(), lo: lo}
}

// heapPush and heapPop keep h a binary min-heap under less (container/heap
// without an allocation per element).
func heapPush[T any](h []T, x T, less func(a, b T) bool) []T {
	h = append(h, x)
	for i := len(h) - 1; i > 0; {
		p := (i - 1) / 2
		if !less(h[i], h[p]) {
			break
		}
		h[i], h[p] = h[p], h[i]
		i = p
	}
	return h
}

func heapPop[T any](h []T, less func(a, b T) bool) (T, []T) {
	top := h[0]
	n := len(h) - 1
	h[0] = h[n]
	h = h[:n]
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < n && less(h[l], h[m]) {
			m = l
		}
		if r := l + 1; r < n && less(h[r], h[m]) {
			m = r
		}
		if m == i {
			break
		}
		h[i], h[m] = h[m], h[i]
		i = m
	}
	return top, h
}
