package schema

import (
	"fmt"
	"hash/maphash"
	"strconv"
)

// RecordChecker runs the semantic checks of records against their
// manifest, one record at a time, in bounded memory: per record the time
// ordering (scheduled ≤ sent ≤ sent+chunk ≤ end, chunks non-decreasing),
// token counts, status rules, point and repeat declared; across records
// unique ids and, in Finish, that every declared point×repeat was measured.
// It does not read files: verify feeds it records from bundle layers.
//
// Ids ending in a number are remembered by that number (seqIDs: a few
// bytes per run of ids numbered one after the other on lines one after
// the other, else about 4 bytes per record), others as 128-bit hashes (about 24 bytes per
// record), so a false duplicate needs a 128-bit collision: for 10^9
// records its probability is below 10^-20.
type RecordChecker struct {
	m       *Manifest
	points  map[string]int
	repeats int
	rate    bool
	warmup  bool
	items   int64
	s1, s2  maphash.Seed
	ids     map[[2]uint64]uint32
	// seq holds the ids ending in a number; ids the others, hashed.
	seq      *seqIDs
	busy     busySpans
	measured []int64 // per point index × repeats + repeat
	longest  []int64 // per cell: the longest measured end_ns − sent_ns
	warmed   []int64 // warmup records, indexed as measured
	gen      []genCell
	lastFile string
	// manyFiles: the records came from several files (a bundle's
	// shards), so a problem across records names no single one.
	manyFiles bool
	sum       RunSummary
	// absent holds the record fields manifest.provenance declares absent
	// that a record could carry: a record must then not hold them.
	noSched, noChunkTokens bool
	// tokensPerChunk: every content-bearing chunk carries at least one
	// token (token counts from server usage or chunk counts, chunk times
	// stored).
	tokensPerChunk bool
	chunksUsable   bool
	// sim is what the in-process simulator guarantees of an ok record.
	sim simTokens
	// maxTokens is decoding.max_tokens when output_tokens are the
	// server's count (or a count of content chunks, each carrying at
	// least one token), which never exceeds it; else 0 (no bound).
	maxTokens int64
	// pointMax is, under GeneratorBenchsealV1 with such token counts,
	// each point's output_tokens (the max_tokens capture sent for its
	// synthetic prompts; 0: prompts from a file, no bound), which a
	// signed plan pins.
	pointMax []int64
	// pointIn is, under GeneratorBenchsealV1, each point's input_tokens
	// (the words of the synthetic prompts capture made for it; 0: prompts
	// from a file), which bounds input_tokens whatever the workload items
	// state: the items are the publisher's file, and a length deleted from
	// them must not lift the bound to the prompt's bytes.
	pointIn []int64
	offered *offeredLoad
	prints  *cellPrints
	timings *RepeatTimings
	// shards is the shard count (1: not sharded); shardIdx the index of a
	// shard run (-1 otherwise); shardRecs counts a merged run's records
	// by shard, shardFirst holds each shard's earliest sent_ns.
	shards     int
	shardIdx   int
	shardRecs  []int64
	shardFirst []int64
	// state checks the records against manifest.server_state (nil: none,
	// or a merged run, whose shards ran on clocks of their own).
	state *stateCheck
	// unsent holds the rate phases an interruption may have stopped in,
	// whose unsent requests are counted after the run order is checked.
	unsent []unsentCount
	// workload holds what each workload item allows (nil: not shipped);
	// serverCounts: client.token_counts is the server's count or a count
	// of content chunks, which the request's max_tokens bounds.
	workload     *WorkloadItems
	serverCounts bool
	// tally holds what the records say each server-metrics scrape must
	// count (nil: no scrapes to compare).
	tally *serverTally
	// sessions holds the turns of a session run's sessions (nil: none
	// seen yet).
	sessions *sessionCheck
}

// genCell is what a RecordChecker keeps of one point × repeat × phase of a
// run made under GeneratorBenchsealV1: the request numbers seen and, in
// rate mode, their scheduled times (16 bytes per record).
type genCell struct {
	maxK  int64
	n     int64
	sched []kSched
	// In a closed-loop phase bounded by a duration: the first send and
	// the ends of the requests, to check the phase ran its duration.
	firstSent int64
	ends      []int64
	// The phase's earliest send and latest end, with the ids of their
	// records (run order: see checkRunOrder).
	lo, hi     int64
	loID, hiID string
}

