package replay

import (
	"fmt"
	"math/big"
	"strings"

	"github.com/benchseal/benchseal/schema"
)

// SchemaV1 is the schema identifier of the replay JSON result.
const SchemaV1 = "benchseal/replay/v1"

// Percentile is one reported percentile: its JSON key and its exact
// fraction Num/Den.
type Percentile struct {
	Key      string
	Num, Den int64
}

// Frac is the percentile as the float64 nearest Num/Den (what a tool's
// literal 0.999 is); peer definitions use it, never canonical ones.
func (p Percentile) Frac() float64 { return float64(p.Num) / float64(p.Den) }

// Percent is the percentile in percent as the float64 nearest 100·Num/Den
// (what numpy.percentile is given, e.g. 99.9).
func (p Percentile) Percent() float64 { return float64(100*p.Num) / float64(p.Den) }

// Percentiles are the percentiles every distribution reports, in
// increasing order. The contract's core set is p50, p90, p95, p99 and
// p999; the lower ones (p01 = 0.1th, p1, p5, p10, p25, p75) were added
// because peer tools publish them.
var Percentiles = []Percentile{
	{"p01", 1, 1000}, {"p1", 1, 100}, {"p5", 1, 20}, {"p10", 1, 10}, {"p25", 1, 4},
	{"p50", 1, 2}, {"p75", 3, 4}, {"p90", 9, 10}, {"p95", 19, 20}, {"p99", 99, 100}, {"p999", 999, 1000},
}

// Dist summarises one distribution. N counts the defined samples; every
// other field is Null when N is 0.
type Dist struct {
	N      int64
	Mean   Value
	Stddev Value
	Min    Value
	// P holds the values of Percentiles, in order.
	P   []Value
	Max Value
}

// Field returns the value of a distribution key ("n", "mean", "stddev",
// "min", "p50", …, "max").
func (d Dist) Field(key string) (Value, bool) {
	switch key {
	case "n":
		return Int(d.N), true
	case "mean":
		return d.Mean, true
	case "stddev":
		return d.Stddev, true
	case "min":
		return d.Min, true
	case "max":
		return d.Max, true
	}
	for i, p := range Percentiles {
		if p.Key == key {
			if i < len(d.P) {
				return d.P[i], true
			}
			return Null, true
		}
	}
	return Null, false
}

// DistKeys lists a distribution's keys in output order (JSON, CSV).
var DistKeys = schema.ClaimDistKeys

// CoreDistKeys are the keys of the contract's first version, the ones the
// text and markdown tables show.
var CoreDistKeys = []string{"n", "mean", "stddev", "min", "p50", "p90", "p95", "p99", "p999", "max"}

func emptyDist() Dist {
	return Dist{Mean: Null, Stddev: Null, Min: Null, Max: Null, P: make([]Value, len(Percentiles))}
}

// Counts accounts for every request of a point and repeat. Sent counts the
// measured requests with a record and equals
// OK+Error+Timeout+Cancelled+Rejected; NotSent counts the declared measured
// requests without one (an interrupted or killed run never sent them).
// Declared is their sum, the denominator of SLO attainment, so that work
// left out is a miss and never raises it.
type Counts struct {
	Sent, OK, Error, Timeout, Cancelled, Rejected int64
	// NotSent counts declared measured requests without a record.
	NotSent int64
	// Warmup counts the warmup records set aside.
	Warmup int64
	// OKNoContent counts ok requests without any content chunk: they have
	// no TTFT and never meet an SLO.
	OKNoContent int64
	// OneToken counts ok requests with output_tokens ≤ 1 (no TPOT).
	OneToken int64
	// Good counts requests meeting the SLO.
	Good int64
}

// Declared returns Sent + NotSent: every measured request the run
// declared.
func (c Counts) Declared() int64 { return c.Sent + c.NotSent }

// CountKeys lists the counts keys in output order.
var CountKeys = schema.ClaimCounts

