package schema

import "strings"

// seqIDs remembers ids that end in a decimal number — "<prefix><digits>",
// as capture, synth and most tools number their requests — with the line
// of each, in about 4 bytes a request instead of a hashed id in a map
// (about 40 bytes): one slice per prefix and digit count, indexed by the
// number less the slice's base. A slice grows only while it stays within
// twice its ids (plus seqIDSlack), so a publisher's large number allocates nothing;
// such ids go to a map by (slice, number). The id fixes (prefix, digit
// count, number) and they fix the id, so one id has one slot, and a
// duplicate finds the line of the first. Ids without such a tail, and new
// prefixes past maxSeqPrefixes, are hashed (RecordChecker.ids).
type seqIDs struct {
	slot   map[seqKey]int
	lines  [][]uint32 // per slice, line + 1 of each number from base; 0: not seen
	base   []int64
	n      []int64 // ids held per slice
	sparse map[[2]int64]uint32
}

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
	}
	return s, k, true
}

// see records line for (slice s, number k) and returns the line of an
// earlier id in that slot, if any.
func (g *seqIDs) see(s int, k int64, line int) (int, bool) {
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