type kSched struct{ k, s int64 }

// RunSummary counts the records a RecordChecker saw.
type RunSummary struct {
	Records int64 `json:"records"`
	Measure int64 `json:"measure"`
	Warmup  int64 `json:"warmup"`
	// Status counts records by status (unknown statuses under their own
	// name).
	Status map[string]int64 `json:"status"`
	// Chunks counts chunk timestamps.
	Chunks int64 `json:"chunks"`
	// Incomplete is set when the manifest marks the run incomplete, with
	// its reason; Missing then counts the declared measured requests
	// without a record (replay counts them as not sent and as misses).
	Incomplete       bool   `json:"incomplete,omitempty"`
	IncompleteReason string `json:"incomplete_reason,omitempty"`
	Missing          int64  `json:"missing,omitempty"`
	// Unproven lists, for an incomplete run, the point × repeat pairs
	// with measured records that the records cannot show complete (see
	// unprovenCells): a claim on one is not verified by recomputing it.
	Unproven []CellRef `json:"-"`
	// Server lists, per point × repeat and later scrape, what the
	// records say the engine must have counted since the scrape before
	// the point (artifact.CheckServerEvidence compares it with the
	// engine's counters).
	Server []ScrapeTally `json:"-"`
	// Twins lists the repeats not shown independent of an earlier repeat
	// of their point (RepeatTimings): a warning, not a problem, since
	// only a copy with noise of the size of real noise is beyond doubt
	// either way.
	Twins []RepeatTwin `json:"-"`
	// Unplaced lists the measured point × repeat pairs of a capture whose
	// timing and counts no server-metrics scrape checks (see
	// unplacedCells), each with the reason: a claim on one is not
	// verified by recomputing it.
	Unplaced []CellReason `json:"-"`
	// Busy is when some request of the run (any phase) was in flight: the
	// union of the records' [sent_ns, end_ns], disjoint spans in time
	// order. Accelerator energy between two scrapes inside a gap of it is
	// idle energy (artifact.CheckGPUIdle).
	Busy []Span `json:"-"`
}

// CellReason is a point × repeat and why a check could not run on it.
type CellReason struct {
	CellRef
	Reason string
}

// CellRef names one point × repeat.
type CellRef struct {
	Point  string
	Repeat int
}