// Field returns a count by key.
func (c Counts) Field(key string) (int64, bool) {
	switch key {
	case "sent":
		return c.Sent, true
	case "ok":
		return c.OK, true
	case "error":
		return c.Error, true
	case "timeout":
		return c.Timeout, true
	case "cancelled":
		return c.Cancelled, true
	case "rejected":
		return c.Rejected, true
	case "warmup":
		return c.Warmup, true
	case "ok_no_content":
		return c.OKNoContent, true
	case "one_token":
		return c.OneToken, true
	case "good":
		return c.Good, true
	case "not_sent":
		return c.NotSent, true
	}
	return 0, false
}

// Count returns the count called key (CountKeys), or Null when the run
// cannot determine it (NullReasons holds "counts.KEY": the source did not
// measure a field it reads, or no SLO defines counts.good).
func (p *PointResult) Count(key string) (Value, bool) {
	c, ok := p.Counts.Field(key)
	if !ok {
		return Null, false
	}
	if _, null := p.NullReasons["counts."+key]; null {
		return Null, true
	}
	return Int(c), true
}

// Stalls describes streaming stalls: chunk gaps above ThresholdNS.
type Stalls struct {
	ThresholdNS int64
	// Count is the number of gaps above the threshold; Requests the
	// number of ok requests with at least one; MaxGap the largest gap.
	Count, Requests int64
	MaxGapNS        Value
}

// Point-and-repeat scalar metric keys, in output order.
var ScalarKeys = schema.ClaimScalars

// DistNames lists the distribution keys of a result, in output order.
var DistNames = schema.ClaimDistNames

// PointResult holds the metrics of one load point and repeat.
type PointResult struct {
	Point  string
	Repeat int
	// PhasesOverlap lists, for a run merged from shards, the other
	// shards' phases that ran during this point's measured phase on the
	// merged timeline (PhasesOverlapFlag); empty when none did.
	PhasesOverlap []string
	// TwinOf is, for a repeat not shown independent of an earlier repeat
	// of its point (schema.RepeatTimings), that repeat; nil otherwise.
	// The summaries across repeats, compare and decide count the two as
	// one repeat.
	TwinOf *int
	Counts Counts
	// Scalars holds the values of ScalarKeys.
	Scalars map[string]Value
	// Dists holds the distributions of DistNames, plus any extra
	// distributions a peer definition defines (see Definition.ExtraDists).
	Dists  map[string]Dist
	Stalls Stalls
	// MLPerf is set when the MLPerf server check was asked for.
	MLPerf *MLPerfCheck
	// NullReasons maps a metric (a key of Scalars or Dists, or "stalls")
	// that is null because the records cannot determine it to the reason:
	// a record field the source did not measure (manifest.provenance).
	NullReasons map[string]string
	// WindowSource is set when the window is the tool's own stored window
	// rather than one measured from the records; it says which.
	WindowSource string
	// windowFromClaim is set when that stored window is derived from a
	// rate the tool claims: why claims on the point's rates are not
	// recomputable (gate.setWindowSource).
	windowFromClaim string
	// Server is the engine's own column (manifest.server_metrics); nil
	// when the run stored no scrapes.
	Server *ServerColumn
	// Energy is the accelerator energy over the window
	// (manifest.gpu_metrics); nil when the run stored no accelerator
	// scrapes.
	Energy *EnergyColumn
	// window is the measured window on the run's clock (first send, last
	// end) when it is the records' own; goodTokens the output tokens of
	// the requests the SLO judge passed (nil without an SLO): what the
	// energy column divides.
	window     *[2]int64
	goodTokens *big.Int
	// Cold is the point's warmup, reported apart from the measured
	// requests; nil when the point had no warmup records.
	Cold *ColdResult
	// Cache sums the cached prompt tokens the engine reported for the
	// point's ok requests, warmup and measured (schema.CacheTally), and
	// so measures its prefix-cache state (schema.CacheUse.MeasuredState);
	// nil when no answer reported them.
	Cache *schema.CacheUse
	// Sessions is the point's session column, by turn and by session, in
	// a run of multi-turn sessions; nil otherwise.
	Sessions *SessionResult
	// PrefixExpected sets, in a trace replay whose items state
	// cacheable_tokens, the tokens the trace's shared prefix blocks make
	// cacheable against those the server reported cached; nil otherwise
	// (or when the workload was not read).
	PrefixExpected *PrefixExpected
	// Overload says whether the point kept up with its load, and whether
	// the client kept its schedule (never nil in a replay result).
	Overload *Overload
	// Timeline bounds, for a run merged from shards, the metrics that
	// combine shards' clocks (the window and the rates over it); nil for
	// a run captured by one process.
	Timeline *Timeline
	// OutputTokens is the number of output tokens of the completed (ok,
	// with content) requests, the count output_token_throughput divides
	// by the window: a measured count, defined without a window (0 when
	// every request failed). Null only when the source did not measure
	// output_tokens, with OutputTokensNullReason. Not part of the replay
	// document; decide prints it.
	OutputTokens           Value
	OutputTokensNullReason string
}

