package replay

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"slices"

	"github.com/benchseal/benchseal/schema"
)

// The records of a replay's first pass, kept for its second. A run whose
// distributions spill (twopass.go) is read twice; reading it again from
// its source means decompressing, hashing (a bundle), decoding and
// validating every record a second time, about half of the replay's CPU
// at 1M requests. The first pass instead writes each record, as it was
// decoded, to a recordLog in a compact binary form, and the second pass
// decodes that: the same records, at a fraction of the cost. The log
// lives in memory up to logMemory bytes, then in a temporary file that is
// unlinked as soon as it is created, so that nothing is left behind even
// when the process is killed. When the file cannot be written (no
// temporary directory, a full disk) the log is abandoned and the second
// pass reads the source, as before: the answers never depend on the log.

// logMemory is how many bytes of log stay in memory before the log moves
// to a temporary file (a variable for tests); logFlush is the
// write-buffer size once it has.
var logMemory = 8 << 20

const logFlush = 1 << 20

// recordLog is the first pass's records, appended one at a time.
type recordLog struct {
	buf     []byte   // pending bytes: the whole log while f is nil
	f       *os.File // the temporary file, nil while the log is in memory
	name    string   // f's name while it is linked (unlinking it failed), else ""
	written int64    // bytes already in f
	n       int64    // records appended
	broken  bool     // a write failed: the log is abandoned
}

// maxLogFrame bounds one record's encoding; a record beyond it (a huge
// orig) abandons the log rather than allocating its size in the reader.
const maxLogFrame = 1<<31 - 1

// Presence bits of a logged record: which optional fields it has.
const (
	logItem = 1 << iota
	logShard
	logSession
	logTurn
	logScheduled
	logChunks
	logChunkTokens
	logServer
	logOrig
)

// add appends rec. After a failed write it does nothing: see usable.
func (l *recordLog) add(rec *schema.Record) {
	if l.broken {
		return
	}
	// A frame: its length (4 bytes, little-endian), then the record,
	// written in place.
	at := len(l.buf)
	l.buf = appendLogRecord(append(l.buf, 0, 0, 0, 0), rec)
	size := len(l.buf) - at - 4
	if size > maxLogFrame {
		l.abandon() // the second pass reads the source instead
		return
	}
	binary.LittleEndian.PutUint32(l.buf[at:], uint32(size))
	l.n++
	switch {
	case l.f == nil && len(l.buf) > logMemory:
		f, name, err := createUnlinked("benchseal-replay-*.log")
		if err != nil {
			l.abandon()
			return
		}
		l.f, l.name = f, name
		l.flush()
	case l.f != nil && len(l.buf) >= logFlush:
		l.flush()
	}
}

func (l *recordLog) flush() {
	n, err := l.f.Write(l.buf)
	l.written += int64(n)
	if err != nil {
		l.abandon()
		return
	}
	l.buf = l.buf[:0]
}

// abandon gives the log up after a failed write, freeing what it holds.
func (l *recordLog) abandon() {
	l.broken = true
	l.buf = nil
	l.close()
}

// usable reports whether the log holds every record added. It first
// writes to the file what is still pending, so that a write failing there
// (a disk full as the first pass ends) also sends the second pass to the
// source rather than failing the replay.
func (l *recordLog) usable() bool {
	if !l.broken && l.f != nil && len(l.buf) > 0 {
		l.flush()
	}
	return !l.broken
}

// close frees the log and its file.
func (l *recordLog) close() {
	if l.f != nil {
		closeUnlinked(l.f, l.name)
		l.f, l.name = nil, ""
	}
}

// open returns an iterator over the records added, in order; the log must
// not be added to any more.
func (l *recordLog) open() (schema.RecordIterator, error) {
	if l.f == nil {
		return &logIterator{mem: l.buf, left: l.n}, nil
	}
	if !l.usable() { // written already when the pass asked usable
		return nil, errors.New("the records log could not be written")
	}
	r := bufio.NewReaderSize(io.NewSectionReader(l.f, 0, l.written), logFlush)
	return &logIterator{r: r, left: l.n}, nil
}

