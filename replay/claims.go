package replay

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/schema"
)

// ClaimChecker recomputes a run's claims under the definitions they name
// (it satisfies verify.ClaimChecker).
//
// Claim paths: a point-and-repeat path ("goodput", "counts.ok",
// "ttft_ns.p99", "stalls.count", "mlperf.valid"), resolved in the claim's
// repeat (repeat 0 when unset); or a summary path
// "summary.METRIC.FIELD" with METRIC one of SummaryMetrics and FIELD one
// of median, ci_low, ci_high, n (e.g. "summary.goodput.median").
type ClaimChecker struct {
	// Replayed, when set, is called with each replay the check made and
	// the options it ran under, so that a caller needing that same replay
	// (compare, after verify) takes it instead of reading the records
	// again (SameReplay says when it is the same).
	Replayed func(Options, *Result)
}

// CheckClaims replays run under its claims' definitions, definitions
// version and SLO and compares every claimed number. A run without claims
// gives no checks.
//
// Claims that name no version were made before versions were named, by a
// release whose rules were one of the kept versions current then
// (unversioned, in order): they are judged under the newest of those
// under which none mismatches (a claim resting on no changed definition
// then carries no older version's defect), else under the newest, and
// say so (VersionInferred). Under a peer's definitions that is its one
// kept version: a claim that differs there is mismatched. Claims naming a
// version whose rules are not kept are an error (no release wrote one).
//
// Claims under the current version take one pass over the records (the
// verifier's own); under an older version two (it and the current one),
// naming none up to three.
func (c ClaimChecker) CheckClaims(ctx context.Context, run schema.Run) ([]schema.ClaimCheck, error) {
	return checkRunClaims(ctx, run, nil, c.replay)
}

// CheckClaimsAndFlags is CheckClaims that also returns every flagged
// point × repeat of the replay, claimed or not (it satisfies
// verify.FlagChecker); a run without claims is replayed under its own
// definitions for the flags alone.
func (c ClaimChecker) CheckClaimsAndFlags(ctx context.Context, run schema.Run) ([]schema.ClaimCheck, []schema.PointFlags, error) {
	var flags []schema.PointFlags
	checks, err := checkRunClaims(ctx, run, &flags, c.replay)
	return checks, flags, err
}

// Flagged lists the point × repeat results that carry a flag, in run
// order.
func (r *Result) Flagged() []schema.PointFlags {
	var out []schema.PointFlags
	for _, p := range r.Results {
		pf := schema.PointFlags{Point: p.Point, Repeat: p.Repeat, Flags: r.pointFlags(schema.PointClaim{Point: p.Point, Repeat: &p.Repeat})}
		if len(pf.Flags) == 0 {
			continue
		}
		for _, f := range pf.Flags {
			pf.Why = append(pf.Why, p.flagWhy(f))
		}
		out = append(out, pf)
	}
	return out
}

// flagWhy is what set a flag of the point result.
func (p *PointResult) flagWhy(flag string) string {
	switch {
	case flag == PhasesOverlapFlag:
		return "measured requests overlap the warmup or another phase"
	case p.Overload == nil:
		return ""
	case flag == "overloaded":
		return p.Overload.Overloaded.Why
	case flag == "generator-limited":
		return p.Overload.GeneratorLimited.Why
	}
	return ""
}

// replay is Replay, handing the result to c.Replayed.
func (c ClaimChecker) replay(ctx context.Context, run schema.Run, opts Options) (*Result, error) {
	res, err := Replay(ctx, run, opts)
	if err == nil && c.Replayed != nil {
		c.Replayed(opts, res)
	}
	return res, err
}

// replayFunc is how the claims check replays a run (ClaimChecker.replay).
type replayFunc func(context.Context, schema.Run, Options) (*Result, error)

