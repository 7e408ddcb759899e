package replay

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/big"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benchseal/benchseal/internal/progress"
	"github.com/benchseal/benchseal/schema"
)

// ErrBadOption is the condition of an option value the engine cannot take
// (an SLO, sweep, MLPerf limit, smooth-goodput parameter or fraction that
// does not parse or is out of range). Such errors read as the message
// alone, so a caller can prefix the flag the value came from.
var ErrBadOption = errors.New("bad option value")

// DefaultStallThresholdNS is the stall threshold when no TPOT limit is set.
const DefaultStallThresholdNS = int64(1e9)

// Options configure a replay. The zero value replays under benchseal's
// canonical definitions with the manifest's SLO.
type Options struct {
	// Definitions names the metric definitions: "" or "benchseal" for the
	// canonical ones, or a peer tool (see DefinitionNames).
	Definitions string
	// Version names the definitions version to compute under ("" the
	// current one, CurrentVersion), e.g. "benchseal/2026.11" (Versions).
	Version string
	// SLO, when set, replaces the manifest's SLO.
	SLO *SLOSpec
	// Smooth, when set, computes smooth goodput with these parameters;
	// otherwise it is reported as not computed (null).
	Smooth *SmoothParams
	// StallThresholdNS overrides the stall threshold (default: the TPOT
	// limit, else DefaultStallThresholdNS).
	StallThresholdNS int64
	// Sweep, when set, computes goodput as a function of one SLO limit.
	Sweep *SweepSpec
	// MLPerf, when set, runs the MLPerf server-scenario validity check.
	MLPerf *MLPerfLimits
	// AttainmentTarget is the SLO attainment a load point must reach for
	// the capacity estimate (default 9/10).
	AttainmentTarget *big.Rat
	// Workload, when set, is the run's workload items: a trace replay's
	// items state each request's expected cacheable tokens, which each
	// point's PrefixCache sets against the cached tokens the server
	// reported.
	Workload *schema.WorkloadItems
}

// SLOFromManifest converts a manifest SLO; zero limits are not set, an
// empty one-token policy means "pass".
func SLOFromManifest(s schema.SLO) SLOSpec {
	out := SLOSpec{OneToken: schema.OneTokenPass, Source: "manifest"}
	set := func(d schema.Duration) *int64 {
		if d <= 0 {
			return nil
		}
		v := int64(d)
		return &v
	}
	out.TTFTNS, out.E2ENS, out.TPOTNS = set(s.TTFT), set(s.E2E), set(s.TPOT)
	if s.OneToken != "" {
		out.OneToken = s.OneToken
	}
	if !out.Any() {
		out.Source = "none"
	}
	return out
}

// replayVersion returns the version of def a replay computes under: name,
// or the current one when name is "". A version whose rules this
// benchseal no longer computes is an error that says so.
func replayVersion(def Definition, name string) (Version, error) {
	if name == "" {
		name = CurrentVersion(def.Name())
	}
	v, err := LookupVersion(def.Name(), name)
	if err != nil {
		return v, err
	}
	if !v.Kept {
		return v, badInput("definitions version %s: its rules are not kept in this benchseal (the first kept is %s)", v.Name, firstKept(v).Name)
	}
	return v, nil
}

type groupKey struct {
	point  string
	repeat int
}

// Replay recomputes every metric of run under opts. It streams the records
// once, and when a distribution is large reads them a second time from
// its own compact copy (accumulateExact, recordlog.go): it holds per point
// and repeat only the samples needed for exact percentiles. Records are
// read and decoded in a goroutine of their own, ahead of the metric engine (see recordStream),
// and the groups are finished in parallel; the result does not depend on
// either.
func Replay(ctx context.Context, run schema.Run, opts Options) (*Result, error) {
	def, err := lookupDefinition(opts.Definitions)
	if err != nil {
		return nil, err
	}
	ver, err := replayVersion(def, opts.Version)
	if err != nil {
		return nil, err
	}
	m := run.Manifest()
	if m == nil {
		return nil, badInput("replay: run has no manifest")
	}
	if err := schema.CheckLoadLimits(&m.Load, schema.ManifestFile); err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	cfg, sloNote, err := newConfig(def, ver, m, opts)
	if err != nil {
		return nil, err
	}
	acc, err := accumulateExact(ctx, run, m, cfg)
	if err != nil {
		return nil, err
	}
	defer acc.close()
	if testHookAccumulated != nil {
		testHookAccumulated()
	}
	return assemble(run, m, def, ver, cfg, opts, sloNote, acc)
}

