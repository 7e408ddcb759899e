package schema

import (
	"encoding/binary"
	"iter"
	"math/bits"
)

// SpanLog holds [sent, end] spans (a point × repeat's measured requests)
// compactly, in the order added: each as the varints of its send minus the previous span's send
// and of end − sent. The differences wrap in two's complement, so every
// pair of int64 comes back exactly. A point's sends are close together
// and its latencies short: about 8 bytes a span, not 16.
type SpanLog struct {
	buf []byte
	n   int
	// size is the bytes the spans added take, also those only counted.
	size int
	prev int64
}

// Add appends the span [sent, end].
func (l *SpanLog) Add(sent, end int64) {
	l.buf = binary.AppendVarint(l.buf, sent-l.prev)
	l.buf = binary.AppendVarint(l.buf, end-sent)
	l.Count(sent, end)
}

// Count adds what Add would to Len, Size and the previous send, without
// storing the span (the first of two passes over the records).
func (l *SpanLog) Count(sent, end int64) {
	l.size += varintLen(sent-l.prev) + varintLen(end-sent)
	l.prev = sent
	l.n++
}

// varintLen is the length of binary.AppendVarint(nil, x).
func varintLen(x int64) int {
	ux := uint64(x) << 1
	if x < 0 {
		ux = ^ux
	}
	return (bits.Len64(ux|1) + 6) / 7
}

// Len is the number of spans added or counted.
func (l *SpanLog) Len() int { return l.n }

// Size is the bytes the spans added or counted take.
func (l *SpanLog) Size() int { return l.size }

// Reserve makes room for spans taking n bytes (a second pass sizes its log
// from the first's Size), so that adding them never grows a slice.
func (l *SpanLog) Reserve(n int) { l.buf = make([]byte, 0, n) }

// Drop frees the stored spans; Len and Size go on counting.
func (l *SpanLog) Drop() { l.buf = nil }

// All yields the stored spans with their index, in the order added.
func (l *SpanLog) All() iter.Seq2[int, [2]int64] {
	return func(yield func(int, [2]int64) bool) {
		b := l.buf
		var sent int64
		for i := 0; len(b) > 0; i++ {
			d, k := binary.Varint(b)
			e, k2 := binary.Varint(b[k:])
			b = b[k+k2:]
			sent += d
			if !yield(i, [2]int64{sent, sent + e}) {
				return
			}
		}
	}
}

// Values yields the stored spans, in the order added.
func (l *SpanLog) Values() iter.Seq[[2]int64] {
	return func(yield func([2]int64) bool) {
		for _, s := range l.All() {
			if !yield(s) {
				return
			}
		}
	}
}