// checkRunClaims is CheckClaims; with flags non-nil it also sets *flags to
// the replay's flagged points, replaying a run without claims for them.
func checkRunClaims(ctx context.Context, run schema.Run, flags *[]schema.PointFlags, replay replayFunc) ([]schema.ClaimCheck, error) {
	cl := run.Claims()
	if cl == nil {
		if flags != nil {
			r, err := replay(ctx, run, Options{})
			if err != nil {
				return nil, err
			}
			*flags = r.Flagged()
		}
		return nil, nil
	}
	if cl.DefinitionsVersion != "" {
		if err := unwritten(cl); err != nil {
			return nil, err
		}
		return checkClaimsUnder(ctx, run, cl, cl.DefinitionsVersion, flags, replay)
	}
	vs := unversioned(cl.Definitions)
	var newest []schema.ClaimCheck
	for i := len(vs) - 1; i >= 0; i-- {
		out, err := checkClaimsUnder(ctx, run, cl, vs[i], flags, replay)
		if err != nil {
			return nil, err
		}
		for j := range out {
			out[j].VersionInferred = true
		}
		if !slices.ContainsFunc(out, func(c schema.ClaimCheck) bool { return c.Outcome == schema.ClaimMismatched }) {
			return out, nil
		}
		if newest == nil {
			newest = out
		}
	}
	if newest == nil {
		// Unknown definitions: checkClaimsUnder says so per claim.
		return checkClaimsUnder(ctx, run, cl, "", flags, replay)
	}
	return newest, nil
}

// checkRecomputed checks claim c of point pc against the value the
// records give.
func checkRecomputed(ck *schema.ClaimCheck, res *Result, pc schema.PointClaim, c schema.Claim, tol float64) {
	v, reason := resolveClaim(res, pc, c.Metric)
	switch {
	case c.NotRecomputable != "" && reason != "":
		// A claim cannot exempt itself: where the records determine the
		// value, it is checked like any other.
		ck.Outcome, ck.Reason = schema.ClaimNotRecomputable, "claim marked not recomputable: "+c.NotRecomputable+"; replay: "+reason
	case c.NotRecomputable != "":
		compareClaim(ck, v, c.Value, tol)
		ck.Reason = JoinReasons(ck.Reason, fmt.Sprintf("marked not recomputable (%q) but the records recompute it", c.NotRecomputable))
	case reason == reasonSummaryUndefined || strings.HasPrefix(reason, reasonUndefined):
		// The records were replayed and the value they give is
		// undefined: a number claimed for it is not borne out by the
		// evidence.
		ck.Outcome, ck.Reason = schema.ClaimMismatched, fmt.Sprintf("claimed %s, recomputed undefined: %s", digits.Shortest(c.Value), reason)
	case reason != "":
		ck.Outcome, ck.Reason = schema.ClaimNotRecomputable, reason
	default:
		compareClaim(ck, v, c.Value, tol)
	}
}

