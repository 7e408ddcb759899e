package schema

import (
	"slices"
	"strconv"
)

// offeredLoad keeps, per point × repeat of a closed-loop run whose send
// and end times were measured, the measured requests' [sent, end]
// intervals (16 bytes per record), to check the declared concurrency
// against the records in Finish.
type offeredLoad struct {
	spans [][][2]int64
}

func newOfferedLoad(m *Manifest, cells int) *offeredLoad {
	pv := m.Provenance
	// Only under benchseal's generator: a peer tool's declared
	// concurrency is its own setting (some overlap requests beyond it),
	// which an import re-derives from the tool's files.
	if m.Load.Generator != GeneratorBenchsealV1 || m.Load.Mode != ModeConcurrency || pv.Field(FieldSent).Status != FieldMeasured || pv.Field(FieldEnd).Status != FieldMeasured {
		return nil
	}
	return &offeredLoad{spans: make([][][2]int64, cells)}
}

func (o *offeredLoad) add(cell int, rec *Record) {
	if o != nil && rec.Phase == PhaseMeasure && rec.EndNS >= rec.SentNS {
		o.spans[cell] = append(o.spans[cell], [2]int64{rec.SentNS, rec.EndNS})
	}
}

// PeakInFlight returns the most requests in flight at once among spans
// of [sent_ns, end_ns]: a request is in flight from sent_ns until end_ns,
// and one ending at the instant another is sent has freed its slot.
// spans is not modified.
func PeakInFlight(spans [][2]int64) int64 {
	type ev struct {
		t int64
		d int64
	}
	evs := make([]ev, 0, 2*len(spans))
	for _, s := range spans {
		evs = append(evs, ev{s[0], 1}, ev{s[1], -1})
	}
	slices.SortFunc(evs, func(a, b ev) int {
		if a.t != b.t {
			if a.t < b.t {
				return -1
			}
			return 1
		}
		return int(a.d - b.d) // ends first
	})
	var cur, top int64
	for _, e := range evs {
		cur += e.d
		top = max(top, cur)
	}
	return top
}

// checkOfferedLoad compares each closed-loop point × repeat's peak of
// requests in flight with its declared concurrency: a closed loop at C
// never has more than C in flight, and benchseal's generator (C workers
// started at once) reaches at least half of min(C, requests) — a point
// relabelled to a higher concurrency than it ran at fails it.
func (c *RecordChecker) checkOfferedLoad(add func(field, format string, args ...any)) {
	if c.offered == nil {
		return
	}
	S := c.shards
	for i, p := range c.m.Load.Points {
		for r := range c.repeats {
			for sh := range S {
				ci := (i*c.repeats+r)*S + sh
				spans := c.offered.spans[ci]
				if len(spans) == 0 {
					continue
				}
				// A shard runs its share of the point's workers
				// (ShardSplitV1); the shards' requests overlap only as
				// far as their clocks say, so each is checked alone.
				top, conc := PeakInFlight(spans), int64(ShardWorkers(p.Concurrency, S, sh))
				f := "load.points[" + strconv.Itoa(i) + "].concurrency"
				who := ""
				if S > 1 {
					who = " (" + shardDesc(sh, S) + ", its share of the concurrency " + strconv.FormatInt(conc, 10) + ")"
				}
				switch {
				case top > conc:
					add(f, "point %q repeat %d has %d measured requests in flight at once (sent_ns to end_ns), more than its declared concurrency %d%s", p.Name, r, top, conc, who)
				case !c.m.Incomplete && 2*top < min(conc, int64(len(spans))):
					add(f, "point %q repeat %d never has more than %d measured requests in flight, under half its declared concurrency %d%s (load.generator %q starts that many at once)", p.Name, r, top, conc, who, GeneratorBenchsealV1)
				}
				c.offered.spans[ci] = nil
			}
		}
	}
}