// appendLogRecord appends rec's encoding: its presence bits, then each
// field in Record's order. Integers are varints, integer arrays as
// appendLogInts writes them; chunk times are deltas from the previous
// chunk (the first is one already: chunk times count from SentNS), as is
// EndNS from SentNS, so that the typical value is small. Differences wrap
// like int64 arithmetic and are undone the same way, so every value comes
// back exactly.
func appendLogRecord(b []byte, rec *schema.Record) []byte {
	var bits uint64
	set := func(bit uint64, on bool) {
		if on {
			bits |= bit
		}
	}
	set(logItem, rec.Item != nil)
	set(logShard, rec.Shard != nil)
	set(logSession, rec.Session != nil)
	set(logTurn, rec.Turn != nil)
	set(logScheduled, rec.ScheduledNS != nil)
	set(logChunks, rec.ChunksNS != nil)
	set(logChunkTokens, rec.ChunkTokens != nil)
	set(logServer, rec.Server != nil)
	set(logOrig, rec.Orig != nil)
	b = binary.AppendUvarint(b, bits)
	b = appendLogString(b, rec.ID)
	b = appendLogString(b, rec.Point)
	b = binary.AppendVarint(b, int64(rec.Repeat))
	b = appendLogString(b, rec.Phase)
	for _, p := range [...]*int64{rec.Item, rec.Shard, rec.Session, rec.Turn, rec.ScheduledNS} {
		if p != nil {
			b = binary.AppendVarint(b, *p)
		}
	}
	b = binary.AppendVarint(b, rec.SentNS)
	b = binary.AppendVarint(b, rec.EndNS-rec.SentNS)
	b = appendLogInts(b, rec.ChunksNS, true)
	b = appendLogInts(b, rec.ChunkTokens, false)
	b = binary.AppendVarint(b, rec.InputTokens)
	b = binary.AppendVarint(b, rec.OutputTokens)
	b = appendLogString(b, rec.Status)
	b = appendLogString(b, rec.Error)
	b = binary.AppendVarint(b, rec.Retries)
	if s := rec.Server; s != nil {
		b = appendLogServer(b, s)
	}
	if rec.Orig != nil {
		b = binary.AppendUvarint(b, uint64(len(rec.Orig)))
		b = append(b, rec.Orig...)
	}
	return b
}

// How appendLogInts writes an array's values, named by the byte after
// its length (when it has elements): the narrowest of these that holds
// every value. The fixed widths hold what benchmark tools write (chunk
// times some milliseconds apart, one token a chunk) and decode without a
// varint's loop over bytes, which was most of the second pass's decoding
// at 1M requests. Writing the log is itself a cost (at 1M requests its
// ~250 MB took ~0.6 s of system time on an ext4 disk, a sixth of a
// verify's CPU), so chunk gaps under 16.7 ms take three bytes and an
// array of one repeated count (one token a chunk) one varint.
const (
	logVarints = iota // zigzag varints: any value
	logUint8          // one byte each: every value in [0, 2⁸)
	logUint32         // four bytes each, little-endian: every value in [0, 2³²)
	logUint24         // three bytes each, little-endian: every value in [0, 2²⁴)
	logSame           // one uvarint: every value equal, in [0, 2⁶³) (not delta)
)

