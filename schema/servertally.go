// What the records of a point × repeat say its engine must have counted by
// each of the point's server-metrics scrapes.

package schema

import (
	"fmt"
	"math"
	"slices"
	"strconv"

	"github.com/benchseal/benchseal/internal/digits"
)

// CounterLagNS is how long after a request's end, as the client saw it,
// an engine may still not count it: vLLM and benchseal's simulator add a
// finished request to their counters after writing its last bytes
// (vLLM's output handler records its stats after it has queued the
// outputs), so a scrape sent just after a request ended can miss it.
// Records that ended less than this before a scrape's request are not
// held against that scrape; capture waits this long after a point's last
// end before it sends the scrape after the point (client.capture_revision
// 2), which then must show every record counted.
const CounterLagNS = 250_000_000

// ProbeOutputTokens is the max_tokens of capture's preflight probe, the
// one request it sends outside the records.
const ProbeOutputTokens = 8

// ScrapeTimeoutNS bounds one scrape: capture gives up on a /metrics
// request after it.
const ScrapeTimeoutNS = 5_000_000_000

// AfterScrapeSlackNS bounds how long after a point × repeat's last end
// capture sends the scrape after it: capture sends it as soon as the
// point's last request has ended and a scrape during the point still in
// flight then has answered, so the gap is the client's own scheduling:
// microseconds to milliseconds on an idle machine, but honest captures on
// a 2-core machine at load average 13-20 measured 1.09-1.14 s past the
// 250 ms counter wait, so two seconds.
const AfterScrapeSlackNS = 2_000_000_000

// ScrapeTally is what the measured records of one point × repeat say the
// engine must have counted between the point's scrape before it and one
// later scrape of it (during or after), for the comparison with the
// engine's counters (artifact.CheckServerEvidence).
type ScrapeTally struct {
	Point  string
	Repeat int
	// Before and Scrape index manifest.server_metrics.scrapes: the
	// point's before scrape and the one compared with it; After says
	// Scrape is the after scrape.
	Before, Scrape int
	After          bool
	// ByNS: the records tallied ended before it, the earliest instant the
	// scrape's answer can show less CounterLagNS (math.MaxInt64 for the
	// after scrape: every record of the point, which all ended before it
	// was sent).
	ByNS int64
	// OK counts the ok measured records that ended before ByNS;
	// InputTokens and OutputTokens are their token sums.
	OK, InputTokens, OutputTokens int64
	// CachedTokens sums the prompt tokens those records' engine reports
	// served from its cache (ServerReport.Cached); CachedKnown is set when
	// every one of them reports it.
	CachedTokens int64
	CachedKnown  bool
	// Slack is how many of them the engine may not yet have counted: the
	// requests that can end together, the point's concurrency (its cap
	// in rate mode). Without a cap it is 1 for a scrape during the point
	// (ByNS leaves out the last CounterLagNS) and, for the after scrape,
	// the ok records that ended within CounterLagNS before it was sent
	// (not stated: before it answered, less ScrapeTimeoutNS). MaxInput
	// and MaxOutput are the most tokens one record has.
	Slack               int64
	MaxInput, MaxOutput int64
	// Sent counts every measured record of the point (any status) and
	// Elsewhere the requests outside them the engine may have finished
	// between the two scrapes (see elsewhere); Elsewhere is -1 when no
	// upper bound holds: a shard's engine serves the other shards too.
	// Set on the after scrape only.
	Sent, Elsewhere int64
	// ElsewhereWhy says what Elsewhere allows for, for messages.
	ElsewhereWhy string
	// OutputCap bounds the engine's generated tokens between the two
	// scrapes from above: the max_tokens sent for the point's requests
	// (any status) and for those from elsewhere (the preflight probe's
	// ProbeOutputTokens); -1 when no such bound holds (a shard, a capture
	// before client.capture_revision 3, a request whose max_tokens is not
	// known). Set on the after scrape only.
	OutputCap int64
	// FirstN counts the point's measured records with a first content
	// chunk (any status) and FirstSumS sums their ttft (ChunksNS[0]) in
	// seconds; E2EN and E2ESumS the same of its ok records' end − sent.
	// The engine's own histograms of these times (from its arrival, so
	// never longer than the client's) bound them from below. Set on the
	// after scrape only.
	FirstN, E2EN       int64
	FirstSumS, E2ESumS float64
}

