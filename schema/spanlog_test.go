package schema

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"
)

// TestSpanLogRoundTrips: every [sent, end] pair comes back exactly and in
// order, extremes of int64 included (the differences wrap), and size
// counts the bytes add appends, stored or only counted.
func TestSpanLogRoundTrips(t *testing.T) {
	rng := rand.New(rand.NewPCG(9, 10))
	spans := [][2]int64{{0, 0}, {math.MaxInt64, math.MinInt64}, {math.MinInt64, math.MaxInt64}, {5, 3}, {-7, 1 << 62}}
	for range 10000 {
		s := rng.Int64N(1 << 40)
		spans = append(spans, [2]int64{s, s + rng.Int64N(1<<33)})
	}
	var l, counted SpanLog
	for _, s := range spans {
		l.Add(s[0], s[1])
		counted.Count(s[0], s[1])
	}
	if l.Len() != len(spans) || l.size != len(l.buf) || counted.size != l.size || counted.Len() != l.Len() {
		t.Fatalf("len %d size %d bytes %d counted %d/%d, want %d spans", l.Len(), l.size, len(l.buf), counted.Len(), counted.size, len(spans))
	}
	i := 0
	for j, s := range l.All() {
		if j != i || s != spans[i] {
			t.Fatalf("span %d = %v (index %d), want %v", i, s, j, spans[i])
		}
		i++
	}
	if i != len(spans) {
		t.Fatalf("%d spans read, want %d", i, len(spans))
	}
	for _, x := range []int64{0, 1, -1, 63, 64, -64, -65, math.MaxInt64, math.MinInt64} {
		if got, want := varintLen(x), len(binary.AppendVarint(nil, x)); got != want {
			t.Errorf("varintLen(%d) = %d, want %d", x, got, want)
		}
	}
}
