package schema

import (
	"encoding/binary"
	"hash/maphash"
	"strconv"
)

// cellPrint is a fingerprint of the measured requests of one point ×
// repeat: sums of two 64-bit hashes of each request's own timings and
// counts, and how many were summed. A sum does not depend on the order
// of the requests or on where the cell sits on the clock, so a cell
// copied from another (and shifted in time, ids and repeat renamed) has
// the same fingerprint.
type cellPrint struct{ a, b, n uint64 }

// cellPrints keeps a cellPrint per point × repeat (24 bytes each) of a
// run under GeneratorBenchsealV1 whose send and end times were measured
// (capture's: nanosecond clock readings of a live server). Without the
// generator nothing says the records were measured (synth and hand-made
// runs repeat themselves freely), and UnverifiedCompleteness says the
// repeats were not checked.
type cellPrints struct {
	cells []cellPrint
	buf   []byte
}

func newCellPrints(m *Manifest, cells int) *cellPrints {
	pv := m.Provenance
	if m.Load.Generator != GeneratorBenchsealV1 || pv.Field(FieldSent).Status != FieldMeasured || pv.Field(FieldEnd).Status != FieldMeasured {
		return nil
	}
	return &cellPrints{cells: make([]cellPrint, cells)}
}

// add folds a measured record with at least one chunk into its cell's
// fingerprint: its status, end_ns − sent_ns, chunk offsets, chunk tokens
// and token counts (a record without chunks — one rejected or failed at
// once — carries no timing of its own and is left out).
func (c *RecordChecker) addPrint(cell int, rec *Record) {
	p := c.prints
	if p == nil || rec.Phase != PhaseMeasure || len(rec.ChunksNS) == 0 {
		return
	}
	b := p.buf[:0]
	b = append(b, rec.Status...)
	b = append(b, 0)
	for _, v := range [...]int64{rec.EndNS - rec.SentNS, rec.InputTokens, rec.OutputTokens, int64(len(rec.ChunksNS)), int64(len(rec.ChunkTokens))} {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	for _, v := range rec.ChunksNS {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	for _, v := range rec.ChunkTokens {
		b = binary.LittleEndian.AppendUint64(b, uint64(v))
	}
	p.buf = b
	cp := &p.cells[cell]
	cp.a += maphash.Bytes(c.s1, b)
	cp.b += maphash.Bytes(c.s2, b)
	cp.n++
}

// checkCopies reports a point × repeat whose measured requests have, as
// a set, exactly the timings and counts of another's: each repeat is a
// measurement of its own, whose requests never take the same nanosecond
// durations and chunk offsets again, so such a cell is a copy (a publisher
// replacing a bad repeat with a good one shifted in time). It cannot show
// a repeat fabricated with noise added; only server-side evidence could.
func (c *RecordChecker) checkCopies(add func(field, format string, args ...any)) {
	if c.prints == nil {
		return
	}
	seen := make(map[cellPrint]int, len(c.prints.cells))
	for ci, cp := range c.prints.cells {
		if cp.n == 0 {
			continue
		}
		if first, dup := seen[cp]; dup {
			p, r := &c.m.Load.Points[ci/c.repeats], ci%c.repeats
			q, s := &c.m.Load.Points[first/c.repeats], first%c.repeats
			add("load.points["+strconv.Itoa(ci/c.repeats)+"]", "point %q repeat %d has, request for request, the same end_ns − sent_ns, chunk offsets, token counts and statuses as point %q repeat %d (%d measured requests with chunks): a repeat is a measurement of its own, so this one is a copy", p.Name, r, q.Name, s, cp.n)
			continue
		}
		seen[cp] = ci
	}
}