// NewRecordChecker returns a checker for the records of the run described
// by m. m may be nil (the manifest could not be read); then only the
// checks that need no manifest run. So it is too when m declares more than
// the load limits allow (ValidateManifest reports that): nothing is
// allocated per declared point × repeat.
func NewRecordChecker(m *Manifest) *RecordChecker {
	if m != nil && (!WithinLoadLimits(&m.Load) || m.ShardCount() > MaxShards ||
		m.ShardCount()*len(m.Load.Points)*max(m.Load.Repeats, 1) > MaxShardCells ||
		(m.Shards != nil && len(m.Shards.Members) != m.Shards.Count)) {
		m = nil
	}
	c := &RecordChecker{
		m:        m,
		s1:       maphash.MakeSeed(),
		s2:       maphash.MakeSeed(),
		ids:      make(map[[2]uint64]uint32, 1024),
		seq:      newSeqIDs(),
		sum:      RunSummary{Status: map[string]int64{}},
		shards:   1,
		shardIdx: -1,
	}
	if m != nil {
		c.sum.Incomplete, c.sum.IncompleteReason = m.Incomplete, m.IncompleteReason
		c.points = make(map[string]int, len(m.Load.Points))
		for i, p := range m.Load.Points {
			if _, dup := c.points[p.Name]; !dup {
				c.points[p.Name] = i
			}
		}
		c.repeats = max(m.Load.Repeats, 1)
		c.rate = m.Load.Mode == ModeRate
		c.warmup = m.Load.Warmup.Requests > 0 || m.Load.Warmup.Duration > 0
		c.items = int64(m.Workload.Items)
		c.measured = make([]int64, len(m.Load.Points)*c.repeats)
		c.longest = make([]int64, len(m.Load.Points)*c.repeats)
		c.warmed = make([]int64, len(m.Load.Points)*c.repeats)
		c.shards = m.ShardCount()
		if m.Shard != nil {
			c.shardIdx = m.Shard.Index
		}
		if m.Shards != nil {
			c.shardRecs = make([]int64, c.shards)
			c.shardFirst = make([]int64, c.shards)
		}
		if m.Load.Generator == GeneratorBenchsealV1 {
			c.gen = make([]genCell, 2*len(m.Load.Points)*c.repeats*c.shards)
			c.pointIn = make([]int64, len(m.Load.Points))
			for i, p := range m.Load.Points {
				c.pointIn[i] = int64(p.InputTokens)
			}
		}
		c.offered = newOfferedLoad(m, c.repeats, c.shards)
		c.prints = newCellPrints(m, len(m.Load.Points)*c.repeats)
		c.timings = NewRepeatTimings(m)
		if c.shards == 1 {
			c.state = newStateCheck(m, c.points, c.repeats)
		}
		if m.Shards == nil {
			c.tally = newServerTally(m, c.points, c.repeats)
		}
		pv := m.Provenance
		c.noSched = pv.Field(FieldScheduled).Status == FieldAbsent
		c.noChunkTokens = pv.Field(FieldChunkTokens).Status == FieldAbsent
		c.chunksUsable = pv.Field(FieldChunks).Usable()
		if tc := m.Client.TokenCounts; tc == "server-usage" || tc == "chunk-count-estimate" {
			c.serverCounts = true
			c.maxTokens = int64(m.Decoding.MaxTokens)
			if m.Load.Generator == GeneratorBenchsealV1 {
				c.pointMax = make([]int64, len(m.Load.Points))
				for i, p := range m.Load.Points {
					c.pointMax[i] = int64(p.OutputTokens)
				}
			}
		}
		c.sim = newSimTokens(m)
		c.tokensPerChunk = pv.Field(FieldChunks).Status == FieldMeasured && pv.Field(FieldOutputTokens).Status == FieldMeasured &&
			(m.Client.TokenCounts == "server-usage" || m.Client.TokenCounts == "chunk-count-estimate")
	}
	return c
}

// Summary returns the counts of the records checked so far.
func (c *RecordChecker) Summary() RunSummary { return c.sum }

// Check checks one record, read from line of file (used only to locate
// the problems), and returns its problems.
func (c *RecordChecker) Check(file string, line int, rec *Record) []Problem {
	var ps []Problem
	if c.lastFile != "" && file != c.lastFile {
		c.manyFiles = true
	}
	c.lastFile = file
	c.check(line, rec, func(field, format string, args ...any) {
		if formatHook != nil {
			formatHook()
		}
		ps = append(ps, Problem{File: file, Line: line, Field: field, Message: fmt.Sprintf(format, args...)})
	})
	return ps
}

// Count is Check for a record whose problems will not be listed (the
// reporting cap is reached): the same checks, the same effect on the
// checks across records, but the problems are only counted, never
// formatted.
func (c *RecordChecker) Count(line int, rec *Record) int {
	n := 0
	c.check(line, rec, func(string, string, ...any) { n++ })
	return n
}

// checkPlacement checks what places a record among its run's requests
// beyond point and repeat: its shard, its item, and its session and turn.
func (c *RecordChecker) checkPlacement(pi int, declared bool, line int, rec *Record, add func(field, format string, args ...any)) {
	c.checkShard(rec, add)
	if rec.Item != nil && (*rec.Item < 0 || (c.items > 0 && *rec.Item >= c.items)) {
		add("item", "%d is out of range [0, workload.items)", *rec.Item)
	}
	c.checkSession(pi, declared, line, rec, add)
}

// tallyRecord counts rec in the summary (records, chunks, statuses) and
// adds its [sent_ns, end_ns] to the busy spans.
func (c *RecordChecker) tallyRecord(rec *Record) {
	c.sum.Records++
	c.sum.Chunks += int64(len(rec.ChunksNS))
	c.busy.add(rec.SentNS, rec.EndNS)
	c.sum.Status[rec.Status]++
}

// formatHook, when set (by tests), is called for every problem message
// formatted.
var formatHook func()

