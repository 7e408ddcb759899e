package schema

import (
	"sort"
	"strings"
)

// seqIDs remembers ids that end in a decimal number — "<prefix><digits>",
// as capture, synth and most tools number their requests — with the line
// of each, grouped by prefix and digit count in slices, so that a
// duplicate finds the line of the first. A slice starts as runs: ids
// numbered one after the other on lines one after the other (a writer's
// records in request-number order) take one seqRun each, a few bytes per
// run, not per id. A slice whose ids break that pattern — a number at or
// below one already seen that is not a duplicate, or more runs than a
// sixteenth of its ids — moves to lines, about 4 bytes a request: a slice
// indexed by the number less the slice's base. Such a slice grows only
// while it stays within twice its ids (plus seqIDSlack), so a publisher's
// large number allocates nothing; such ids go to a map by (slice,
// number). The id fixes (prefix, digit count, number) and they fix the
// id, so one id has one slot. Ids without such a tail, and new prefixes
// past maxSeqPrefixes, are hashed (RecordChecker.ids).
type seqIDs struct {
	slot map[seqKey]int
	// runs holds per slice its runs, ascending and disjoint, while the
	// slice is in runs (dense false).
	runs   [][]seqRun
	dense  []bool
	lines  [][]uint32 // per slice, line + 1 of each number from base; 0: not seen
	base   []int64
	n      []int64 // ids held per slice
	sparse map[[2]int64]uint32
}

// seqRun is the ids numbered k … k+n−1, on lines line … line+n−1.
type seqRun struct{ k, n, line int64 }

type seqKey struct {
	prefix string
	digits int
}

// seqIDSlack is how far past twice its ids a slice may grow;
// maxSeqPrefixes bounds the slices (each costs a map entry and a few
// words).
const (
	seqIDSlack     = 16
	maxSeqPrefixes = 1 << 16
)

func newSeqIDs() *seqIDs {
	return &seqIDs{slot: map[seqKey]int{}, sparse: map[[2]int64]uint32{}}
}

// slice returns the slice and number of id, or false when id is hashed
// instead.
func (g *seqIDs) slice(id string) (int, int64, bool) {
	i := len(id)
	for i > 0 && id[i-1] >= '0' && id[i-1] <= '9' {
		i--
	}
	digits := len(id) - i
	if digits == 0 || digits > 18 {
		return 0, 0, false
	}
	var k int64
	for j := i; j < len(id); j++ {
		k = 10*k + int64(id[j]-'0')
	}
	key := seqKey{id[:i], digits}
	s, ok := g.slot[key]
	if !ok {
		if len(g.slot) >= maxSeqPrefixes {
			return 0, 0, false
		}
		s = len(g.lines)
		g.slot[seqKey{strings.Clone(key.prefix), digits}] = s
		g.lines, g.base, g.n = append(g.lines, nil), append(g.base, 0), append(g.n, 0)
		g.runs, g.dense = append(g.runs, nil), append(g.dense, false)
	}
	return s, k, true
}

// see records line for (slice s, number k) and returns the line of an
// earlier id in that slot, if any.
func (g *seqIDs) see(s int, k int64, line int) (int, bool) {
	if !g.dense[s] {
		if first, dup, ok := g.seeRun(s, k, line); ok {
			return first, dup
		}
		g.toLines(s)
	}
	return g.seeLine(s, k, line)
}

// seeRun is see of a slice in runs; ok is false when k does not fit them
// (the slice is to move to lines, k not yet recorded).
func (g *seqIDs) seeRun(s int, k int64, line int) (first int, dup, ok bool) {
	rs := g.runs[s]
	if n := len(rs); n > 0 {
		last := &rs[n-1]
		if k < last.k+last.n {
			i := sort.Search(n, func(i int) bool { return rs[i].k+rs[i].n > k })
			if rs[i].k > k {
				return 0, false, false // a number between runs
			}
			// The line lines would hold: capped as seeLine caps it.
			return int(min(rs[i].line+k-rs[i].k, 1<<32-2)), true, true
		}
		if k == last.k+last.n && int64(line) == last.line+last.n {
			last.n++
			g.n[s]++
			return 0, false, true
		}
	}
	if int64(len(rs)) >= 64+g.n[s]/16 {
		return 0, false, false
	}
	g.runs[s] = append(rs, seqRun{k: k, n: 1, line: int64(line)})
	g.n[s]++
	return 0, false, true
}

// toLines moves slice s from runs to lines.
func (g *seqIDs) toLines(s int) {
	rs := g.runs[s]
	g.runs[s], g.dense[s], g.n[s] = nil, true, 0
	for _, r := range rs {
		for j := range r.n {
			g.seeLine(s, r.k+j, int(r.line+j))
		}
	}
}

// seeLine is see of a slice in lines.
func (g *seqIDs) seeLine(s int, k int64, line int) (int, bool) {
	v := uint32(min(line, 1<<32-2)) + 1
	if len(g.lines[s]) == 0 {
		g.base[s] = k
	}
	d, base := g.lines[s], g.base[s]
	if k < base || k >= base+int64(len(d)) {
		d, base = g.grow(s, k)
	}
	if k >= base && k < base+int64(len(d)) {
		if first := d[k-base]; first != 0 {
			return int(first - 1), true
		}
		d[k-base] = v
		g.n[s]++
		return 0, false
	}
	key := [2]int64{int64(s), k}
	if first, ok := g.sparse[key]; ok {
		return int(first - 1), true
	}
	g.sparse[key] = v
	g.n[s]++
	return 0, false
}

// grow widens slice s to hold k, at least doubling it, when it then
// stays within twice its ids (plus seqIDSlack); the ids of the new range
// move in from the map. It returns the slice and its base, widened or
// not.
func (g *seqIDs) grow(s int, k int64) ([]uint32, int64) {
	d, base := g.lines[s], g.base[s]
	lo, hi := min(base, k), max(base+int64(len(d)), k+1)
	if hi-lo < 2*int64(len(d)) {
		if k >= base {
			hi = lo + 2*int64(len(d))
		} else {
			lo = max(hi-2*int64(len(d)), 0)
		}
	}
	if hi-lo > 2*(g.n[s]+1)+seqIDSlack {
		return d, base
	}
	nd := make([]uint32, hi-lo)
	copy(nd[base-lo:], d)
	if len(g.sparse) > 0 {
		for kk := lo; kk < hi; kk++ {
			if kk >= base && kk < base+int64(len(d)) {
				continue
			}
			if w, ok := g.sparse[[2]int64{int64(s), kk}]; ok {
				nd[kk-lo] = w
				delete(g.sparse, [2]int64{int64(s), kk})
			}
		}
	}
	g.lines[s], g.base[s] = nd, lo
	return nd, lo
}
