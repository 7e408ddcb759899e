package schema

import (
	"slices"
	"testing"
)

func TestBusySpansAreTheUnionOfTheRecords(t *testing.T) {
	for _, c := range []struct {
		name string
		in   []Span
		want []Span
	}{
		{"in order with a gap", []Span{{0, 10}, {5, 20}, {30, 40}}, []Span{{0, 20}, {30, 40}}},
		{"touching", []Span{{0, 10}, {10, 12}}, []Span{{0, 12}}},
		{"out of order", []Span{{30, 40}, {0, 10}, {5, 35}}, []Span{{0, 40}}},
		{"out of order apart", []Span{{30, 40}, {0, 10}}, []Span{{0, 10}, {30, 40}}},
		{"end before start", []Span{{5, 3}}, []Span{{5, 5}}},
	} {
		var b busySpans
		for _, s := range c.in {
			b.add(s.StartNS, s.EndNS)
		}
		if got := b.finish(); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
}

func TestIdleBetween(t *testing.T) {
	busy := []Span{{0, 20}, {30, 40}}
	for _, c := range []struct {
		from, to int64
		want     bool
	}{
		{20, 30, true}, {21, 29, true}, {19, 30, false}, {20, 31, false}, {40, 100, true}, {-5, 0, true}, {-5, 1, false}, {25, 35, false},
	} {
		if got := IdleBetween(busy, c.from, c.to); got != c.want {
			t.Errorf("IdleBetween(%d, %d) = %v, want %v", c.from, c.to, got, c.want)
		}
	}
}