// check runs the checks of one record, calling add for each problem.
func (c *RecordChecker) check(line int, rec *Record, add func(field, format string, args ...any)) {
	c.tallyRecord(rec)
	c.checkID(line, rec, add)
	c.checkKind(rec, add)
	pi, declared := c.checkCell(rec, add)
	c.checkPlacement(pi, declared, line, rec, add)
	c.checkTimes(rec, add)
	c.checkTokens(rec, pi, declared, add)
	c.checkChunkTokens(rec, add)
	c.checkStatus(rec, add)
	c.checkEnd(rec, add)
}

// checkID checks that the record's id is set and not a duplicate: the
// line of each sequential id (seqIDs), else a map of the id's hashes.
func (c *RecordChecker) checkID(line int, rec *Record, add func(field, format string, args ...any)) {
	if rec.ID == "" {
		add("id", "must not be empty")
	} else if s, k, ok := c.seq.slice(rec.ID); ok {
		if first, dup := c.seq.see(s, k, line); dup {
			add("id", "duplicate id %q (first on line %d)", rec.ID, first)
		}
	} else {
		k := [2]uint64{maphash.String(c.s1, rec.ID), maphash.String(c.s2, rec.ID)}
		if first, dup := c.ids[k]; dup {
			add("id", "duplicate id %q (first on line %d)", rec.ID, first)
		} else {
			c.ids[k] = uint32(min(line, 1<<32-1))
		}
	}
}

// checkKind checks the record's orig, server report, phase and status
// values.
func (c *RecordChecker) checkKind(rec *Record, add func(field, format string, args ...any)) {
	if len(rec.Orig) > 0 && c.m != nil && !c.m.Imported() {
		// orig holds another tool's values: only an import writes it, and
		// an imported run is re-derived from its source files. A run
		// relabelled as not imported must not keep it.
		add("orig", "only an imported run (evidence %q with a source block) holds a tool's original values", EvidenceImported)
	}
	checkServerReport(rec, add)
	switch rec.Phase {
	case PhaseMeasure:
		c.sum.Measure++
	case PhaseWarmup:
		c.sum.Warmup++
		if c.m != nil && !c.warmup {
			add("phase", "warmup record, but the manifest declares no warmup (load.warmup)")
		}
	default:
		add("phase", "must be %q or %q, got %q", PhaseWarmup, PhaseMeasure, rec.Phase)
	}
	switch rec.Status {
	case StatusOK, StatusError, StatusTimeout, StatusCancelled, StatusRejected:
	default:
		add("status", "must be one of %s, got %q", quoteList(StatusOK, StatusError, StatusTimeout, StatusCancelled, StatusRejected), rec.Status)
	}
}

// checkCell checks the record's point and repeat and, when both are
// declared, adds it to its cell's tallies; it returns the point's index
// (−1 without a manifest) and whether the point is declared.
func (c *RecordChecker) checkCell(rec *Record, add func(field, format string, args ...any)) (pi int, declared bool) {
	pi, declared = -1, true
	if c.m != nil {
		pi, declared = c.points[rec.Point]
		if !declared {
			add("point", "%q is not declared in the manifest's load.points", rec.Point)
		}
	} else if rec.Point == "" {
		add("point", "must not be empty")
	}
	if rec.Repeat < 0 || (c.m != nil && rec.Repeat >= c.repeats) {
		add("repeat", "%d is out of range [0, %d)", rec.Repeat, c.repeats)
	} else if declared && pi >= 0 {
		cell := pi*c.repeats + rec.Repeat
		switch rec.Phase {
		case PhaseMeasure:
			c.measured[cell]++
			if rec.EndNS > rec.SentNS && rec.SentNS >= 0 {
				c.longest[cell] = max(c.longest[cell], rec.EndNS-rec.SentNS)
			}
		case PhaseWarmup:
			c.warmed[cell]++
		}
		if c.gen != nil && (rec.Phase == PhaseMeasure || rec.Phase == PhaseWarmup) {
			c.checkGenerated(cell, rec, add)
		}
		c.offered.add(cell*c.shards+c.recordShard(rec), rec)
		c.addPrint(cell, rec)
		c.timings.Add(pi, rec)
		if c.state != nil {
			c.state.add(cell, rec)
		}
		c.tally.add(cell, rec, c.outputCap(rec))
	}
	return pi, declared
}

