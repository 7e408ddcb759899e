package replay

import (
	"math"
	"slices"
)

// GuideLLM's statistics (vllm-project/guidellm, src/guidellm/schemas/
// statistics.py, DistributionSummary), reimplemented in float64 operation
// for operation so that its published numbers can be checked:
//
//   - a value distribution sorts (value, weight) pairs by value, merges
//     equal values by adding their weights (in sorted order), drops
//     zero-weight values, and normalises the weights to probabilities
//     (uniform when their sum is ≤ 1e-6);
//   - mean = Σ value·probability, variance = Σ (value − mean)²·probability
//     (numpy pairwise sums), std = √variance, min and max the extreme
//     values, percentile q = the first value whose running (sequential)
//     sum of probabilities is ≥ q;
//   - a rate distribution turns timed events (time, occurrences) into the
//     value distribution of local rates: events are cut to the window
//     [start, end] (when given, the bounds are added as events of zero
//     occurrences), sorted, events at equal times merged, events within
//     glMergeThreshold of the start of a run merged into it, and each
//     event gets the duration from the midpoint with its predecessor to
//     the midpoint with its successor (half-intervals at both ends, the
//     last at least 1e-6 s); its rate occurrences ÷ duration is weighted
//     by that duration. Its mean is thus Σ occurrences ÷ span.

// glMergeThreshold is GuideLLM's threshold for merging nearby event times
// (s).
const glMergeThreshold = 1e-4

// glEpsilon is GuideLLM's probability tolerance, also the minimum duration
// of the last event of a rate distribution.
const glEpsilon = 1e-6

// glEvent is a timed event of a rate distribution: a time in epoch
// seconds and a number of occurrences (requests or tokens).
type glEvent struct{ t, w float64 }

// glSummarise fills d's statistics from (value, weight) pairs.
func glSummarise(d *Dist, xs, ws []float64) {
	if len(xs) == 0 {
		return
	}
	idx := make([]int, len(xs))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmpFloat(xs[a], xs[b]) })
	// Merge equal values (np.unique + np.add.at, in sorted order).
	var vals, wts []float64
	for _, j := range idx {
		if n := len(vals); n > 0 && vals[n-1] == xs[j] {
			wts[n-1] += ws[j]
			continue
		}
		vals = append(vals, xs[j])
		wts = append(wts, 0+ws[j])
	}
	// Drop zero (and negative) weights.
	k := 0
	for i := range vals {
		if wts[i] > 0 {
			vals[k], wts[k] = vals[i], wts[i]
			k++
		}
	}
	vals, wts = vals[:k], wts[:k]
	total := pairwiseSum(wts)
	if total <= glEpsilon {
		for i := range wts {
			wts[i] = 1
		}
		total = pairwiseSum(wts)
	}
	if len(vals) == 0 {
		return
	}
	probs := make([]float64, len(wts))
	for i, w := range wts {
		probs[i] = w / total
	}
	tmp := make([]float64, len(vals))
	for i := range vals {
		tmp[i] = vals[i] * probs[i]
	}
	mean := pairwiseSum(tmp)
	for i := range vals {
		y := vals[i] - mean
		tmp[i] = y * y * probs[i]
	}
	d.Mean = Float(mean)
	d.Stddev = Float(math.Sqrt(pairwiseSum(tmp)))
	d.Min, d.Max = Float(vals[0]), Float(vals[len(vals)-1])
	cdf := make([]float64, len(probs))
	c := 0.0
	for i, p := range probs {
		c += p
		cdf[i] = c
	}
	for i, p := range Percentiles {
		q := p.Frac()
		j, _ := slices.BinarySearchFunc(cdf, q, cmpFloat) // first cdf ≥ q
		d.P[i] = Float(vals[min(j, len(vals)-1)])
	}
}