// appendLogInts appends xs: its length, then, when it has elements, its
// encoding (logVarints ...) and its values, each the difference from the
// one before (the first from 0) when delta is set. Each array is read
// once in the common case: one loop writes every value at the width
// guessed for it (one byte for counts, four for deltas) while it learns
// the width they need; four bytes that fit in one are then compacted in
// place, and a guess too narrow (or varints: a value past 2³² or below
// 0, rare) writes the array again.
func appendLogInts(b []byte, xs []int64, delta bool) []byte {
	b = binary.AppendUvarint(b, uint64(len(xs)))
	if len(xs) == 0 {
		return b
	}
	if !delta {
		if out, ok := appendLogSame(b, xs); ok {
			return out
		}
		if out, ok := appendLogBytes(b, xs); ok {
			return out
		}
	}
	at := len(b) + 1 // after the encoding's byte
	b = slices.Grow(b, 1+4*len(xs))[:at+4*len(xs)]
	out := b[at:]
	// A negative value sets the high bits, so it takes varints.
	var bits uint64
	if delta {
		prev, o := int64(0), out
		for _, x := range xs {
			d := uint64(x - prev)
			prev = x
			bits |= d
			if len(o) < 4 {
				break // never (out holds four bytes a value): spares the bounds checks
			}
			binary.LittleEndian.PutUint32(o, uint32(d))
			o = o[4:]
		}
	} else {
		for k, x := range xs {
			bits |= uint64(x)
			binary.LittleEndian.PutUint32(out[4*k:], uint32(x))
		}
	}
	switch {
	case bits < 1<<8:
		b[at-1] = logUint8
		// Byte k moves from 4k, at or after k: forward is safe.
		for k := range xs {
			out[k] = out[4*k]
		}
		return b[:at+len(xs)]
	case bits < 1<<24:
		b[at-1] = logUint24
		// Bytes 3k..3k+2 move from 4k..4k+2, at or after them: forward
		// is safe.
		for k := range xs {
			copy(out[3*k:3*k+3], out[4*k:4*k+3])
		}
		return b[:at+3*len(xs)]
	case bits < 1<<32:
		b[at-1] = logUint32
		return b
	}
	b = append(b[:at-1], logVarints)
	prev := int64(0)
	for _, x := range xs {
		if delta {
			x, prev = x-prev, x
		}
		b = binary.AppendVarint(b, x)
	}
	return b
}

// logSameMax is the longest array written as logSame: the reader
// allocates an array's length before its values, and logSame's few bytes
// do not bound it.
const logSameMax = 1 << 16

// appendLogSame appends xs (not empty) as logSame when every value is
// the same one, not negative, and xs is at most logSameMax long; ok false
// (and b unchanged) otherwise.
func appendLogSame(b []byte, xs []int64) (_ []byte, ok bool) {
	v := xs[0]
	if v < 0 || len(xs) > logSameMax {
		return b, false
	}
	for _, x := range xs[1:] {
		if x != v {
			return b, false
		}
	}
	return binary.AppendUvarint(append(b, logSame), uint64(v)), true
}

// appendLogBytes appends xs (not empty) as logUint8 when every value is
// in [0, 2⁸); ok false (and b's length unchanged) when one is not.
func appendLogBytes(b []byte, xs []int64) (_ []byte, ok bool) {
	at := len(b) + 1
	b = slices.Grow(b, 1+len(xs))[:at+len(xs)]
	b[at-1] = logUint8
	out := b[at:]
	var bits uint64
	for k, x := range xs {
		bits |= uint64(x)
		out[k] = byte(x)
	}
	if bits >= 1<<8 {
		return b[:at-1], false
	}
	return b, true
}

func appendLogString(b []byte, s string) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

// appendLogServer appends a server report: a bit per field present, then
// the fields present.
func appendLogServer(b []byte, s *schema.ServerReport) []byte {
	fields := logServerFields(s)
	var bits uint64
	for i, p := range fields {
		if *p != nil {
			bits |= 1 << i
		}
	}
	b = binary.AppendUvarint(b, bits)
	for _, p := range fields {
		if *p != nil {
			b = binary.AppendVarint(b, **p)
		}
	}
	return b
}

// logServerFields lists a server report's fields in the log's order.
func logServerFields(s *schema.ServerReport) [6]**int64 {
	return [6]**int64{&s.CachedTokens, &s.PromptN, &s.CacheN, &s.PredictedN, &s.PromptNS, &s.PredictedNS}
}