// checkClaimsUnder checks cl's claims under the named version; with flags
// non-nil it sets *flags to that replay's flagged points (the overload
// test is the same under every version).
func checkClaimsUnder(ctx context.Context, run schema.Run, cl *schema.Claims, version string, flags *[]schema.PointFlags, replay replayFunc) ([]schema.ClaimCheck, error) {
	opts := Options{Definitions: cl.Definitions}
	if cl.SLO != nil {
		s := SLOFromManifest(*cl.SLO)
		s.Source = "claims"
		opts.SLO = &s
	}
	sloNote := ""
	if cl.SLO != nil && *cl.SLO != run.Manifest().SLO {
		sloNote = fmt.Sprintf("claims use their own SLO (%s), not the one the manifest declared before the run (%s)",
			sloString(*cl.SLO), sloString(run.Manifest().SLO))
	}
	defName := cl.Definitions
	if defName == "" {
		defName = "benchseal"
	}
	var res *Result
	var cv *claimVersion
	var defErr error
	policyWhy := ""
	if d, err := lookupDefinition(cl.Definitions); err != nil {
		defErr = err
	} else if cv, err = claimsVersion(d.Name(), version); err != nil {
		defErr = err
	} else {
		stated := SLOFromManifest(run.Manifest().SLO)
		if opts.SLO != nil {
			stated = *opts.SLO
		}
		policyWhy = oneTokenRefusal(d, stated)
		if res, err = cv.replay(ctx, run, opts, replay); err != nil {
			return nil, err
		}
		if flags != nil {
			*flags = res.Flagged()
		}
	}
	var out []schema.ClaimCheck
	for _, pc := range cl.Points {
		for _, c := range pc.Metrics {
			ck := schema.ClaimCheck{Point: pc.Point, Repeat: pc.Repeat, Metric: c.Metric, Definitions: defName, Claimed: c.Value, Tolerance: cl.Tolerance, SLONote: sloNote}
			if cv != nil {
				ck.DefinitionsVersion, ck.KnownDefect = cv.under.Name, cv.under.Defect
			}
			switch {
			case defErr != nil:
				ck.Outcome, ck.Reason = schema.ClaimNotRecomputable, defErr.Error()
			case schema.CheckClaimMetric(cl.Definitions, c.Metric) != nil:
				// A claim on a metric nobody recomputes could say anything.
				ck.Outcome, ck.Reason = schema.ClaimMismatched, "unknown metric: "+schema.CheckClaimMetric(cl.Definitions, c.Metric).Error()
			case policyWhy != "" && claimUsesSLO(c.Metric):
				ck.Outcome, ck.Reason = schema.ClaimNotRecomputable, policyWhy
			case res.windowFromClaim(pc, c.Metric) != "":
				ck.Outcome, ck.Reason = schema.ClaimNotRecomputable, res.windowFromClaim(pc, c.Metric)
			default:
				checkRecomputed(&ck, res, pc, c, cl.Tolerance)
			}
			if res != nil {
				ck.Flags = res.pointFlags(pc)
				cv.compare(&ck, pc)
			}
			if n := placedShards(run.Manifest()); n > 1 && ck.Outcome == schema.ClaimMatched {
				// The records agree with the claim only given the
				// shards' own word on their clocks.
				switch {
				case schema.ClaimRestsOnShardPlacement(c.Metric):
					ck.Outcome = schema.ClaimNotRecomputable
					ck.Reason = JoinReasons(ck.Reason, shardPlacementReason(n))
				case schema.ClaimRestsOnShardOverlap(c.Metric):
					ck.Outcome = schema.ClaimNotRecomputable
					ck.Reason = JoinReasons(ck.Reason, shardOverlapReason(n))
				}
			}
			out = append(out, ck)
		}
	}
	return out, nil
}

// pointFlags names the flags of a claim's point: of its repeat, or of any
// repeat for a claim without one (summaries span every repeat).
func (r *Result) pointFlags(pc schema.PointClaim) []string {
	var out []string
	for _, p := range r.Results {
		if p.Point != pc.Point || (pc.Repeat != nil && p.Repeat != *pc.Repeat) {
			continue
		}
		flags := slices.Clone(p.Overload.Flags())
		if len(p.PhasesOverlap) > 0 {
			flags = append(flags, PhasesOverlapFlag)
		}
		for _, f := range flags {
			if !slices.Contains(out, f) {
				out = append(out, f)
			}
		}
	}
	return out
}

// compareClaim sets the outcome of a claim whose value the records
// determine: matched within tolerance, else mismatched.
func compareClaim(ck *schema.ClaimCheck, v Value, claimed, tolerance float64) {
	f, _ := v.Float64()
	rel := RelError(f, claimed)
	ck.Recomputed, ck.RelError = &f, &rel
	if rel <= tolerance {
		ck.Outcome = schema.ClaimMatched
	} else {
		ck.Outcome = schema.ClaimMismatched
		ck.Reason = fmt.Sprintf("claimed %s, recomputed %s", digits.Shortest(claimed), digits.Shortest(f))
	}
}