// newConfig resolves what a replay computes under: the SLO (the
// manifest's, or the one given, which replaces it whole), the one-token
// policy the definitions apply, the stall threshold, smooth goodput's and
// the sweep's parameters, and what the gate nulls.
func newConfig(def Definition, ver Version, m *schema.Manifest, opts Options) (*config, string, error) {
	slo := SLOFromManifest(m.SLO)
	if opts.SLO != nil {
		man := slo
		slo = *opts.SLO
		if slo.OneToken == "" {
			slo.OneToken = schema.OneTokenPass
		}
		slo.NotApplied = nil
		for _, k := range schema.SLOKeys {
			if m := man.Limit(k); m != nil && slo.Limit(k) == nil {
				slo.NotApplied = append(slo.NotApplied, k+"="+time.Duration(*m).String())
			}
		}
	}
	if slo.OneToken != schema.OneTokenPass && slo.OneToken != schema.OneTokenFail {
		return nil, "", badInput("replay: one-token policy %q is neither pass nor fail", slo.OneToken)
	}
	if opts.Smooth != nil {
		if err := opts.Smooth.check(); err != nil {
			return nil, "", err
		}
	}
	stall := opts.StallThresholdNS
	if stall <= 0 {
		stall = DefaultStallThresholdNS
		if slo.TPOTNS != nil {
			stall = *slo.TPOTNS
		}
	}
	slo, sloNote := applyOneTokenPolicy(def, slo)
	cfg := &config{def: def, rules: ver.rules, slo: slo, smooth: opts.Smooth, stall: stall, sweep: opts.Sweep, mlperf: opts.MLPerf,
		untimed: m.Client.Boundary == schema.BoundaryNonStreaming, prov: m.Provenance, workload: opts.Workload}
	cfg.gate = newGate(m, ver.rules, slo, opts.Smooth != nil, m.Cost != nil, def.unmeasured(m))
	cfg.skip = skippedMetrics(slo, opts.Smooth != nil, m.Cost != nil)
	cfg.over = newOverloadCfg(m)
	cfg.shards = m.Shards
	if m.Evidence == schema.EvidenceImported && m.Source != nil {
		cfg.origTool = m.Source.Tool
	}
	if cfg.sweep != nil {
		if err := cfg.sweep.check(); err != nil {
			return nil, "", err
		}
	}

	return cfg, sloNote, nil
}

// accumulated is what one pass over the records gives: the groups by
// point and repeat, the phases' spans of a merged run and the repeats'
// timings.
type accumulated struct {
	groups  map[groupKey]*group
	merged  bool
	spans   phaseSpans
	timings *schema.RepeatTimings
	// records counts the records read.
	records int
	// spilled is set when a distribution spilled (the first pass of two).
	spilled bool
	// file holds the groups' overload data past overloadHeld requests;
	// close removes it once the groups are finished.
	file *spillFile
}

// close closes and removes the pass's spill file and the files of its
// groups' peer rules (GuideLLM's rate events).
func (a *accumulated) close() {
	if a == nil {
		return
	}
	a.file.close()
	for _, g := range a.groups {
		if c, ok := g.peerCloser(); ok {
			c.close()
		}
	}
}

// testHookAccumulated, when set by a test, runs once the records are
// accumulated, before anything is finished: the point where a replay
// holds the most per record.
var testHookAccumulated func()