// logIterator decodes a recordLog: the log in memory (mem), else read
// from its file through r. Its records' slices alias its buffers until
// the next call, as schema's decoder's do (recordInto).
type logIterator struct {
	mem    []byte
	r      *bufio.Reader
	left   int64
	frame  []byte // a frame larger than r's buffer, copied
	chunks []int64
	tokens []int64
	orig   []byte
	// intern keeps one copy of each point, phase and status, which
	// repeat on every record.
	intern map[string]string
}

// errLogCorrupt is a log that does not decode: benchseal wrote it in this
// process, so this is a bug or a failing disk, not a bad input.
var errLogCorrupt = errors.New("replay: the records log of the first pass does not decode")

// Next implements schema.RecordIterator.
func (it *logIterator) Next() (*schema.Record, error) {
	rec := new(schema.Record)
	if err := it.NextInto(rec); err != nil {
		return nil, err
	}
	// Owned copies: Next's records outlive the call.
	rec.ChunksNS = cloneNil(rec.ChunksNS)
	rec.ChunkTokens = cloneNil(rec.ChunkTokens)
	if rec.Orig != nil {
		rec.Orig = append([]byte{}, rec.Orig...)
	}
	return rec, nil
}

func cloneNil(s []int64) []int64 {
	if s == nil {
		return nil
	}
	return append([]int64{}, s...)
}

// NextInto decodes the next record into rec (recordInto).
func (it *logIterator) NextInto(rec *schema.Record) error {
	if it.left == 0 {
		return io.EOF
	}
	frame, peeked, err := it.nextFrame()
	if err != nil {
		return fmt.Errorf("%w: %w", errLogCorrupt, err)
	}
	it.left--
	d := logDecoder{b: frame, it: it}
	d.record(rec)
	if peeked > 0 {
		_, _ = it.r.Discard(peeked) // buffered: it cannot fail
	}
	if d.bad || d.i != len(d.b) {
		return errLogCorrupt
	}
	return nil
}

// nextFrame returns the next frame's record bytes where they lie, so
// that no frame is copied: in the log in memory, or in r's buffer, which
// the caller moves past once the frame is decoded (peeked bytes: its
// length and the frame). Only a frame larger than that buffer is copied,
// into it.frame. A frame cut short is io.ErrUnexpectedEOF.
func (it *logIterator) nextFrame() (frame []byte, peeked int, err error) {
	if it.r == nil {
		if len(it.mem) < 4 {
			return nil, 0, io.ErrUnexpectedEOF
		}
		size := uint64(binary.LittleEndian.Uint32(it.mem))
		if size > uint64(len(it.mem)-4) {
			return nil, 0, io.ErrUnexpectedEOF
		}
		frame, it.mem = it.mem[4:4+size], it.mem[4+size:]
		return frame, 0, nil
	}
	head, err := it.r.Peek(4)
	if err != nil {
		return nil, 0, unexpectedEOF(err)
	}
	size := int(binary.LittleEndian.Uint32(head))
	if 4+size <= it.r.Size() {
		b, err := it.r.Peek(4 + size)
		if err != nil {
			return nil, 0, unexpectedEOF(err)
		}
		return b[4:], 4 + size, nil
	}
	if _, err := it.r.Discard(4); err != nil {
		return nil, 0, unexpectedEOF(err)
	}
	if cap(it.frame) < size {
		it.frame = make([]byte, size)
	}
	it.frame = it.frame[:size]
	if _, err := io.ReadFull(it.r, it.frame); err != nil {
		return nil, 0, err
	}
	return it.frame, 0, nil
}

// unexpectedEOF is err, as io.ErrUnexpectedEOF when the log ended: a log
// ends only after its last frame, so that is a frame cut short.
func unexpectedEOF(err error) error {
	if err == io.EOF {
		return io.ErrUnexpectedEOF
	}
	return err
}