// RelError is |recomputed − claimed| / |claimed|, or |recomputed| when the
// claim is 0.
func RelError(recomputed, claimed float64) float64 {
	d := math.Abs(recomputed - claimed)
	if claimed == 0 {
		return d
	}
	return d / math.Abs(claimed)
}

// Reasons Resolve gives when a claim path resolves to an undefined value.
const (
	reasonSummaryUndefined = "undefined value (too few repeats or no samples)"
	reasonUndefined        = "undefined value (no samples, no window or no SLO)"
)

// Resolve returns the value of a claim path for a point (and repeat) of a
// result; reason says why there is none.
func (r *Result) Resolve(point string, repeat int, path string) (v Value, reason string) {
	if rest, ok := strings.CutPrefix(path, "summary."); ok {
		i := strings.LastIndex(rest, ".")
		if i < 0 {
			return Null, "summary path must be summary.METRIC.FIELD"
		}
		metric, field := rest[:i], rest[i+1:]
		for _, ps := range r.Summary {
			if ps.Point != point {
				continue
			}
			s, ok := ps.Metrics[metric]
			if !ok {
				return Null, fmt.Sprintf("metric %q is not summarised across repeats", metric)
			}
			switch field {
			case "median":
				v = s.Median
			case "ci_low":
				v = s.CILow
			case "ci_high":
				v = s.CIHigh
			case "n":
				v = Int(int64(s.N))
			default:
				return Null, fmt.Sprintf("unknown summary field %q", field)
			}
			if v.IsNull() {
				for _, p := range r.Results {
					if why, ok := p.NullReason(metric); ok && p.Point == point && !undefinedByRecords(why) {
						return Null, "the records cannot determine it: " + why
					}
				}
				return Null, reasonSummaryUndefined
			}
			return v, ""
		}
		return Null, fmt.Sprintf("no records for point %q", point)
	}
	p := r.Point(point, repeat)
	if p == nil {
		return Null, fmt.Sprintf("no records for point %q repeat %d", point, repeat)
	}
	v, ok := p.Lookup(path)
	if !ok {
		return Null, fmt.Sprintf("metric %q is not computed under %s definitions", path, r.Definitions)
	}
	if why, ok := p.NullReason(path); ok {
		if undefinedByRecords(why) {
			// The records do determine it: undefined.
			return Null, reasonUndefined + ": " + why
		}
		return Null, "the records cannot determine it: " + why
	}
	if v.IsNull() {
		switch {
		case schema.MetricNeedsSLO(path) && !r.SLO.Any():
			return Null, "undefined value: no SLO set, so the objective the claim was made under is unknown"
		case path == schema.MetricSmoothGoodput:
			return Null, schema.MetricSmoothGoodput + " depends on parameters the claims do not state"
		}
		return Null, reasonUndefined
	}
	return v, ""
}

// undefinedByRecords reports whether a null reason says the value is
// undefined given the records (nothing sent, a zero window) rather than
// that they cannot determine it: a number claimed for it is mismatched,
// not unverifiable.
func undefinedByRecords(why string) bool {
	for _, c := range reasonClauses(why) {
		if c != ReasonNothingSent && c != ReasonZeroWindow && c != ReasonNoOKToken {
			return false
		}
	}
	return why != ""
}

// resolveClaim resolves a claim's value. A claim without a repeat is the
// point's: on a point of one repeat that repeat's value, on a point of
// several its summary across them (summary.METRIC.median), never one
// repeat's alone, which would let the best repeat stand for the point
// (and a plan check count it for every repeat).
func resolveClaim(r *Result, pc schema.PointClaim, path string) (Value, string) {
	if pc.Repeat != nil {
		return r.Resolve(pc.Point, *pc.Repeat, path)
	}
	if n := r.repeatsOf(pc.Point); n > 1 && !strings.HasPrefix(path, "summary.") {
		if !slices.Contains(SummaryMetrics, path) {
			return Null, fmt.Sprintf("a claim without a repeat is the point's summary across its %d repeats, and %s is not summarised across repeats (claim it per repeat)", n, path)
		}
		return r.Resolve(pc.Point, 0, "summary."+path+".median")
	}
	return r.Resolve(pc.Point, 0, path)
}