// tallyCell is what a RecordChecker keeps of one point × repeat's scrapes
// and records for the ScrapeTally list.
type tallyCell struct {
	before     int // index of the before scrape, -1: none usable
	beforeAt   int64
	beforeFrom int64 // its request, -1: not stated
	// pending counts the records (any phase, cell or status) that ended
	// less than CounterLagNS before the before scrape was sent or before
	// it answered: the engine may count them after that scrape, between
	// it and the after one (see elsewhere); pendingID names one of them.
	pending   int64
	pendingID string
	// capSum sums the output caps (RecordChecker.outputCap) of the
	// cell's measured records, pendingCap those of its pending ones;
	// capUnknown is set when one of them has none.
	capSum, pendingCap int64
	capUnknown         bool
	probes             []tallyProbe // the later scrapes, by ByNS
	afterFrom          int64        // the after scrape's request, -1: not stated
	afterAt            int64        // its answer, -1: no after scrape
	window             int64        // ok records ending less than CounterLagNS before the after scrape (see Slack)
	windowFrom         int64
	duringAt           int64 // the latest answer of a during scrape
	firstSent          int64
	firstID, lastID    string
	lastEnd            int64
	seen               bool
	maxIn, maxOut      int64
	sent               int64
	firstN, e2eN       int64
	firstS, e2eS       float64
}

// afterGap is the longest a capture of m takes from a point's last end
// (and its last during scrape's answer) to sending its after scrape:
// AfterScrapeSlackNS, plus the CounterLagNS it waits first from
// client.capture_revision 2.
func afterGap(m *Manifest) int64 {
	if revisedTo(m, 2) {
		return AfterScrapeSlackNS + CounterLagNS
	}
	return AfterScrapeSlackNS
}

// settled reports whether the cell's after scrape was sent at least
// CounterLagNS after its last record ended, so the engine had counted
// every one of them.
func (tc *tallyCell) settled() bool {
	return tc.afterFrom >= 0 && tc.afterFrom-tc.lastEnd >= CounterLagNS
}

// tallyProbe holds, for one later scrape, the records that ended before
// its ByNS and not before the previous probe's (summed in Finish).
type tallyProbe struct {
	scrape      int
	by          int64
	after       bool
	ok, in, out int64
	cached      int64
	uncached    int64 // records that report no cached count
}

// serverTally is the ScrapeTally bookkeeping of a RecordChecker.
type serverTally struct {
	cells []tallyCell
	// notOK counts the records of any phase that did not end ok: the
	// engine may still be running such a request when the client gave
	// up on it, and count it in a later point.
	notOK int64
	// notOKCap sums the output caps of the not-ok records, notOKCapUnknown
	// set when one of them has none.
	notOKCap        int64
	notOKCapUnknown bool
	// windows are the cells' before scrapes that state from_ns, each as
	// [from_ns - CounterLagNS, at_ns], by start: a record ending inside
	// one is pending there.
	windows []beforeWindow
}

// beforeWindow is the span of one cell's before scrape in which a record
// that ended may not be in that scrape's counters yet.
type beforeWindow struct {
	from, to int64
	cell     int
}

