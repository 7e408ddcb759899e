package replay

import (
	"encoding/binary"
	"errors"
	"fmt"
	"iter"
	"os"
)

// The overload test reads every measured request's span and kind, and an
// open loop's schedule, after the records are read (overloadData). Held
// in memory that is about 9 bytes a request, 25 with a schedule. Once the
// groups of a pass hold overloadHeld requests, every group writes them to
// one temporary file instead (spillFile), in chunks of its own, and reads
// them back in the order written; the test runs the same arithmetic in the
// same order over them, so its answers are those of the held data. The
// file is removed as soon as it is created where the system allows it (an
// open file stays readable), else when the pass's data is closed.

// overloadHeld is the number of measured requests the groups of a pass
// hold in memory for the overload test before they write them to a file
// (about 9 MiB held, 25 with schedules).
var overloadHeld int64 = 1 << 20

// spillChunk is the size of a group's chunk buffer, written to the file
// when full; an entry takes at most maxSpillEntry bytes (three varints and
// a kind byte).
var spillChunk = 32 << 10

const maxSpillEntry = 3*binary.MaxVarintLen64 + 1

// spillFile is a pass's temporary file of overload data (and, named by
// pattern, a GuideLLM rate stream's: guidellm_spill.go). It is written by
// the pass's one reader of records and read, once they are all read, by
// the goroutines finishing the groups (readAt). When no file can be made
// or a write fails (no TMPDIR, a full disk, a file-size limit), what
// follows is held in memory instead, past the end of what the file holds:
// the memory bound is lost, never the answer, as with the records log
// (recordlog.go). err is kept for the pass to report, but no write sets
// it.
type spillFile struct {
	f *os.File
	// name is removed at close when it could not be removed at once.
	name string
	// size is the bytes the file holds; mem, the bytes after them.
	size  int64
	mem   []byte
	inMem bool
	err   error
	// held counts the requests the groups hold in memory; on: from now
	// on every group writes its requests to the file.
	held int64
	on   bool
	// pattern names the file (os.CreateTemp); "" is the overload test's.
	pattern string
}

// hold counts one request held in memory; past overloadHeld every group
// spills.
func (s *spillFile) hold() {
	if s.held++; s.held > overloadHeld {
		s.on = true
	}
}

// open creates the file in the temporary directory (os.TempDir: TMPDIR).
func (s *spillFile) open() error {
	pattern := s.pattern
	if pattern == "" {
		pattern = "benchseal-replay-*.overload"
	}
	f, name, err := createUnlinked(pattern)
	if err != nil {
		return err
	}
	s.f, s.name = f, name
	return nil
}

// write appends b and returns its offset; ok is always true (kept for the
// callers' shape: a chunk not written is one held).
func (s *spillFile) write(b []byte) (off int64, ok bool) {
	if s.f == nil && !s.inMem && s.open() != nil {
		s.inMem = true
	}
	if !s.inMem {
		n, err := s.f.Write(b)
		if err == nil {
			off = s.size
			s.size += int64(n)
			return off, true
		}
		// The partial bytes past size are never read.
		s.inMem = true
	}
	off = s.size + int64(len(s.mem))
	s.mem = append(s.mem, b...)
	return off, true
}

// readAt fills p from offset off, from the file, from memory or (bytes
// written in more than one write) from both.
func (s *spillFile) readAt(p []byte, off int64) error {
	if off >= s.size {
		if copy(p, s.mem[off-s.size:]) < len(p) {
			return errSpillCorrupt
		}
		return nil
	}
	k := min(int64(len(p)), s.size-off)
	if _, err := s.f.ReadAt(p[:k], off); err != nil {
		return err
	}
	return s.readAt(p[k:], s.size)
}

// close closes and removes the file and frees what memory holds (nil or
// never opened: nothing to do).
func (s *spillFile) close() {
	if s == nil {
		return
	}
	s.mem = nil
	if s.f == nil {
		return
	}
	closeUnlinked(s.f, s.name)
	s.f, s.name = nil, ""
}

// spillChunks is one stream of a group's spilled entries: the chunks
// written (offset and length in the file) and the last, still in buf.
// prev is the first field of the entry before (entries store differences).
type spillChunks struct {
	ext  [][2]int64
	buf  []byte
	prev int64
	n    int64
}

// put appends the entry of a and b (a − prev and b as varints) and
// extra, and writes the chunk to f when it is full.
func (c *spillChunks) put(f *spillFile, a, b int64, extra ...byte) {
	if c.buf == nil {
		c.buf = make([]byte, 0, spillChunk)
	}
	c.buf = binary.AppendVarint(c.buf, a-c.prev)
	c.buf = binary.AppendVarint(c.buf, b)
	c.buf = append(c.buf, extra...)
	c.prev = a
	c.n++
	if len(c.buf) > spillChunk-maxSpillEntry {
		if off, ok := f.write(c.buf); ok {
			c.ext = append(c.ext, [2]int64{off, int64(len(c.buf))})
		}
		c.buf = c.buf[:0]
	}
}

// errSpillCorrupt is a chunk read back that does not decode.
var errSpillCorrupt = errors.New("a chunk read back does not decode")