func cmpFloat(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// glRateDist is DistributionSummary.rate_distribution_from_timings over
// evs, cut to [start, end] when bounded. Its N is GuideLLM's count: the
// occurrences inside the window (rounded half to even), not the number of
// events.
func glRateDist(evs []glEvent, start, end float64, bounded bool) Dist {
	ev := make([]glEvent, 0, len(evs)+2)
	if bounded {
		ev = append(ev, glEvent{start, 0})
		for _, e := range evs {
			if e.t >= start && e.t <= end {
				ev = append(ev, e)
			}
		}
		ev = append(ev, glEvent{end, 0})
	} else {
		ev = append(ev, evs...)
	}
	slices.SortStableFunc(ev, func(a, b glEvent) int { return cmpFloat(a.t, b.t) })
	ev = glMergeEvents(ev)
	d := emptyDist()
	if len(ev) <= 1 {
		d.N = int64(len(ev))
		return d
	}
	n := len(ev)
	times := make([]float64, n)
	occ := make([]float64, n)
	for i, e := range ev {
		times[i], occ[i] = e.t, e.w
	}
	mid := make([]float64, n-1)
	for i := range mid {
		mid[i] = (times[i+1] + times[i]) / 2
	}
	dur := make([]float64, n)
	dur[0] = mid[0] - times[0]
	for i := 1; i < n-1; i++ {
		dur[i] = mid[i] - mid[i-1]
	}
	dur[n-1] = times[n-1] - mid[n-2]
	if dur[n-1] < glEpsilon {
		dur[n-1] = glEpsilon
	}
	rates := make([]float64, n)
	for i := range rates {
		rates[i] = occ[i] / dur[i]
	}
	d.N = int64(math.RoundToEven(pairwiseSum(occ)))
	glSummarise(&d, rates, dur)
	return d
}

// glMergeEvents merges events at equal times (adding occurrences in
// order), then, as GuideLLM's _merge_sorted_times_with_weights, repeatedly
// merges every run of events closer than glMergeThreshold to the run's
// first event into that event (its occurrences become the difference of
// running sums), until no two neighbours are that close. ev is sorted.
//
// GuideLLM recomputes every gap and running sum each round, and a chain
// of close events merges one run per round: O(n²). This gives the same
// events bit for bit in O(n log n) (glMergeEventsIterated, in the tests,
// is the round-by-round reference): a round changes the list only at the
// runs it merges, so only the events next to them can start a run in the
// next round, and a running sum is recomputed only from a merged run on
// until it equals the one before (the sums after it then are too).
func glMergeEvents(ev []glEvent) []glEvent {
	out := ev[:0:0]
	for _, e := range ev {
		if n := len(out); n > 0 && out[n-1].t == e.t {
			out[n-1].w += e.w
			continue
		}
		out = append(out, glEvent{e.t, 0 + e.w})
	}
	n := len(out)
	if n < 2 {
		return out
	}
	m := newGLMerge(out)
	cand := make([]int, 0, n)
	for i := range n {
		cand = append(cand, i)
	}
	for m.round(&cand) {
	}
	kept := out[:0:0]
	for i := 0; i < n; i = m.next[i] {
		kept = append(kept, out[i])
	}
	return kept
}

// glMerge is the state of glMergeEvents: the events still in the list
// (linked by next and prev; n ends it; gone marks the merged away) and
// cum[i], the running sum of the occurrences before event i (cum[n]: of
// all).
type glMerge struct {
	ev         []glEvent
	next, prev []int
	gone       []bool
	cum        []float64
}

func newGLMerge(ev []glEvent) *glMerge {
	n := len(ev)
	m := &glMerge{ev: ev, next: make([]int, n), prev: make([]int, n), gone: make([]bool, n), cum: make([]float64, n+1)}
	for i := range n {
		m.next[i], m.prev[i] = i+1, i-1
		m.cum[i+1] = m.cum[i] + ev[i].w
	}
	return m
}

// within reports whether event i's next one is within the threshold.
func (m *glMerge) within(i int) bool {
	j := m.next[i]
	return j < len(m.ev) && m.ev[j].t-m.ev[i].t <= glMergeThreshold
}

// start reports whether a run starts at event i: its gap is within the
// threshold and the one before it is not.
func (m *glMerge) start(i int) bool {
	return !m.gone[i] && m.within(i) && (m.prev[i] < 0 || !m.within(m.prev[i]))
}

// round runs one of GuideLLM's rounds over the run starts among cand
// (every run start is in cand), leaving in cand the events that can start
// a run in the next round: a round changes gaps only next to the runs it
// merges. It reports whether the round merged any events away.
func (m *glMerge) round(cand *[]int) bool {
	n := len(m.ev)
	slices.Sort(*cand)
	type run struct {
		s, e int
		w    float64
	}
	var runs []run
	var dropped []int
	prevEnd, last := -1, -1
	for _, s := range *cand {
		if s == last || !m.start(s) {
			continue
		}
		last = s
		// The run ends at the last event no later than its start +
		// threshold (side "right": past every equal time).
		lim, e := m.ev[s].t+glMergeThreshold, s
		for j := m.next[e]; j < n && m.ev[j].t <= lim; j = m.next[e] {
			e = j
		}
		// GuideLLM drops a run starting inside the one before it.
		if s > prevEnd {
			runs = append(runs, run{s, e, m.cum[m.next[e]] - m.cum[s]})
		} else {
			dropped = append(dropped, s)
		}
		prevEnd = e
	}
	*cand = append((*cand)[:0], dropped...)
	if len(runs) == 0 {
		return false
	}
	merged := false
	for _, r := range runs {
		// Every run's first event takes the difference of the running
		// sums, a single-event run's too (a gap within the threshold
		// whose end rounds past start + threshold).
		m.ev[r.s].w = r.w
		for j := m.next[r.s]; j <= r.e; j = m.next[j] {
			m.gone[j], merged = true, true
		}
		after := m.next[r.e]
		m.next[r.s] = after
		if after < n {
			m.prev[after] = r.s
		}
	}
	for _, r := range runs {
		// Running sums after the run, until they agree with the old
		// (bit for bit: a NaN sum agrees with itself).
		c := m.cum[r.s] + m.ev[r.s].w
		for j := m.next[r.s]; math.Float64bits(m.cum[j]) != math.Float64bits(c); j = m.next[j] {
			m.cum[j] = c
			if j == n {
				break
			}
			c += m.ev[j].w
		}
		*cand = append(*cand, r.s)
		if j := m.next[r.s]; j < n {
			*cand = append(*cand, j)
		}
	}
	return merged
}

// glLinspace is numpy.linspace(a, b, num) (endpoint included): i·step + a
// with step = (b − a)/(num − 1), the last value exactly b.
func glLinspace(a, b float64, num int) []float64 {
	if num <= 0 {
		return nil
	}
	out := make([]float64, num)
	if num == 1 {
		out[0] = a
		return out
	}
	div := float64(num - 1)
	delta := b - a
	step := delta / div
	for i := range out {
		if step == 0 {
			out[i] = float64(float64(i)/div*delta) + a
		} else {
			out[i] = float64(float64(i)*step) + a
		}
	}
	out[num-1] = b
	return out
}