// accumulateExact streams the records into their groups: once, or, when
// a distribution grew past spillAt samples and counted them in a
// histogram, twice, the second pass keeping only the samples its
// percentiles need (twopass.go). The second pass reads the records log
// the first wrote (recordlog.go), or the run again when that log could
// not be kept.
func accumulateExact(ctx context.Context, run schema.Run, m *schema.Manifest, cfg *config) (*accumulated, error) {
	log := &recordLog{}
	defer log.close()
	acc, err := accumulate(ctx, func() (schema.RecordIterator, error) {
		it, err := run.OpenRecords()
		if err != nil {
			return nil, err
		}
		return &teeIterator{it: it, log: log}, nil
	}, m, cfg, nil)
	if err != nil {
		return nil, err
	}
	if !acc.spilled {
		return acc, nil
	}
	again := run.OpenRecords // the log could not be written: the source again
	if log.usable() {
		again = log.open
	}
	plans := map[groupKey]groupPlan{}
	for k, g := range acc.groups {
		plans[k] = g.plan()
	}
	first := acc.records
	acc.close()
	acc = nil // the first pass's groups are garbage now
	acc, err = accumulate(ctx, again, m, cfg, plans)
	if err != nil {
		return nil, err
	}
	if err := checkSecondPass(m, acc, plans, first); err != nil {
		acc.close()
		return nil, err
	}
	return acc, nil
}

// checkSecondPass reports a second pass whose records differ from the
// first's.
func checkSecondPass(m *schema.Manifest, acc *accumulated, plans map[groupKey]groupPlan, first int) error {
	if acc.records != first {
		return fmt.Errorf("replay: the records changed between the two passes: %d records in the first, %d in the second", first, acc.records)
	}
	for _, k := range orderGroups(m, acc.groups) {
		if err := acc.groups[k].checkSpills(); err != nil {
			return fmt.Errorf("replay: point %s repeat %d: %w", k.point, k.repeat, err)
		}
	}
	for k := range plans {
		if acc.groups[k] == nil {
			return fmt.Errorf("replay: the records changed between the two passes: point %s repeat %d is gone", k.point, k.repeat)
		}
	}
	return nil
}

// problemsSoFar is a record stream that validates the records it reads
// (schema.CheckedRunDir's): it tells the problems found so far.
type problemsSoFar interface{ Problems() error }

// recordError is the error of a record the engine cannot take: the
// problems the stream found so far when it validates the records (such a
// record is likely one of them; validate lists them by file, line and
// field), else err naming the record. It stops st.
func recordError(st *recordStream, it schema.RecordIterator, rec *schema.Record, err error) error {
	err = fmt.Errorf("replay: record %q: %w", rec.ID, err)
	st.stop() // it is no longer read in the background
	if p, ok := it.(problemsSoFar); ok {
		if perr := p.Problems(); perr != nil {
			return fmt.Errorf("replay: %w", perr)
		}
	}
	return err
}

// accumulate streams the records once into their groups. Without plans
// (the first pass) a group's large distributions may spill; with them
// (the second) a group takes its first-pass twin's plan. The groups'
// overload data goes to a file past overloadHeld requests: from the
// start in a second pass that will hold more. The file is the
// accumulated's to close, and closed here on an error.
func accumulate(ctx context.Context, open func() (schema.RecordIterator, error), m *schema.Manifest, cfg *config, plans map[groupKey]groupPlan) (*accumulated, error) {
	file := &spillFile{}
	var held int64
	for _, p := range plans {
		held += p.sent
	}
	file.on = held > overloadHeld
	acc, err := readGroups(ctx, open, m, cfg, plans, file)
	if err == nil {
		err = file.err
	}
	if err != nil {
		file.close()
		return nil, err
	}
	acc.file = file
	return acc, nil
}