// newServerTally returns the bookkeeping for m's scrapes, nil when m has
// none or its records' send and end times are not measured (nothing
// places them against the scrapes). A merged run has no scrapes (merge
// refuses shards holding them).
func newServerTally(m *Manifest, points map[string]int, repeats int) *serverTally {
	sm := m.ServerMetrics
	pv := m.Provenance
	if sm == nil || len(sm.Scrapes) == 0 || m.Imported() || pv.Field(FieldSent).Status != FieldMeasured || pv.Field(FieldEnd).Status != FieldMeasured {
		return nil
	}
	t := &serverTally{cells: make([]tallyCell, len(m.Load.Points)*repeats)}
	for i := range t.cells {
		t.cells[i] = tallyCell{before: -1, beforeFrom: -1, afterFrom: -1, afterAt: -1, duringAt: -1}
	}
	prevAt := map[int]int64{}
	for i, s := range sm.Scrapes {
		pi, ok := points[s.Point]
		if !ok || s.Repeat < 0 || s.Repeat >= repeats {
			continue // reported by validateServerMetrics
		}
		ci := pi*repeats + s.Repeat
		c := &t.cells[ci]
		if s.When == ScrapeBefore {
			if s.Error == "" && c.before < 0 {
				c.before, c.beforeAt = i, s.AtNS
				prevAt[ci] = s.AtNS
				if s.FromNS != nil {
					c.beforeFrom = *s.FromNS
					t.windows = append(t.windows, beforeWindow{from: *s.FromNS - CounterLagNS, to: s.AtNS, cell: ci})
				}
			}
			continue
		}
		if c.before < 0 {
			continue
		}
		if s.When == ScrapeDuring {
			c.duringAt = max(c.duringAt, s.AtNS)
		}
		if s.When == ScrapeAfter && c.afterAt < 0 {
			c.afterAt = s.AtNS
			c.windowFrom = s.AtNS - ScrapeTimeoutNS - CounterLagNS
			if s.FromNS != nil {
				c.afterFrom = *s.FromNS
				c.windowFrom = *s.FromNS - CounterLagNS
			}
		}
		// The earliest instant the answer can show: the scrape's request,
		// or (not stated) the previous scrape's answer, since capture
		// scrapes one at a time; capture sends the after scrape once
		// every request of the point has ended.
		var by int64
		switch {
		case s.When == ScrapeAfter:
			by = math.MaxInt64
		case s.FromNS != nil:
			by = *s.FromNS - CounterLagNS
		default:
			by = prevAt[ci] - CounterLagNS
		}
		prevAt[ci] = s.AtNS
		if s.Error == "" && (s.When == ScrapeDuring || s.When == ScrapeAfter) {
			c.probes = append(c.probes, tallyProbe{scrape: i, by: by, after: s.When == ScrapeAfter})
		}
	}
	for i := range t.cells {
		slices.SortStableFunc(t.cells[i].probes, func(a, b tallyProbe) int { return compareInt64(a.by, b.by) })
	}
	slices.SortStableFunc(t.windows, func(a, b beforeWindow) int { return compareInt64(a.from, b.from) })
	return t
}

// pend counts a record that ended at end in the before scrape window
// holding it. Capture takes one cell's scrapes after another's, so honest
// windows do not overlap and only the latest one starting at or before
// end is looked at: in a run whose windows overlap (edited scrapes) a
// record is counted in one of them only, which can only tighten the
// bound there.
func (t *serverTally) pend(rec *Record, cap int64) {
	end := rec.EndNS
	i, _ := slices.BinarySearchFunc(t.windows, end, func(w beforeWindow, end int64) int {
		if w.from <= end {
			return -1
		}
		return 1
	})
	if i > 0 && end <= t.windows[i-1].to {
		c := &t.cells[t.windows[i-1].cell]
		if c.pending++; c.pendingID == "" {
			c.pendingID = rec.ID
		}
		addCap(&c.pendingCap, &c.capUnknown, cap)
	}
}

// addCap adds an output cap to sum, or sets unknown when cap is -1.
func addCap(sum *int64, unknown *bool, cap int64) {
	if cap < 0 {
		*unknown = true
		return
	}
	*sum += cap
}

func compareInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// add tallies one record of cell, whose output cap (the most tokens the
// engine can have generated for it, RecordChecker.outputCap) is cap.
func (t *serverTally) add(cell int, rec *Record, cap int64) {
	if t == nil {
		return
	}
	if rec.Status != StatusOK {
		t.notOK++
		addCap(&t.notOKCap, &t.notOKCapUnknown, cap)
	}
	t.pend(rec, cap)
	c := &t.cells[cell]
	if rec.Phase != PhaseMeasure || c.before < 0 {
		return
	}
	c.sent++
	addCap(&c.capSum, &c.capUnknown, cap)
	if !c.seen || rec.SentNS < c.firstSent {
		c.firstSent, c.firstID = rec.SentNS, rec.ID
	}
	if !c.seen || rec.EndNS > c.lastEnd {
		c.lastEnd, c.lastID = rec.EndNS, rec.ID
	}
	c.seen = true
	if len(rec.ChunksNS) > 0 {
		c.firstN++
		c.firstS += float64(rec.ChunksNS[0]) / 1e9
	}
	if rec.Status != StatusOK {
		return
	}
	c.e2eN++
	c.e2eS += float64(rec.EndNS-rec.SentNS) / 1e9
	c.maxIn, c.maxOut = max(c.maxIn, rec.InputTokens), max(c.maxOut, rec.OutputTokens)
	if c.afterAt >= 0 && rec.EndNS >= c.windowFrom {
		c.window++
	}
	j, _ := slices.BinarySearchFunc(c.probes, rec.EndNS, func(p tallyProbe, end int64) int {
		if end < p.by {
			return 1 // p is at or after the first probe this record counts for
		}
		return -1
	})
	if j < len(c.probes) {
		p := &c.probes[j]
		p.ok++
		p.in += rec.InputTokens
		p.out += rec.OutputTokens
		if n, ok := rec.Server.Cached(); ok {
			p.cached += n
		} else {
			p.uncached++
		}
	}
}