// checkTimes checks sent_ns, scheduled_ns, end_ns and chunks_ns.
func (c *RecordChecker) checkTimes(rec *Record, add func(field, format string, args ...any)) {
	if rec.SentNS < 0 {
		add("sent_ns", "must not be negative, got %d", rec.SentNS)
	}
	if s := rec.ScheduledNS; s != nil {
		switch {
		case c.m != nil && !c.rate:
			add("scheduled_ns", "is for open-loop (rate mode) runs only")
		case *s < 0:
			add("scheduled_ns", "must not be negative, got %d", *s)
		case *s > rec.SentNS:
			add("scheduled_ns", "%d is after sent_ns %d", *s, rec.SentNS)
		}
	}
	if rec.ScheduledNS != nil && c.noSched {
		add("scheduled_ns", "is set, but manifest.provenance declares scheduled_ns absent")
	}
	if rec.ChunkTokens != nil && c.noChunkTokens {
		add("chunk_tokens", "is set, but manifest.provenance declares chunk_tokens absent")
	}
	if rec.EndNS < rec.SentNS {
		add("end_ns", "%d is before sent_ns %d", rec.EndNS, rec.SentNS)
	}
	prev := int64(0)
	for i, t := range rec.ChunksNS {
		if t < 0 {
			add("chunks_ns", "element %d: must not be negative, got %d", i, t)
			break
		}
		if t < prev {
			add("chunks_ns", "element %d: %d is before the previous chunk %d (must be non-decreasing)", i, t, prev)
			break
		}
		prev = t
	}
	if n := len(rec.ChunksNS); n > 0 && rec.EndNS >= rec.SentNS && prev > rec.EndNS-rec.SentNS {
		add("chunks_ns", "last chunk at sent_ns+%d is after end_ns (sent_ns+%d)", prev, rec.EndNS-rec.SentNS)
	}
}

// checkTokens checks the token counts against each other and against the
// manifest's bounds for the record's point pi.
func (c *RecordChecker) checkTokens(rec *Record, pi int, declared bool, add func(field, format string, args ...any)) {
	if rec.InputTokens < 0 {
		add("input_tokens", "must not be negative")
	}
	if rec.OutputTokens < 0 {
		add("output_tokens", "must not be negative")
	}
	if c.maxTokens > 0 && rec.OutputTokens > c.maxTokens {
		// A request never returns more tokens than its max_tokens (with
		// ignore_eos it may still return fewer: a context limit, a stop
		// string, a timeout), so only the upper bound holds.
		add("output_tokens", "%d is more than decoding.max_tokens %d (client.token_counts %q: the server's count, which max_tokens bounds)", rec.OutputTokens, c.maxTokens, c.m.Client.TokenCounts)
	} else if declared && pi >= 0 && c.pointMax != nil && c.pointMax[pi] > 0 && rec.OutputTokens > c.pointMax[pi] {
		add("output_tokens", "%d is more than load.points[%d].output_tokens %d, the max_tokens load.generator %q sent for the point (client.token_counts %q: the server's count, which max_tokens bounds)", rec.OutputTokens, pi, c.pointMax[pi], GeneratorBenchsealV1, c.m.Client.TokenCounts)
	}
	inChecked := false
	if declared && pi >= 0 && c.pointIn != nil && c.pointIn[pi] > 0 {
		inChecked = true
		if rec.InputTokens > c.pointIn[pi]+MaxTemplateTokens {
			add("input_tokens", "%d is more than load.points[%d].input_tokens %d plus %d tokens of chat template: load.generator %q sends the point synthetic prompts of that many words, whatever its workload items state", rec.InputTokens, pi, c.pointIn[pi], MaxTemplateTokens, GeneratorBenchsealV1)
		}
	}
	c.checkItemTokens(rec, inChecked, add)
}