// Lookup resolves a claim path inside a point result: a scalar key
// ("goodput"), "counts.KEY", "DIST.KEY" (e.g. "ttft_ns.p99"),
// "stalls.count", or "mlperf.KEY".
func (p *PointResult) Lookup(path string) (Value, bool) {
	if v, ok := p.Scalars[path]; ok {
		return v, true
	}
	head, tail, ok := strings.Cut(path, ".")
	if !ok {
		return Null, false
	}
	switch head {
	case "counts":
		v, ok := p.Count(tail)
		return v, ok
	case "stalls":
		switch tail {
		case "threshold_ns":
			return Int(p.Stalls.ThresholdNS), true
		case "count":
			return Int(p.Stalls.Count), true
		case "requests":
			return Int(p.Stalls.Requests), true
		case "max_gap_ns":
			return p.Stalls.MaxGapNS, true
		}
		return Null, false
	case "mlperf":
		if p.MLPerf == nil {
			return Null, false
		}
		return p.MLPerf.Field(tail)
	case "overload":
		if p.Overload == nil {
			return Null, false
		}
		return p.Overload.Field(tail)
	case "energy":
		v, _, ok := p.energyLookup(tail)
		return v, ok
	}
	if d, ok := p.Dists[head]; ok {
		return d.Field(tail)
	}
	return Null, false
}

// NullReason returns why a claim path of p is null although the records
// were replayed: a record field it needs was not measured by the source.
func (p *PointResult) NullReason(path string) (string, bool) {
	if r, ok := p.NullReasons[path]; ok {
		return r, true
	}
	head, tail, _ := strings.Cut(path, ".")
	if head == "overload" && p.Overload != nil {
		return p.Overload.NullReason(tail)
	}
	if head == "energy" {
		if v, why, ok := p.energyLookup(tail); ok && v.IsNull() {
			return why, true
		}
		return "", false
	}
	r, ok := p.NullReasons[head]
	return r, ok
}

// SLOSpec is the resolved objective of a replay. A nil limit is not set.
type SLOSpec struct {
	TTFTNS, E2ENS, TPOTNS *int64
	// OneToken is "pass" or "fail": the policy applied.
	OneToken string
	// OverriddenOneToken is the SLO's own policy when the definitions
	// applied their tool's rule in its place ("" otherwise).
	OverriddenOneToken string
	// Source says where the SLO came from: "manifest", "flag" or "none".
	Source string
	// NotApplied lists, when an SLO given to Replay replaced the
	// manifest's, the manifest limits it leaves out ("e2e=10s"): the
	// given SLO replaces the manifest's whole, it does not amend it.
	NotApplied []string
}

// Any reports whether any limit is set.
func (s SLOSpec) Any() bool { return s.TTFTNS != nil || s.E2ENS != nil || s.TPOTNS != nil }

// Limit returns the limit named key (one of schema.SLOKeys): nil when it
// is not set or key names no limit.
func (s SLOSpec) Limit(key string) *int64 {
	switch key {
	case schema.SLOTTFT:
		return s.TTFTNS
	case schema.SLOE2E:
		return s.E2ENS
	case schema.SLOTPOT:
		return s.TPOTNS
	}
	return nil
}

