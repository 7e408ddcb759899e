package schema

import (
	"fmt"
	"iter"
	"slices"
	"strconv"

	"github.com/benchseal/benchseal/internal/digits"
)

// offeredLoad keeps, per point × repeat of a closed-loop run whose send
// and end times were measured, the measured requests' [sent, end]
// intervals (offeredCell: a SpanLog, about 8 bytes per record, while the
// cell has few; then swept as they come), to check the declared
// concurrency against the records in Finish.
type offeredLoad struct {
	spans []offeredCell
	// conc is per cell the workers of the turnaround test (0: not run).
	conc []int64
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

// newOfferedLoad returns the offered-load state of the cells of m's points
// × repeats × shards (nil: not checked).
func newOfferedLoad(m *Manifest, repeats, shards int) *offeredLoad {
	if !offeredChecked(m) {
		return nil
	}
	cells := len(m.Load.Points) * repeats * shards
	o := &offeredLoad{spans: make([]offeredCell, cells), conc: make([]int64, cells), failed: make([]int64, cells), gen: m.Load.Generator == GeneratorBenchsealV1}
	if o.gen && m.Load.Mode != ModeRate {
		for ci := range o.conc {
			o.conc[ci] = int64(ShardWorkers(m.Load.Points[ci/(repeats*shards)].Concurrency, shards, ci%shards))
		}
	}
	return o
}

func (o *offeredLoad) add(cell int, rec *Record) {
	if o != nil && rec.Phase == PhaseMeasure && rec.EndNS >= rec.SentNS {
		o.spans[cell].add(rec.SentNS, rec.EndNS, o.conc[cell])
		if rec.Status != StatusOK {
			o.failed[cell]++
		}
	}
}

// PeakInFlightSeq returns the most requests in flight at once among the
// n spans of [sent_ns, end_ns] seq yields: a request is in flight from
// sent_ns until end_ns, and one ending at the instant another is sent has
// freed its slot.
func PeakInFlightSeq(seq iter.Seq[[2]int64], n int) int64 { return peakInFlight(seq, n, false) }

// peakInFlight is PeakInFlightSeq; with instant set a request that ends at
// the instant it is sent (refused at once, on a coarse clock) counts as in
// flight for 1 ns, the reading the lower bound of checkOfferedLoad uses.
//
// It sorts the sends and the ends apart (16 bytes a span, not one 16-byte
// event per send and per end) and walks them together, an end before a
// send at the same instant.
func peakInFlight(spans iter.Seq[[2]int64], n int, instant bool) int64 {
	starts, ends := make([]int64, 0, n), make([]int64, 0, n)
	for s := range spans {
		end := s[1]
		if instant && end == s[0] {
			end++
		}
		starts, ends = append(starts, s[0]), append(ends, end)
	}
	slices.Sort(starts)
	slices.Sort(ends)
	var cur, top int64
	j := 0
	for _, t := range starts {
		for ; j < len(ends) && ends[j] <= t; j++ {
			cur--
		}
		cur++
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
// again, so the C never all overlap: a cell with f failures must reach half
// of min(C, records) and min(C, records) − f (each failure frees at most
// its own worker), so a run at C can be relabelled to at most
// min(2C, C + f), never 2C with a single failure. Without the generator only the upper bound is
// checked, and UnverifiedCompleteness says so.
func (c *RecordChecker) checkOfferedLoad(add func(field, format string, args ...any)) {
	if c.offered == nil {
		return
	}
	S := c.shards
	for i := range c.m.Load.Points {
		for r := range c.repeats {
			for sh := range S {
				ci := (i*c.repeats+r)*S + sh
				if cs := c.offered.spans[ci].spans(); cs != nil {
					c.checkOfferedCell(i, r, sh, cs, c.offered.failed[ci], add)
				}
				c.offered.spans[ci], c.offered.failed[ci] = offeredCell{}, 0
			}
		}
	}
}

// checkOfferedCell is checkOfferedLoad of point i, repeat r, shard sh,
// whose spans cs hold nFailed measured records not ok.
func (c *RecordChecker) checkOfferedCell(i, r, sh int, cs cellSpans, nFailed int64, add func(field, format string, args ...any)) {
	p, S := c.m.Load.Points[i], c.shards
	who := ""
	if cs.unordered() {
		if S > 1 {
			who = " (" + shardDesc(sh, S) + ")"
		}
		add("sent_ns", "point %q repeat %d%s has a measured request sent before one %d records earlier in the file: the requests in flight of a point × repeat of more than %d measured records are counted as the records come, in send order within a window of %d records (capture writes each phase's records in request-number order), so these were not written by it", p.Name, r, who, reorderSpans, logSpans, reorderSpans)
		return
	}
	n := cs.spanCount()
	// A shard runs its share of the point's workers (ShardSplitV1); the
	// shards' requests overlap only as far as their clocks say, so each
	// is checked alone.
	if c.rate {
		c.checkRateCap(i, r, sh, cs, add)
		return
	}
	conc := int64(ShardWorkers(p.Concurrency, S, sh))
	f := "load.points[" + strconv.Itoa(i) + "].concurrency"
	if S > 1 {
		who = " (" + shardDesc(sh, S) + ", its share of the concurrency " + strconv.FormatInt(conc, 10) + ")"
	}
	top := cs.peak()
	want, low := min(conc, int64(n)), cs.peakInstant()
	// short: too short for the peak to show the concurrency (a loaded
	// client may start a worker after the others took every request
	// number).
	short := cs.late()
	failed := nFailed > 0
	switch {
	case top > conc:
		add(f, "point %q repeat %d has %d measured requests in flight at once (sent_ns to end_ns), more than its declared concurrency %d%s", p.Name, r, top, conc, who)
	case c.offered.gen && !failed && low < want && !short:
		add(f, "point %q repeat %d never has more than %d measured requests in flight (sent_ns to end_ns), but its declared concurrency %d%s means %d: load.generator %q keeps every worker's request in flight", p.Name, r, low, conc, who, want, GeneratorBenchsealV1)
	case c.offered.gen && failed && (2*low < want || low < want-nFailed) && !short:
		add(f, "point %q repeat %d never has more than %d measured requests in flight (sent_ns to end_ns), under half its declared concurrency %d%s or under %d less its %d failed request(s) (load.generator %q keeps every worker's request in flight; a failed request may free its worker at once, one worker per failure)", p.Name, r, low, conc, who, want, nFailed, GeneratorBenchsealV1)
	case c.offered.gen:
		if msg := cs.turnaround(conc); msg != "" {
			add(f, "point %q repeat %d%s: %s", p.Name, r, who, msg)
		}
	}
}

// checkRateCap checks that rate-mode point i, repeat r, shard sh never has
// more measured requests in flight than its declared cap (rateCap; a
// shard's share of it as the client splits it, at least 1).
func (c *RecordChecker) checkRateCap(i, r, sh int, cs cellSpans, add func(field, format string, args ...any)) {
	capN, f := rateCap(c.m, i)
	if capN <= 0 {
		return
	}
	who := ""
	if S := c.shards; S > 1 {
		capN = max(1, int64(ShardWorkers(int(capN), S, sh)))
		who = " (" + shardDesc(sh, S) + ", its share of the cap " + strconv.FormatInt(capN, 10) + ")"
	}
	if top := cs.peak(); top > capN {
		add(f, "rate point %q repeat %d has %d measured requests in flight at once (sent_ns to end_ns), more than its declared cap %d%s", c.m.Load.Points[i].Name, r, top, capN, who)
	}
}

// Turnaround tolerances of a closed loop under GeneratorBenchsealV1 (see
// turnaroundProblem). Both must be exceeded for a cell to be invalid, and
// both sit well above what honest captures show: on a 2-core machine
// loaded far past its cores (load average 30-40), honest captures against
// the simulator (time scales 0.001, 0.01 and 1, concurrency 1 to 256) had
// median turnarounds up to 661 µs and idle shares up to 13 % (time scale
// 0.001, where a request takes 250 µs and a scheduler delay is a large
// share of it). An honest run must never be rejected for its client's
// scheduling, so the limits leave a factor of three and more; the check
// then catches only re-timings with pauses of milliseconds, and a forger
// who lays requests back to back escapes it (see turnaroundProblem).
// LateWorkerNS is how late a loaded machine may start one of a closed
// loop's workers after the others (a runnable thread the kernel leaves
// waiting behind other processes: tens of milliseconds on a busy two-core
// box, ten times that allowed). The workers take request numbers from one
// counter, so when a cell's sends all fall within it, its first workers may
// have sent every request before the last one ran, and its peak in flight
// need not reach min(C, records); a cell that sends for longer does.
const LateWorkerNS = 250_000_000

// lateStart reports whether a cell's sends all fall within LateWorkerNS.
func lateStart(spans iter.Seq[[2]int64]) bool {
	first := true
	var lo, hi int64
	for s := range spans {
		if first {
			lo, hi, first = s[0], s[0], false
		}
		lo, hi = min(lo, s[0]), max(hi, s[0])
	}
	return hi-lo < LateWorkerNS
}

const (
	// MaxMedianTurnaroundNS is the largest median time a worker of
	// benchseal's load client may take from its request's end_ns to its
	// next request's sent_ns.
	MaxMedianTurnaroundNS = 2_000_000
	// MaxIdleShare is the largest share of the workers' time in the
	// steady window that may pass with no request in flight.
	MaxIdleShare = 0.25
	// minTurnarounds is the fewest sends after the first C that the
	// turnaround test needs: with fewer the median says little.
	minTurnarounds = 8
)

// turnaroundProblem tests one closed-loop cell of a run under
// GeneratorBenchsealV1 (its measured [sent_ns, end_ns] spans, C workers)
// for what the generator's workers do: each sends its next request as
// soon as its previous one ended. Sorted, the j-th send after the first C
// follows the (j−C)-th end (the peak check already holds it to at most C
// in flight), and the time between them is a worker's turnaround; in the
// steady window — from the C-th send, when every worker has started, to
// the last send, before any has run out of work — the time-averaged
// number in flight is C less the workers in turnaround. A run re-laid on
// the clock as more workers than ran, each pausing between requests to
// stretch c4 latencies over c16 slots, shows both: a median turnaround
// over MaxMedianTurnaroundNS and an idle share over MaxIdleShare. Either
// alone is honest (a loaded client's scheduler delays; a time scale where
// requests are as short as a turnaround). It returns "" when the cell
// passes or is too small to test.
//
// What it cannot catch: requests re-laid with turnarounds as short as a
// real client's (a c4 run presented as c16 with no pause between
// requests) obey every invariant of the records; only the server's
// evidence of what it was running can contradict them.
func turnaroundProblem(spans iter.Seq[[2]int64], count int, conc int64) string {
	n := int64(count)
	if conc < 1 || n-conc < minTurnarounds {
		return ""
	}
	sent := make([]int64, 0, n)
	ends := make([]int64, 0, n)
	for s := range spans {
		sent, ends = append(sent, s[0]), append(ends, s[1])
	}
	slices.Sort(sent)
	slices.Sort(ends)
	gaps := make([]int64, 0, n-conc)
	for j := conc; j < n; j++ {
		gaps = append(gaps, sent[j]-ends[j-conc])
	}
	slices.Sort(gaps)
	median := gaps[len(gaps)/2]
	lo, hi := sent[conc-1], sent[n-1]
	if hi <= lo || median <= MaxMedianTurnaroundNS {
		return ""
	}
	var busy float64
	for s := range spans {
		if a, b := max(s[0], lo), min(s[1], hi); b > a {
			busy += float64(b - a)
		}
	}
	idle := 1 - busy/(float64(conc)*float64(hi-lo))
	if idle <= MaxIdleShare {
		return ""
	}
	return turnaroundText(conc, idle, median)
}

// turnaroundText is turnaroundProblem's finding: conc workers idle a share
// idle of the steady window, with the median turnaround median.
func turnaroundText(conc int64, idle float64, median int64) string {
	return fmt.Sprintf("its %d workers are idle %s %% of the time from the %d-th send to the last (time-averaged %s requests in flight, not %d) and the median time from a request's end to the next send is %s: load.generator %q sends each worker's next request as soon as its previous one ends (at most a median of %s, or %s %% idle), so these requests were not sent by %d such workers",
		conc, digits.Places(100*idle, 1), conc, digits.Places(float64(conc)*(1-idle), 2), conc, Duration(median), GeneratorBenchsealV1, Duration(MaxMedianTurnaroundNS), digits.Places(100*MaxIdleShare, 0), conc)
}
