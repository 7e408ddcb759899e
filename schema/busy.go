package schema

import "slices"

// Span is an interval [StartNS, EndNS] of the run's clock.
type Span struct {
	StartNS, EndNS int64
}

// busySpans keeps the union of the records' [sent_ns, end_ns] intervals:
// when some request of the run was in flight. Records in order of start
// extend or follow the last span; one out of order is merged at finish.
// It holds one span per idle gap, at most one per record.
type busySpans struct {
	spans    []Span
	unsorted bool
}

// add adds a record's interval.
func (b *busySpans) add(start, end int64) {
	end = max(end, start)
	n := len(b.spans)
	switch {
	case n == 0 || start > b.spans[n-1].EndNS:
		if n > 0 && start < b.spans[n-1].StartNS {
			b.unsorted = true
		}
		b.spans = append(b.spans, Span{start, end})
	case start >= b.spans[n-1].StartNS:
		b.spans[n-1].EndNS = max(b.spans[n-1].EndNS, end)
	default:
		b.unsorted = true
		b.spans = append(b.spans, Span{start, end})
	}
}

// finish returns the union as disjoint spans in time order.
func (b *busySpans) finish() []Span {
	if !b.unsorted {
		return b.spans
	}
	slices.SortFunc(b.spans, func(x, y Span) int {
		switch {
		case x.StartNS < y.StartNS:
			return -1
		case x.StartNS > y.StartNS:
			return 1
		}
		return 0
	})
	out := b.spans[:0]
	for _, s := range b.spans {
		if n := len(out); n > 0 && s.StartNS <= out[n-1].EndNS {
			out[n-1].EndNS = max(out[n-1].EndNS, s.EndNS)
			continue
		}
		out = append(out, s)
	}
	return out
}

// IdleBetween reports whether no span of busy (disjoint, in time order,
// as RunSummary.Busy) meets the open interval (fromNS, toNS): no request
// of the run was in flight between the two instants.
func IdleBetween(busy []Span, fromNS, toNS int64) bool {
	i, _ := slices.BinarySearchFunc(busy, fromNS, func(s Span, t int64) int {
		switch {
		case s.EndNS <= t:
			return -1
		}
		return 1
	})
	// busy[i] is the first span ending after fromNS.
	return i == len(busy) || busy[i].StartNS >= toNS
}