// SmoothParams are the required parameters of smooth goodput
// (arXiv 2410.14257 Eqs. 9–11): benefit(r) = n_r − Alpha·f(l_r), with
// deadlines d_i = C + V·i and f(l) = clamp(max(l,0)/L, 0, 1).
type SmoothParams struct {
	Alpha *big.Rat
	// VNS is the reader's time per token in ns.
	VNS int64
	// F names the penalty function; only "linear" is defined.
	F string
	// LNS is the idle latency at which f reaches 1 (the whole benefit
	// weight Alpha is lost).
	LNS int64
}

// Summary is the across-repeat summary of one metric of one point.
type Summary struct {
	Median, CILow, CIHigh Value
	// Confidence is the exact coverage of the interval.
	Confidence Value
	N          int
	Warnings   []string
}

// PointSummary holds the summaries of one point, keyed by claim path.
type PointSummary struct {
	Point   string
	Metrics map[string]Summary
	// Energy summarises the central values of the energy column's
	// EnergySummaryKeys across repeats (nil when the run stored no
	// accelerator scrapes).
	Energy map[string]Summary
}

// SummaryMetrics are the metric paths summarised across repeats.
var SummaryMetrics = schema.ClaimSummaryMetrics

// Result is a whole replay.
type Result struct {
	Schema      string
	Definitions string
	// DefinitionsVersion names the version of Definitions the result was
	// computed under (e.g. "benchseal/2026.12"; Versions lists them).
	DefinitionsVersion string
	// Boundary is where the run's timestamps were taken (manifest
	// client.boundary): client-streaming, server-timer or non-streaming.
	Boundary string
	// Plan is the digest of the pre-registered plan the run's manifest
	// names, "" when the run was not pre-registered. Whether the run
	// matches it is verify's check, not replay's.
	Plan string
	// Cost is the manifest's price per hour, or nil when it states none.
	Cost *CostSpec
	SLO  SLOSpec
	// Smooth is nil when smooth goodput was not asked for (then it is
	// reported as not computed: null).
	Smooth  *SmoothParams
	Results []*PointResult
	Summary []PointSummary
	// Sweep is set when an SLO sweep was asked for.
	Sweep *Sweep
	// Capacity is the DistServe-style capacity across the points of a
	// rate sweep.
	Capacity *Capacity
	// Aliases maps the tool's own metric names to result paths.
	Aliases map[string]string
	// Notes say what the definitions could not compute, and why.
	Notes []string
	// Incomplete is set when the run is marked incomplete (its capture
	// was interrupted); nil for a complete run.
	Incomplete *Incomplete
	// ClientBuild and ImporterBuild are the executables the manifest says
	// measured and imported the run (client.build, source.importer); nil
	// when it states none.
	ClientBuild, ImporterBuild *schema.Build
}

// Incomplete describes a run stopped before its plan finished.
type Incomplete struct {
	// Reason is the manifest's incomplete_reason.
	Reason string
	// Missing counts the declared measured requests that have no record;
	// they are counts.not_sent (never counted as sent) and misses in SLO
	// attainment, so work left out never raises goodput or SLO attainment.
	Missing int64
}

// Line says in one line that the run is incomplete and what that does to
// the numbers.
func (in *Incomplete) Line() string {
	s := "INCOMPLETE run"
	if in.Reason != "" {
		s += " (" + in.Reason + ")"
	}
	if in.Missing > 0 {
		return s + fmt.Sprintf(": %d declared measured request(s) have no record: counted as not sent, and as misses in SLO attainment", in.Missing)
	}
	// Nothing declared by count is missing; that is not a claim that
	// nothing is (a duration-bounded phase has no count to compare).
	return s + ": the numbers cover only the records present; no declared request count is short"
}

// Point returns the result of a point and repeat, or nil.
func (r *Result) Point(point string, repeat int) *PointResult {
	for _, p := range r.Results {
		if p.Point == point && p.Repeat == repeat {
			return p
		}
	}
	return nil
}