// logDecoder decodes one record's frame; bad is set by any read past it.
type logDecoder struct {
	b   []byte
	i   int
	bad bool
	it  *logIterator
}

func (d *logDecoder) uvarint() uint64 {
	v, n := binary.Uvarint(d.b[d.i:])
	if n <= 0 {
		d.bad, d.i = true, len(d.b)
		return 0
	}
	d.i += n
	return v
}

func (d *logDecoder) varint() int64 {
	v, n := binary.Varint(d.b[d.i:])
	if n <= 0 {
		d.bad, d.i = true, len(d.b)
		return 0
	}
	d.i += n
	return v
}

// bytes returns the next length-prefixed bytes, aliasing the frame.
func (d *logDecoder) bytes() []byte {
	n := d.uvarint()
	if n > uint64(len(d.b)-d.i) {
		d.bad, d.i = true, len(d.b)
		return nil
	}
	s := d.b[d.i : d.i+int(n)]
	d.i += int(n)
	return s
}

// interned returns the next string, one copy per distinct value.
func (d *logDecoder) interned() string {
	b := d.bytes()
	if s, ok := d.it.intern[string(b)]; ok {
		return s
	}
	s := string(b)
	if len(d.it.intern) < 1<<12 {
		if d.it.intern == nil {
			d.it.intern = map[string]string{}
		}
		d.it.intern[s] = s
	}
	return s
}

// record decodes the fields appendLogRecord wrote, in its order.
func (d *logDecoder) record(rec *schema.Record) {
	bits := d.uvarint()
	*rec = schema.Record{ID: string(d.bytes()), Point: d.interned(), Repeat: int(d.varint()), Phase: d.interned()}
	opt := func(bit uint64) *int64 {
		if bits&bit == 0 {
			return nil
		}
		v := d.varint()
		return &v
	}
	rec.Item, rec.Shard, rec.Session, rec.Turn, rec.ScheduledNS = opt(logItem), opt(logShard), opt(logSession), opt(logTurn), opt(logScheduled)
	rec.SentNS = d.varint()
	rec.EndNS = rec.SentNS + d.varint()
	rec.ChunksNS, d.it.chunks = d.ints(bits&logChunks != 0, d.it.chunks, 0, true)
	rec.ChunkTokens, d.it.tokens = d.ints(bits&logChunkTokens != 0, d.it.tokens, 0, false)
	rec.InputTokens, rec.OutputTokens = d.varint(), d.varint()
	rec.Status, rec.Error = d.interned(), string(d.bytes())
	rec.Retries = d.varint()
	if bits&logServer != 0 {
		rec.Server = d.server()
	}
	if bits&logOrig != 0 {
		if d.it.orig == nil {
			d.it.orig = []byte{} // present and empty is not absent
		}
		d.it.orig = append(d.it.orig[:0], d.bytes()...)
		rec.Orig = d.it.orig[:len(d.it.orig):len(d.it.orig)]
	}
}

