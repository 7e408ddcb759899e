package replay

import (
	"encoding/binary"
	"iter"
	"math/bits"
)

// spanLog holds a group's [sent, end] spans compactly, in the order
// added: each as the varints of its send minus the previous span's send
// and of end − sent. The differences wrap in two's complement, so every
// pair of int64 comes back exactly. A point's sends are close together
// and its latencies short: about 8 bytes a span, not 16.
type spanLog struct {
	buf []byte
	n   int
	// size is the bytes the spans added take, also those only counted.
	size int
	prev int64
}

// add appends the span [sent, end].
func (l *spanLog) add(sent, end int64) {
	l.buf = binary.AppendVarint(l.buf, sent-l.prev)
	l.buf = binary.AppendVarint(l.buf, end-sent)
	l.count(sent, end)
}

// count adds what add would to the count, the size and the previous
// send, without storing the span (the first of two passes).
func (l *spanLog) count(sent, end int64) {
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

// len is the number of spans.
func (l *spanLog) len() int { return l.n }

// all yields the stored spans with their index, in the order added.
func (l *spanLog) all() iter.Seq2[int, [2]int64] {
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

// values yields the stored spans, in the order added.
func (l *spanLog) values() iter.Seq[[2]int64] {
	return func(yield func([2]int64) bool) {
		for _, s := range l.all() {
			if !yield(s) {
				return
			}
		}
	}
}