// checkChunkTokens checks chunk_tokens against chunks_ns and
// output_tokens.
func (c *RecordChecker) checkChunkTokens(rec *Record, add func(field, format string, args ...any)) {
	if rec.ChunkTokens != nil {
		if len(rec.ChunkTokens) != len(rec.ChunksNS) {
			add("chunk_tokens", "has %d elements, chunks_ns has %d", len(rec.ChunkTokens), len(rec.ChunksNS))
		} else {
			var sum int64
			neg := false
			for _, k := range rec.ChunkTokens {
				if k < 0 {
					neg = true
				}
				sum += k
			}
			if neg {
				add("chunk_tokens", "must not hold negative counts")
			} else if sum != rec.OutputTokens {
				add("chunk_tokens", "sum to %d, output_tokens is %d", sum, rec.OutputTokens)
			}
		}
	}
}

// checkStatus checks the rules of an ok and of a rejected record.
func (c *RecordChecker) checkStatus(rec *Record, add func(field, format string, args ...any)) {
	switch rec.Status {
	case StatusOK:
		if len(rec.ChunksNS) == 0 {
			add("chunks_ns", "an ok record must have at least one chunk")
		}
		if rec.OutputTokens < 1 {
			add("output_tokens", "an ok record must have at least one output token")
		}
		// Every content-bearing chunk carries a token: an answer in
		// several chunks is never a one-token answer (which passes any
		// TPOT limit under one_token "pass").
		n := int64(len(rec.ChunksNS))
		if c.chunksUsable && rec.OutputTokens == 1 && n > 1 {
			add("output_tokens", "is 1, but the answer arrived in %d content-bearing chunks (each carries at least one token)", n)
		} else if c.tokensPerChunk && rec.ChunkTokens == nil && rec.OutputTokens >= 1 && rec.OutputTokens < n {
			add("output_tokens", "is %d, fewer than the %d content-bearing chunks (client.token_counts %q: each chunk carries at least one token)", rec.OutputTokens, n, c.m.Client.TokenCounts)
		}
		if rec.Error != "" {
			add("error", "is set on an ok record")
		}
	case StatusRejected:
		if len(rec.ChunksNS) > 0 {
			add("chunks_ns", "a rejected record must have no chunks")
		}
	}
}

// checkTimeout checks that a record's status agrees with its own times
// and the manifest's load.request_timeout, counted from sent_ns: an ok
// record ended within it, a timeout record did not.
func (c *RecordChecker) checkTimeout(rec *Record, add func(field, format string, args ...any)) {
	if c.m == nil || c.m.Load.RequestTimeout <= 0 || rec.EndNS < rec.SentNS {
		return
	}
	to, d := int64(c.m.Load.RequestTimeout), rec.EndNS-rec.SentNS
	switch {
	case rec.Status == StatusOK && d > to:
		add("status", "is ok, but end_ns − sent_ns = %s exceeds the manifest's load.request_timeout %s (the request timed out)", Duration(d), Duration(to))
	case rec.Status == StatusTimeout && d < to:
		add("status", "is timeout, but end_ns − sent_ns = %s is shorter than the manifest's load.request_timeout %s", Duration(d), Duration(to))
	}
}