// ints decodes an integer array appendLogInts wrote into buf (reused):
// nil when the record had none (present false), summed from deltas
// (starting at prev) when delta is set.
func (d *logDecoder) ints(present bool, buf []int64, prev int64, delta bool) ([]int64, []int64) {
	// Every encoding but logSame takes a byte a value at least, which
	// bounds n by the bytes left; logSame's n by logSameMax.
	n := int(min(d.uvarint(), uint64(len(d.b))+logSameMax+1))
	if n > len(d.b)-d.i && n > logSameMax {
		d.bad, d.i = true, len(d.b)
		return nil, buf
	}
	if !present {
		return nil, buf
	}
	buf = slices.Grow(buf[:0], n)[:n]
	if buf == nil {
		buf = []int64{} // present and empty is not absent
	}
	if n == 0 {
		return buf[:0:0], buf
	}
	mode, width := d.uvarint(), 0
	switch mode {
	case logUint8:
		width = 1
	case logUint24:
		width = 3
	case logUint32:
		width = 4
	case logVarints:
		if n > len(d.b)-d.i {
			d.bad, d.i = true, len(d.b)
			return nil, buf
		}
		return d.varints(buf, prev, delta)
	case logSame:
		v := d.uvarint()
		if delta || v > math.MaxInt64 {
			d.bad, d.i = true, len(d.b)
			return nil, buf
		}
		for k := range buf {
			buf[k] = int64(v)
		}
		return buf[:n:n], buf
	}
	if width == 0 || n > (len(d.b)-d.i)/width {
		d.bad, d.i = true, len(d.b)
		return nil, buf
	}
	src := d.b[d.i : d.i+n*width]
	d.i += n * width
	// One loop per width and delta, each summing as it widens.
	switch {
	case width == 1 && delta:
		for k, c := range src {
			prev += int64(c)
			buf[k] = prev
		}
	case width == 1:
		for k, c := range src {
			buf[k] = int64(c)
		}
	case width == 3 && delta:
		for k := range buf {
			prev += int64(src[3*k]) | int64(src[3*k+1])<<8 | int64(src[3*k+2])<<16
			buf[k] = prev
		}
	case width == 3:
		for k := range buf {
			buf[k] = int64(src[3*k]) | int64(src[3*k+1])<<8 | int64(src[3*k+2])<<16
		}
	case delta:
		for k := range buf {
			prev += int64(binary.LittleEndian.Uint32(src[4*k:]))
			buf[k] = prev
		}
	default:
		for k := range buf {
			buf[k] = int64(binary.LittleEndian.Uint32(src[4*k:]))
		}
	}
	return buf[:n:n], buf
}

// varints decodes len(buf) zigzag varints into buf (ints' logVarints).
func (d *logDecoder) varints(buf []int64, prev int64, delta bool) ([]int64, []int64) {
	b, i := d.b, d.i
	for k := range buf {
		var u uint64
		for s := uint(0); ; s += 7 {
			if i >= len(b) || s > 63 {
				d.bad, d.i = true, len(b)
				return nil, buf
			}
			c := b[i]
			i++
			u |= uint64(c&0x7f) << s
			if c < 0x80 {
				break
			}
		}
		v := int64(u>>1) ^ -int64(u&1) // zigzag, as binary.AppendVarint
		if delta {
			v += prev
			prev = v
		}
		buf[k] = v
	}
	d.i = i
	return buf[:len(buf):len(buf)], buf
}

func (d *logDecoder) server() *schema.ServerReport {
	s := new(schema.ServerReport)
	bits := d.uvarint()
	for i, p := range logServerFields(s) {
		if bits&(1<<i) != 0 {
			v := d.varint()
			*p = &v
		}
	}
	return s
}

// Close implements schema.RecordIterator.
func (it *logIterator) Close() error { return nil }

// teeIterator is the first pass's iterator: each record it returns is
// also added to log.
type teeIterator struct {
	it  schema.RecordIterator
	log *recordLog
}

// Next implements schema.RecordIterator.
func (t *teeIterator) Next() (*schema.Record, error) {
	rec, err := t.it.Next()
	if err == nil {
		t.log.add(rec)
	}
	return rec, err
}

// NextInto decodes into rec when the source can (recordInto), else
// copies its next record there.
func (t *teeIterator) NextInto(rec *schema.Record) error {
	if in, ok := t.it.(recordInto); ok {
		if err := in.NextInto(rec); err != nil {
			return err
		}
	} else {
		r, err := t.it.Next()
		if err != nil {
			return err
		}
		*rec = *r
	}
	t.log.add(rec)
	return nil
}

// Problems passes on the problems of a validating source (problemsSoFar).
func (t *teeIterator) Problems() error {
	if p, ok := t.it.(problemsSoFar); ok {
		return p.Problems()
	}
	return nil
}

// Close implements schema.RecordIterator.
func (t *teeIterator) Close() error { return t.it.Close() }