// readGroups is accumulate's pass over the records.
func readGroups(ctx context.Context, open func() (schema.RecordIterator, error), m *schema.Manifest, cfg *config, plans map[groupKey]groupPlan, file *spillFile) (*accumulated, error) {
	it, err := open()
	if err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}
	defer it.Close()
	phase := "replay: read records"
	if plans != nil {
		phase = "replay: read records again (exact percentiles)"
	}
	st := newRecordStream(it, progress.Phase(ctx, phase, "records", -1))
	defer st.stop() // before it.Close
	groups := map[groupKey]*group{}
	merged := m.Shards != nil && m.Shards.Count > 1
	var spans phaseSpans
	timings := schema.NewRepeatTimings(m)
	pointIdx := make(map[string]int, len(m.Load.Points))
	for i, p := range m.Load.Points {
		if _, dup := pointIdx[p.Name]; !dup {
			pointIdx[p.Name] = i
		}
	}
	var (
		g       *group // the group of the previous record: runs are long
		gkey    groupKey
		n       int
		spilled bool // a distribution spilled: see group.allowSpill
		dropped bool // the groups' overload data is dropped
	)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for {
		b := st.next()
		for _, rec := range b.recs {
			if n&4095 == 0 && n > 0 {
				if err := cmp.Or(ctx.Err(), file.err); err != nil {
					return nil, err
				}
			}
			n++
			if g == nil || rec.Repeat != gkey.repeat || rec.Point != gkey.point {
				gkey = groupKey{rec.Point, rec.Repeat}
				g = groups[gkey]
				if g == nil {
					g = newGroup(cfg)
					g.od.file = file
					if plans == nil {
						g.allowSpill(&spilled)
					} else if p, ok := plans[gkey]; ok {
						g.usePlan(p)
					}
					groups[gkey] = g
				}
			}
			if err := g.add(rec); err != nil {
				return nil, recordError(st, it, rec, err)
			}
			if spilled && !dropped {
				for _, g := range groups {
					g.od.drop()
				}
				dropped = true
			}
			if merged {
				spans.add(rec)
			}
			if pi, ok := pointIdx[rec.Point]; ok && timings != nil {
				timings.Add(pi, rec)
			}
		}
		if b.err == io.EOF {
			break
		}
		if b.err != nil {
			return nil, fmt.Errorf("replay: %w", b.err)
		}
		st.release(b)
	}
	st.stop()
	if err := it.Close(); err != nil {
		return nil, fmt.Errorf("replay: %w", err)
	}

	return &accumulated{groups: groups, merged: merged, spans: spans, timings: timings, records: n, spilled: spilled}, nil
}

