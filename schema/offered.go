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
	// failed counts per cell the measured records not ok.
	failed []int64
	// gen: the run follows GeneratorBenchsealV1, whose workers start
	// together and each keep a request in flight.
	gen bool
}

// offeredChecked reports whether the records of a run under m bound its
// declared concurrency: a closed-loop run, not imported, whose sent_ns
// and end_ns were both measured. An import's concurrency is the peer
// tool's own setting, which some tools' timestamps exceed (the GenAI-Perf
// fixture has 10 requests in flight at concurrency 4); verify re-derives
// it from the tool's files instead.
//
// A rate-mode run is checked the same way against its declared cap
// (rateCap): the client counts a request in flight before it takes
// sent_ns and until after it takes end_ns, so no more than the cap of
// [sent_ns, end_ns] spans overlap (a cap relabelled lower fails).
func offeredChecked(m *Manifest) bool {
	pv := m.Provenance
	capped := m.Load.Mode == ModeConcurrency
	if m.Load.Mode == ModeRate {
		for i := range m.Load.Points {
			if c, _ := rateCap(m, i); c > 0 {
				capped = true
			}
		}
	}
	return capped && !m.Imported() && pv.Field(FieldSent).Status == FieldMeasured && pv.Field(FieldEnd).Status == FieldMeasured
}

// rateCap returns the cap on requests in flight a rate-mode point i
// declares and the field declaring it: the smaller of load.max_outstanding
// and the point's concurrency, those set; 0 when neither is.
func rateCap(m *Manifest, i int) (int64, string) {
	c, f := int64(m.Load.MaxOutstanding), "load.max_outstanding"
	if pc := int64(m.Load.Points[i].Concurrency); pc > 0 && (c <= 0 || pc < c) {
		c, f = pc, "load.points["+strconv.Itoa(i)+"].concurrency"
	}
	return max(c, 0), f
}

func newOfferedLoad(m *Manifest, cells int) *offeredLoad {
	if !offeredChecked(m) {
		return nil
	}
	return &offeredLoad{spans: make([][][2]int64, cells), failed: make([]int64, cells), gen: m.Load.Generator == GeneratorBenchsealV1}
}

func (o *offeredLoad) add(cell int, rec *Record) {
	if o != nil && rec.Phase == PhaseMeasure && rec.EndNS >= rec.SentNS {
		o.spans[cell] = append(o.spans[cell], [2]int64{rec.SentNS, rec.EndNS})
		if rec.Status != StatusOK {
			o.failed[cell]++
		}
	}
}

// PeakInFlight returns the most requests in flight at once among spans
// of [sent_ns, end_ns]: a request is in flight from sent_ns until end_ns,
// and one ending at the instant another is sent has freed its slot.
// spans is not modified.
func PeakInFlight(spans [][2]int64) int64 { return peakInFlight(spans, false) }

// peakInFlight is PeakInFlight; with instant set a request that ends at
// the instant it is sent (refused at once, on a coarse clock) counts as in
// flight for 1 ns, the reading the lower bound of checkOfferedLoad uses.
func peakInFlight(spans [][2]int64, instant bool) int64 {
	type ev struct {
		t int64
		d int64
	}
	evs := make([]ev, 0, 2*len(spans))
	for _, s := range spans {
		end := s[1]
		if instant && end == s[0] {
			end++
		}
		evs = append(evs, ev{s[0], 1}, ev{end, -1})
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
// requests in flight with its declared concurrency C. Whatever made the
// records, a closed loop at C never has more than C requests in flight at
// once (a point relabelled to a lower concurrency fails). Under
// GeneratorBenchsealV1, whose C workers start together and each send
// again as soon as their request ends, the peak reaches min(C, records)
// when every request is ok (a point relabelled to any higher concurrency
// fails: its peak stays at the concurrency it ran at). Requests failed at
// once (a server answering 429) free their worker as fast as it sends
// again, so the C never all overlap: a cell with failures must reach half
// of min(C, records). Without the generator only the upper bound is
// checked, and UnverifiedCompleteness says so.
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
				if c.rate {
					c.checkRateCap(i, r, sh, spans, add)
					c.offered.spans[ci], c.offered.failed[ci] = nil, 0
					continue
				}
				conc := int64(ShardWorkers(p.Concurrency, S, sh))
				f := "load.points[" + strconv.Itoa(i) + "].concurrency"
				who := ""
				if S > 1 {
					who = " (" + shardDesc(sh, S) + ", its share of the concurrency " + strconv.FormatInt(conc, 10) + ")"
				}
				top := PeakInFlight(spans)
				want, low := min(conc, int64(len(spans))), peakInFlight(spans, true)
				failed := c.offered.failed[ci] > 0
				switch {
				case top > conc:
					add(f, "point %q repeat %d has %d measured requests in flight at once (sent_ns to end_ns), more than its declared concurrency %d%s", p.Name, r, top, conc, who)
				case c.offered.gen && !failed && low < want:
					add(f, "point %q repeat %d never has more than %d measured requests in flight (sent_ns to end_ns), but its declared concurrency %d%s means %d: load.generator %q keeps every worker's request in flight", p.Name, r, low, conc, who, want, GeneratorBenchsealV1)
				case c.offered.gen && failed && 2*low < want:
					add(f, "point %q repeat %d never has more than %d measured requests in flight (sent_ns to end_ns), under half its declared concurrency %d%s (load.generator %q keeps every worker's request in flight; failed requests may free theirs at once)", p.Name, r, low, conc, who, GeneratorBenchsealV1)
				}
				c.offered.spans[ci], c.offered.failed[ci] = nil, 0
			}
		}
	}
}

// checkRateCap checks that rate-mode point i, repeat r, shard sh never has
// more measured requests in flight than its declared cap (rateCap; a
// shard's share of it as the client splits it, at least 1).
func (c *RecordChecker) checkRateCap(i, r, sh int, spans [][2]int64, add func(field, format string, args ...any)) {
	capN, f := rateCap(c.m, i)
	if capN <= 0 {
		return
	}
	who := ""
	if S := c.shards; S > 1 {
		capN = max(1, int64(ShardWorkers(int(capN), S, sh)))
		who = " (" + shardDesc(sh, S) + ", its share of the cap " + strconv.FormatInt(capN, 10) + ")"
	}
	if top := PeakInFlight(spans); top > capN {
		add(f, "rate point %q repeat %d has %d measured requests in flight at once (sent_ns to end_ns), more than its declared cap %d%s", c.m.Load.Points[i].Name, r, top, capN, who)
	}
}