// each calls fn for every entry, in the order put: a (summed back), b and,
// when withKind, the byte after them. A read error is kept in *errp and
// ends the walk.
func (c *spillChunks) each(f *spillFile, withKind bool, errp *error, fn func(a, b int64, kind uint8) bool) {
	var rb []byte
	var a int64
	walk := func(p []byte) bool {
		for len(p) > 0 {
			d, k1 := binary.Varint(p)
			if k1 <= 0 {
				*errp = errSpillCorrupt
				return false
			}
			b, k2 := binary.Varint(p[k1:])
			k, kind := k1+k2, uint8(0)
			if k2 <= 0 || (withKind && k >= len(p)) {
				*errp = errSpillCorrupt
				return false
			}
			if withKind {
				kind, k = p[k], k+1
			}
			p, a = p[k:], a+d
			if !fn(a, b, kind) {
				return false
			}
		}
		return true
	}
	for _, e := range c.ext {
		if int64(cap(rb)) < e[1] {
			rb = make([]byte, e[1])
		}
		rb = rb[:e[1]]
		if err := f.readAt(rb, e[0]); err != nil {
			*errp = fmt.Errorf("read back the overload test's per-request data: %w", err)
			return
		}
		if !walk(rb) {
			return
		}
	}
	walk(c.buf)
}

// spill moves the requests d holds to the file; from now on add writes
// them there.
func (d *overloadData) spill() {
	d.spilled = true
	for i, s := range d.spans.All() {
		d.putSpan(s, d.kinds[i])
	}
	for _, l := range d.lags {
		d.putLag(l)
	}
	d.file.held -= int64(len(d.kinds))
	d.spans.Drop()
	d.kinds, d.lags = nil, nil
}

// putSpan writes a span and its kind (spilled).
func (d *overloadData) putSpan(s [2]int64, k uint8) {
	d.inverted = d.inverted || s[1] < s[0]
	d.ent.put(d.file, s[0], s[1]-s[0], k)
}

// putLag writes a [scheduled, lag] pair (spilled).
func (d *overloadData) putLag(l [2]int64) {
	if d.lag.n > 0 && l[0] < d.lag.prev {
		d.lagsUnsorted = true
	}
	d.lag.put(d.file, l[0], l[1])
}

// entries yields the measured requests' spans and kinds in the order
// added, held or spilled.
func (d *overloadData) entries() iter.Seq2[[2]int64, uint8] {
	return func(yield func([2]int64, uint8) bool) {
		if !d.spilled {
			for i, s := range d.spans.All() {
				if !yield(s, d.kinds[i]) {
					return
				}
			}
			return
		}
		d.ent.each(d.file, true, &d.readErr, func(sent, e2e int64, k uint8) bool {
			return yield([2]int64{sent, sent + e2e}, k)
		})
	}
}

// spanValues yields the spans alone.
func (d *overloadData) spanValues() iter.Seq[[2]int64] {
	return func(yield func([2]int64) bool) {
		for s := range d.entries() {
			if !yield(s) {
				return
			}
		}
	}
}

// nLags is the number of [scheduled, lag] pairs added.
func (d *overloadData) nLags() int64 {
	if d.spilled {
		return d.lag.n
	}
	return int64(len(d.lags))
}

// sortedLags returns the [scheduled, lag] pairs sorted by scheduled as
// the held pairs sort (sortLags, in place). Spilled pairs that came in
// schedule order are read back as they are: a sort leaves a sorted slice
// as it is (pdqsort returns at once on one in order, and sorts a short
// one by insertion), so their order is the one it would give. Pairs out
// of order are read back into memory and sorted there, so that pairs
// with equal schedules end in the order the sort gives.
func (d *overloadData) sortedLags() iter.Seq[[2]int64] {
	if d.spilled && !d.lagsUnsorted {
		return func(yield func([2]int64) bool) {
			d.lag.each(d.file, false, &d.readErr, func(s, l int64, _ uint8) bool { return yield([2]int64{s, l}) })
		}
	}
	if d.spilled {
		d.lags = make([][2]int64, 0, d.lag.n)
		d.lag.each(d.file, false, &d.readErr, func(s, l int64, _ uint8) bool {
			d.lags = append(d.lags, [2]int64{s, l})
			return true
		})
	}
	sortLags(d.lags)
	return func(yield func([2]int64) bool) {
		for _, l := range d.lags {
			if !yield(l) {
				return
			}
		}
	}
}

// spilledMedian is okMedian of spilled requests in bounded memory, as a
// spilled distribution selects its ranks (twopass.go): a first pass
// counts the successful requests' end − sent in coarse buckets, a second
// keeps those of the bucket holding the median's rank.
func (d *overloadData) spilledMedian() (int64, bool) {
	okDur := func(f func(int64)) {
		for s, k := range d.entries() {
			if k == kindOK {
				f(s[1] - s[0])
			}
		}
	}
	first := &intSpill{spill: newSpill()}
	okDur(func(x int64) { first.add(coarseBucket(x), x) })
	if first.n == 0 {
		return 0, false
	}
	r := []int64{(first.n-1)/2 + 1} // 1-based
	p := first.plan(r)
	second := intSamples{sp: &intSpill{spill: p, kept: make([][]int64, len(p.buckets))}}
	countDense(second.sp)
	okDur(second.addSpilled)
	if err := second.checkSpill(); err != nil && d.readErr == nil {
		d.readErr = err
	}
	return second.spilledRanks(r)[0], true
}