// Finish runs the checks across all records: every declared point×repeat
// has measured records (an incomplete run may lack the points after the
// one it stopped in), warmup records exist when warmup was declared, and
// no declared work is missing (see checkCompleteness).
func (c *RecordChecker) Finish() []Problem {
	c.sum.Busy = c.busy.finish()
	file := c.lastFile
	switch {
	case c.manyFiles:
		// A problem found across all records (a count, a missing
		// shard, a request moved) is not about the file read last.
		file = "records"
	case file == "":
		file = RecordsFile
	}
	var ps []Problem
	add := func(field, format string, args ...any) {
		ps = append(ps, Problem{File: file, Field: field, Message: fmt.Sprintf(format, args...)})
	}
	if c.m == nil {
		if c.sum.Records == 0 {
			add("", "no records")
		}
		return ps
	}
	if c.sum.Records == 0 && !c.m.ExternalReference() {
		add("", "no records (only an imported external-evidence reference, with manifest.external, may have none)")
		return ps
	}
	if c.m.Incomplete {
		if !c.coveragePrefix(true) && !c.coveragePrefix(false) {
			add("", "incomplete run: the measured point×repeat pairs are not a prefix of the plan (points in order, repeats in order)")
		}
	} else {
		for i, p := range c.m.Load.Points {
			for r := range c.repeats {
				if c.measured[i*c.repeats+r] == 0 && !c.noShare(i) {
					add("load.points["+strconv.Itoa(i)+"]", "point %q repeat %d has no measured records", p.Name, r)
				}
			}
		}
	}
	if c.warmup && c.sum.Warmup == 0 {
		add("load.warmup", "warmup was declared but no record has phase %q", PhaseWarmup)
	}
	if w := c.workload; w != nil && w.Bad > 0 && c.gen != nil {
		add("workload", "line %d of %s does not decode as a workload item (a prompt, text or messages, with token counts): load.generator %q sends only items it read", w.Bad, WorkloadFile, GeneratorBenchsealV1)
	}
	c.checkCompleteness(add)
	c.finishSessions(func(line int, field, format string, args ...any) {
		ps = append(ps, Problem{File: file, Line: line, Field: field, Message: fmt.Sprintf(format, args...)})
	})
	c.sum.Unproven = c.unprovenCells()
	c.checkOfferedLoad(add)
	c.checkToolWindows(add)
	c.checkCopies(add)
	c.sum.Twins = c.timings.Twins()
	c.checkShardCounts(add)
	if c.state != nil {
		c.state.finish(c.m, add)
	}
	c.sum.Server = c.tally.finish(c, add)
	c.sum.Unplaced = c.unplacedCells()
	return ps
}

// coveragePrefix reports whether the measured pairs form a prefix of the
// plan, taken point-major (all repeats of a point, then the next point) or
// repeat-major (all points of a repeat, then the next repeat).
func (c *RecordChecker) coveragePrefix(pointMajor bool) bool {
	np := len(c.m.Load.Points)
	gap := false
	for a := range np * c.repeats {
		var p, r int
		if pointMajor {
			p, r = a/c.repeats, a%c.repeats
		} else {
			r, p = a/np, a%np
		}
		if c.noShare(p) {
			continue
		}
		has := c.measured[p*c.repeats+r] > 0
		if has && gap {
			return false
		}
		if !has {
			gap = true
		}
	}
	return true
}

// checkServerReport checks a record's retries and the engine's own
// numbers: no negative value, and no more cached prompt tokens than the
// prompt has (cached_tokens and llama.cpp's cache_n, when the record's
// input_tokens came from the same answer: status ok).
func checkServerReport(rec *Record, add func(field, format string, args ...any)) {
	if rec.Retries < 0 {
		add("retries", "must not be negative, got %d", rec.Retries)
	}
	sr := rec.Server
	if sr == nil {
		return
	}
	for i, n := range serverReportFields {
		if v := *serverReportField(sr, i); v != nil && *v < 0 {
			add("server."+n, "must not be negative, got %d", *v)
		}
	}
	if rec.Status != StatusOK {
		return
	}
	for _, f := range []struct {
		name string
		v    *int64
	}{{"cached_tokens", sr.CachedTokens}, {"cache_n", sr.CacheN}} {
		if f.v != nil && *f.v > rec.InputTokens {
			add("server."+f.name, "%d cached prompt tokens, but input_tokens is %d", *f.v, rec.InputTokens)
		}
	}
}

// unprovenCells returns, for a run marked incomplete, the point × repeat
// pairs with measured records that the records cannot show complete:
// only a point with a declared request count (and no duration) is shown
// complete, by holding that many measured records (a shard run: its
// share). An interruption may have cut any other short, and a publisher
// could have dropped its slowest requests with it (without
// load.generator nothing else fixes which requests there were; under it
// a duration-bounded phase's end is not fixed either), so claims on them
// are the publisher's word.
func (c *RecordChecker) unprovenCells() []CellRef {
	if !c.m.Incomplete {
		return nil
	}
	var out []CellRef
	for i := range c.m.Load.Points {
		p := &c.m.Load.Points[i]
		for r := range c.repeats {
			have := c.measured[i*c.repeats+r]
			if have == 0 {
				continue
			}
			pp := phasePlan{point: p}
			if p.Requests > 0 && p.Duration == 0 && have >= c.share(&pp, int64(p.Requests)) {
				continue
			}
			out = append(out, CellRef{Point: p.Name, Repeat: r})
		}
	}
	return out
}