// assemble finishes the groups into the result: cost, completeness,
// notes, server columns, overload verdicts, the summary across repeats,
// the sweep and the capacity.
func assemble(run schema.Run, m *schema.Manifest, def Definition, ver Version, cfg *config, opts Options, sloNote string, acc *accumulated) (*Result, error) {
	groups, merged, spans, timings, slo := acc.groups, acc.merged, &acc.spans, acc.timings, cfg.slo
	cost, err := costFromManifest(m.Cost)
	if err != nil {
		return nil, err
	}
	res := &Result{Schema: SchemaV1, Definitions: def.Name(), DefinitionsVersion: ver.Name, Boundary: m.Client.Boundary, SLO: slo, Smooth: opts.Smooth, Aliases: def.Aliases(), Cost: cost}
	if m.Plan != nil {
		res.Plan = "sha256:" + m.Plan.SHA256
	}
	res.ClientBuild = m.Client.Build
	if m.Source != nil {
		res.ImporterBuild = m.Source.Importer
	}
	if len(groups) > 0 { // a run without records has nothing to count
		missing, err := countMissing(m, groups, cfg)
		if err != nil {
			return nil, fmt.Errorf("replay: %w", err)
		}
		if m.Incomplete || missing > 0 {
			res.Incomplete = &Incomplete{Reason: m.IncompleteReason, Missing: missing}
		}
	}
	if sh := m.Shard; sh != nil && sh.Count > 1 {
		res.Notes = append(res.Notes, fmt.Sprintf("this run is shard %d of %d of a sharded capture: its counts, window and rates cover only this shard's share of the load (benchseal merge joins the shards into the run)", sh.Index, sh.Count))
	}
	if cfg.untimed {
		res.Notes = append(res.Notes, NonStreamingNote)
	}
	if len(groups) == 0 {
		res.Notes = append(res.Notes, noRecordsNote(m))
	}
	res.Notes = append(res.Notes, def.Notes()...)
	if sloNote != "" {
		res.Notes = append(res.Notes, sloNote)
	}
	if err := res.addResults(groups, orderGroups(m, groups), cost, merged, spans); err != nil {
		return nil, err
	}
	if n := burstNote(m, groups); n != "" {
		res.Notes = append(res.Notes, n)
	}
	if opts.Smooth == nil && len(groups) > 0 {
		res.Notes = append(res.Notes, schema.MetricSmoothGoodput+" not computed: it needs explicit parameters alpha, v and f (no default penalty function exists)")
	}
	if !slo.Any() && len(groups) > 0 {
		res.Notes = append(res.Notes, "no SLO set: "+schema.MetricGoodput+", "+schema.MetricTokenGoodput+" and "+schema.MetricSLOAttainment+" are null")
	}
	addServerColumns(run, m, slo, res.Results)
	if err := addEnergyColumns(run, m, res.Results); err != nil {
		return nil, err
	}
	addServerState(m, res.Results)
	addPreflight(m, res.Results)
	for _, p := range res.Results {
		decideOverload(p)
		if n := AboveOffered(p); n != "" {
			res.Notes = append(res.Notes, n)
		}
	}
	markTwins(res, timings.Twins())
	res.Summary = summarise(res.Results, max(m.Load.Repeats, 1))
	if m.GPUMetrics != nil {
		summariseEnergy(res.Summary, res.Results, max(m.Load.Repeats, 1))
	}
	if cfg.sweep != nil {
		if def.peerRules() != nil {
			var notes []string
			res.Sweep, notes = buildPeerSweep(cfg.sweep, groups, orderGroups(m, groups))
			res.Notes = append(res.Notes, notes...)
		} else {
			res.Sweep = buildSweep(cfg.sweep, groups, orderGroups(m, groups))
		}
		if why := cfg.gate.sweepReason(cfg.sweep.Metric, slo); why != "" {
			res.Sweep.null()
			res.Notes = append(res.Notes, "sweep of "+cfg.sweep.Metric+" is null: "+why)
		}
	}
	res.Capacity = capacity(m, res, attainmentTarget(opts))
	return res, nil
}

// countMissing adds, to every declared point × repeat with a request count
// and no duration, the measured requests that have no record, as not sent
// (a point never started becomes a group of them), and
// returns how many it added. Only an incomplete run may miss requests:
// in any other the shortfall is invalid (schema.MissingWork, validate's
// rule), and it returns that *schema.ValidationError; counting them keeps
// goodput and SLO attainment from rising when hard requests are left out.
func countMissing(m *schema.Manifest, groups map[groupKey]*group, cfg *config) (int64, error) {
	var total int64
	var invalid []schema.Problem
	for i, p := range m.Load.Points {
		if p.Requests <= 0 || p.Duration > 0 {
			continue
		}
		for r := range max(m.Load.Repeats, 1) {
			k := groupKey{p.Name, r}
			g := groups[k]
			var have int64
			if g != nil {
				have = g.counts.Sent
			}
			declared := int64(p.Requests)
			if sh := m.Shard; sh != nil && sh.Count > 1 {
				// A shard run declares the whole plan but owes its share.
				declared = schema.ShardRequests(m.Load.Mode, p.Concurrency, sh.Count, sh.Index, declared)
			}
			miss := declared - have
			if miss <= 0 {
				continue
			}
			if msg := schema.MissingWork(m, schema.PhaseName(m, p.Name, r, schema.PhaseMeasure), have, declared); msg != "" {
				invalid = append(invalid, schema.Problem{File: schema.RecordsFile, Field: "load.points[" + strconv.Itoa(i) + "].requests", Message: msg})
				continue
			}
			if g == nil {
				g = newGroup(cfg)
				groups[k] = g
			}
			g.counts.NotSent += miss
			g.missing += miss
			if g.peer != nil {
				g.peer.sent += miss
			}
			total += miss
		}
	}
	if len(invalid) > 0 {
		return 0, &schema.ValidationError{Problems: invalid}
	}
	return total, nil
}