// finish checks the records against the scrapes' instants and returns
// the tallies. Capture takes a point's before scrape before its first
// request and sends its after scrape once the last one has ended
// (within AfterScrapeSlackNS, when the after scrape's request instant is
// stated): records outside that span, or a span ending long before the
// after scrape, contradict the scrapes (a run moved onto faster schedule
// slots leaves its after scrape far behind its last end).
func (t *serverTally) finish(c *RecordChecker, add func(field, format string, args ...any)) []ScrapeTally {
	if t == nil {
		return nil
	}
	var out []ScrapeTally
	var slacks []int64
	var cellOf []int // out[i]'s cell
	for ci := range t.cells {
		tc := &t.cells[ci]
		if !tc.seen {
			continue
		}
		pi, r := ci/c.repeats, ci%c.repeats
		p := c.m.Load.Points[pi]
		field := "server_metrics.scrapes[" + strconv.Itoa(tc.before) + "]"
		if tc.firstSent < tc.beforeAt {
			add(field, "point %q repeat %d: record %q was sent at %d ns, before the scrape before the point answered (at_ns %d): capture sends a point's first request after that scrape", p.Name, r, tc.firstID, tc.firstSent, tc.beforeAt)
		}
		switch {
		case tc.afterAt < 0:
		case tc.afterFrom >= 0 && tc.lastEnd > tc.afterFrom:
			add("server_metrics.scrapes", "point %q repeat %d: record %q ended at %d ns, after the scrape after the point was sent (from_ns %d): capture sends that scrape once every request of the point has ended", p.Name, r, tc.lastID, tc.lastEnd, tc.afterFrom)
		case tc.lastEnd > tc.afterAt:
			add("server_metrics.scrapes", "point %q repeat %d: record %q ended at %d ns, after the scrape after the point answered (at_ns %d)", p.Name, r, tc.lastID, tc.lastEnd, tc.afterAt)
		case tc.afterFrom >= 0 && tc.afterFrom-max(tc.lastEnd, tc.duringAt) > afterGap(c.m):
			add("server_metrics.scrapes", "point %q repeat %d: the scrape after the point was sent at %d ns, %s after its last request ended (record %q, end_ns %d) and after any scrape during it answered; capture sends it within %s of both: the records end earlier than the run they come from",
				p.Name, r, tc.afterFrom, nsSeconds(tc.afterFrom-max(tc.lastEnd, tc.duringAt)), tc.lastID, tc.lastEnd, nsSeconds(afterGap(c.m)))
		}
		if revisedTo(c.m, 3) && tc.pending > 0 {
			add(field, "point %q repeat %d: %d record(s) (record %q among them) ended less than %s before the scrape before the point was sent (from_ns %d) or while it was answered (at_ns %d), but a capture of client.capture_revision %d sends it that long after the last request before it ended",
				p.Name, r, tc.pending, tc.pendingID, nsSeconds(CounterLagNS), tc.beforeFrom, tc.beforeAt, c.m.Client.CaptureRevision)
		}
		if revisedTo(c.m, 2) && tc.afterFrom >= 0 && !tc.settled() {
			add("server_metrics.scrapes", "point %q repeat %d: the scrape after the point was sent at %d ns, %s after its last request ended (record %q, end_ns %d), but a capture of client.capture_revision %d waits %s before it",
				p.Name, r, tc.afterFrom, nsSeconds(tc.afterFrom-tc.lastEnd), tc.lastID, tc.lastEnd, c.m.Client.CaptureRevision, nsSeconds(CounterLagNS))
		}
		slack, capped := int64(ShardWorkers(p.Concurrency, c.shards, max(c.shardIdx, 0))), true
		if c.rate {
			slack, _ = rateCap(c.m, pi)
			capped = slack > 0
		}
		slack = max(slack, 1)
		slacks = append(slacks, slack)
		var ok, in, out_, cached, uncached int64
		for _, pr := range tc.probes {
			ok, in, out_ = ok+pr.ok, in+pr.in, out_+pr.out
			cached, uncached = cached+pr.cached, uncached+pr.uncached
			slack := slack
			switch {
			case pr.after && tc.settled():
				slack = 0 // every record of the point was counted by then
			case !capped && pr.after:
				slack = max(slack, tc.window)
			}
			st := ScrapeTally{Point: p.Name, Repeat: r, Before: tc.before, Scrape: pr.scrape, After: pr.after, ByNS: pr.by,
				OK: ok, InputTokens: in, OutputTokens: out_, CachedTokens: cached, CachedKnown: uncached == 0, Slack: slack, MaxInput: tc.maxIn, MaxOutput: tc.maxOut,
				Elsewhere: -1, OutputCap: -1}
			if pr.after {
				st.Sent = tc.sent
				st.FirstN, st.FirstSumS, st.E2EN, st.E2ESumS = tc.firstN, tc.firstS, tc.e2eN, tc.e2eS
			}
			out = append(out, st)
			cellOf = append(cellOf, ci)
		}
	}
	if c.m.Shard == nil {
		t.elsewhere(c.m, out, cellOf, slices.Max(append(slacks, 1)))
	}
	return out
}