// repeatsOf counts the repeats of point in the results.
func (r *Result) repeatsOf(point string) int {
	n := 0
	for _, p := range r.Results {
		if p.Point == point {
			n++
		}
	}
	return n
}

// sloString writes an SLO as the --slo flag takes it.
func sloString(s schema.SLO) string {
	var parts []string
	for _, k := range schema.SLOKeys {
		if d := s.Limit(k); d > 0 {
			parts = append(parts, k+"="+d.String())
		}
	}
	if s.OneToken != "" {
		parts = append(parts, schema.SLOOneToken+"="+s.OneToken)
	}
	if len(parts) == 0 {
		return "none"
	}
	return strings.Join(parts, ",")
}

// placedShards is the number of shards whose records a merged run places
// on one timeline (0 for a run not merged from shards).
func placedShards(m *schema.Manifest) int {
	if m == nil || m.Shards == nil {
		return 0
	}
	n := 0
	for _, mb := range m.Shards.Members {
		if !mb.Missing {
			n++
		}
	}
	return n
}

// shardPlacementReason says why a claim resting on the placement of n
// shards' timelines is not verified even when the records agree with it.
func shardPlacementReason(n int) string {
	return fmt.Sprintf("recomputed value agrees, but it rests on the relative placement of %d shards' timelines, "+
		"placed by clocks (epochs and error bounds) declared by the shards themselves (unverified)", n)
}

// shardOverlapReason says why a claim describing the load n shards
// offered together is not verified even when the records agree with it.
func shardOverlapReason(n int) string {
	return fmt.Sprintf("recomputed value agrees, but it describes the point's load summed over %d shards, which holds only if they ran at once: "+
		"only the clocks (epochs and error bounds) the shards declare themselves place them (unverified; shards measured one after the other give the latencies of one shard's share)", n)
}

// oneTokenRefusal says why a claim under slo that depends on it cannot be
// computed under definitions d ("" when it can): the SLO has a TPOT limit
// and states (or, unstated, implies) a one-token policy other than the
// one d applies whatever the SLO says. Replaying would give the number
// under the tool's policy, not the claim's.
func oneTokenRefusal(d Definition, slo SLOSpec) string {
	pol, rule := d.OneToken()
	stated := cmp.Or(slo.OneToken, schema.OneTokenPass)
	if pol == "" || slo.TPOTNS == nil || stated == pol {
		return ""
	}
	return fmt.Sprintf("not computable under %s definitions: the claims' SLO has a TPOT limit and one_token %s, but %s (one_token %s, whatever the SLO states)",
		d.Name(), stated, rule, pol)
}

// claimUsesSLO reports whether a claim path's value depends on the SLO
// (goodput, attainment, good counts and costs, or their summaries).
func claimUsesSLO(path string) bool {
	return slices.Contains(sloMetrics, claimBase(path))
}

// claimBase is the metric of a claim path: path itself, or METRIC of a
// summary path summary.METRIC.FIELD.
func claimBase(path string) string {
	if rest, ok := strings.CutPrefix(path, "summary."); ok {
		if i := strings.LastIndex(rest, "."); i >= 0 {
			return rest[:i]
		}
	}
	return path
}

// windowFromClaim says why a claim on a rate of pc's point is not
// recomputable when a repeat it covers has a stored window derived from a
// claimed rate (gate.setWindowSource); "" otherwise.
func (r *Result) windowFromClaim(pc schema.PointClaim, metric string) string {
	if r == nil || !slices.Contains(windowRates, claimBase(metric)) {
		return ""
	}
	for _, p := range r.Results {
		if p.Point == pc.Point && (pc.Repeat == nil || p.Repeat == *pc.Repeat) && p.windowFromClaim != "" {
			return p.windowFromClaim
		}
	}
	return ""
}