// NoPerRequestData starts the note of a replay of a run without records.
const NoPerRequestData = "no per-request data"

// noRecordsNote says why a run has nothing to recompute.
func noRecordsNote(m *schema.Manifest) string {
	if !m.ExternalReference() {
		return NoPerRequestData + ": the run has no records"
	}
	var refs []string
	for _, e := range m.External {
		r := e.Kind
		for _, s := range []string{e.Version, e.Scenario, e.Status} {
			if s != "" {
				r += " " + s
			}
		}
		refs = append(refs, r)
	}
	return NoPerRequestData + "; external evidence only (" + strings.Join(refs, "; ") + "): nothing to recompute, its results (manifest.external) are UNVERIFIED, as published by the source"
}

// orderGroups orders groups by the manifest's point order, then repeat;
// points absent from the manifest follow, by name.
func orderGroups(m *schema.Manifest, groups map[groupKey]*group) []groupKey {
	idx := map[string]int{}
	for i, p := range m.Load.Points {
		idx[p.Name] = i
	}
	keys := make([]groupKey, 0, len(groups))
	for k := range groups {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b groupKey) int {
		ia, oka := idx[a.point]
		ib, okb := idx[b.point]
		switch {
		case oka && okb && ia != ib:
			return ia - ib
		case oka != okb:
			if oka {
				return -1
			}
			return 1
		case a.point != b.point:
			if a.point < b.point {
				return -1
			}
			return 1
		}
		return a.repeat - b.repeat
	})
	return keys
}

// finishGroups finishes every group, the groups being independent, on up
// to one goroutine per processor; the results are in keys' order. A
// group whose overload data could not be read back fails the replay.
func finishGroups(groups map[groupKey]*group, keys []groupKey) ([]*PointResult, error) {
	out := make([]*PointResult, len(keys))
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(keys)) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= len(keys) {
					return
				}
				out[i] = groups[keys[i]].finish(keys[i])
				groups[keys[i]].setOutputTokens(out[i])
			}
		})
	}
	wg.Wait()
	for _, k := range keys {
		if err := groups[k].spillErr; err != nil {
			return nil, fmt.Errorf("replay: point %s repeat %d: %w", k.point, k.repeat, err)
		}
	}
	return out, nil
}

// addResults finishes the groups, in keys' order, into res.Results with
// their cost and the notes each gives (missing requests, overlapping or
// apart phases of a merged run, the peer definitions' notes once each).
func (res *Result) addResults(groups map[groupKey]*group, keys []groupKey, cost *CostSpec, merged bool, spans *phaseSpans) error {
	prs, err := finishGroups(groups, keys)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for i, pr := range prs {
		g := groups[keys[i]]
		addCost(pr, cost)
		if g.missing > 0 {
			res.Notes = append(res.Notes, nullWindowRates(pr, g.missing))
		}
		res.Results = append(res.Results, pr)
		if merged {
			if ov := spans.overlaps(pr.Point, pr.Repeat); len(ov) > 0 {
				pr.PhasesOverlap = ov
				res.Notes = append(res.Notes, overlapNote(pr, ov))
			}
			if ap := spans.apart(pr.Point, pr.Repeat); ap != nil {
				res.Notes = append(res.Notes, apartNote(pr.Point, pr.Repeat, ap))
			}
		}
		if g.peer != nil {
			for _, n := range g.peer.notesList() {
				if !seen[n] {
					seen[n] = true
					res.Notes = append(res.Notes, n)
				}
			}
		}
	}
	return nil
}