// elsewhere sets the after tallies' Elsewhere: the requests outside the
// point the engine may also finish between its before and after scrapes.
// Those are the preflight probe, requests that ended just before the
// before scrape and were not counted by then (the point's warmup, which
// capture runs right before it), and any request the client gave up on
// earlier (not ok), which may still be running. A capture of
// client.capture_revision 2 that states when the before scrape was sent
// is held to exactly those: the records that ended less than
// CounterLagNS before it (pending), and the probe only until an after
// scrape sent CounterLagNS after its point's last end (settled) has
// counted it, since the probe ends before the first point begins. For
// any other, the requests not yet counted are bounded by the largest
// concurrency (or rate cap) most of any point, the earlier rule: with it
// up to most+1 of a point's requests could be dropped unseen (8 of 30
// at c8, a rewritten command line and plan, verified).
func (t *serverTally) elsewhere(m *Manifest, out []ScrapeTally, cellOf []int, most int64) {
	counted := int64(math.MaxInt64) // the earliest settled after scrape's request
	for i := range t.cells {
		if tc := &t.cells[i]; tc.seen && tc.settled() {
			counted = min(counted, tc.afterFrom)
		}
	}
	exact := revisedTo(m, 2)
	for i := range out {
		if !out[i].After {
			continue
		}
		tc := &t.cells[cellOf[i]]
		if !exact || tc.beforeFrom < 0 {
			out[i].Elsewhere = 1 + most + t.notOK
			out[i].ElsewhereWhy = fmt.Sprintf("1 for the preflight probe, %d for requests of the phase before not yet counted (the largest concurrency or rate cap of any point), and %d for the run's requests that did not end ok", most, t.notOK)
			continue
		}
		probe := int64(1)
		if counted <= tc.beforeFrom {
			probe = 0
		}
		out[i].Elsewhere = probe + tc.pending + t.notOK
		if revisedTo(m, 3) && !tc.capUnknown && !t.notOKCapUnknown {
			out[i].OutputCap = tc.capSum + probe*ProbeOutputTokens + tc.pendingCap + t.notOKCap
		}
		out[i].ElsewhereWhy = fmt.Sprintf("%d for the preflight probe, %d for requests that ended less than %s before the scrape before the point was sent or before it answered, and %d for the run's requests that did not end ok", probe, tc.pending, nsSeconds(CounterLagNS), t.notOK)
	}
}

// nsSeconds prints ns as seconds with 3 decimals.
func nsSeconds(ns int64) string {
	return digits.Places(float64(ns)/1e9, 3) + " s"
}

// unplacedCells lists the measured point × repeat pairs of a run that is
// not imported whose records no server-metrics scrape places in time: no
// stored scrape before the point and after it, or an after scrape that
// does not state from_ns. Only those instants show a point was not re-laid
// onto a denser schedule (a closed loop presented at more workers, an
// open loop at a higher rate: every latency kept, its throughput
// multiplied), and only its scrapes' counters bound its token counts, so
// every claim on such a pair is the signer's word.
func (c *RecordChecker) unplacedCells() []CellReason {
	if c.m.Imported() || c.m.ExternalReference() || c.measured == nil {
		return nil
	}
	var out []CellReason
	for i, p := range c.m.Load.Points {
		for r := range c.repeats {
			ci := i*c.repeats + r
			if c.measured[ci] == 0 {
				continue
			}
			var why string
			switch {
			case c.tally == nil || c.tally.cells[ci].before < 0 || c.tally.cells[ci].afterAt < 0:
				why = "no stored server-metrics scrape was taken both before and after it, so nothing but the records places its requests in time or bounds their token counts (a run re-laid onto a denser schedule, or with its tokens raised, is not detected)"
			case c.tally.cells[ci].afterFrom < 0:
				why = "the scrape after it does not state from_ns (when its request was sent), so nothing but the records places its requests in time (a run re-laid onto a denser schedule, every latency kept, is not detected)"
			case !c.tally.cells[ci].settled():
				why = fmt.Sprintf("the scrape after it was sent %s after its last request ended, within the %s an engine may take to count a finished request, so up to its concurrency of requests may be uncounted there and its token counts are held to the engine's only within that many times its largest record (which the records choose: one raised record lets the others share the allowance)",
					nsSeconds(c.tally.cells[ci].afterFrom-c.tally.cells[ci].lastEnd), nsSeconds(CounterLagNS))
			default:
				continue
			}
			out = append(out, CellReason{CellRef{p.Name, r}, fmt.Sprintf("point %q repeat %d: %s: the claim recomputes from records that are the signer's word", p.Name, r, why)})
		}
	}
	return out
}
