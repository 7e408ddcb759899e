package reproduce

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/compare"
	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/reproduce/rerun"
	"github.com/benchseal/benchseal/reproduce/verdict"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/stats"
	"github.com/benchseal/benchseal/verify"
)

// Defaults of Options.
const (
	// DefaultMargin is the equivalence margin: the ratio's interval must
	// lie within ±10 %.
	DefaultMargin = 0.10
	// DefaultAlpha is the test's level: each one-sided half of the
	// equivalence test at 5 %, so the interval has at least 90 %
	// confidence.
	DefaultAlpha = 0.05
)

// Conditions of Evaluate's errors, for errors.Is.
var (
	// ErrNotVerified: the original did not verify; nothing is reproduced
	// from a rejected bundle.
	ErrNotVerified = errors.New("the original bundle did not verify")
	// ErrNoClaims: the original makes no claims, so there is nothing to
	// reproduce.
	ErrNoClaims = errors.New("the original bundle makes no claims")
	// ErrNotAReproduction: the run directory is invalid or names another
	// original (manifest reproduces.run_manifest).
	ErrNotAReproduction = errors.New("not a reproduction of this bundle")
	// ErrBadOption: a margin or alpha out of range.
	ErrBadOption = errors.New("invalid reproduce option")
)

// Options configure Evaluate.
type Options struct {
	// Margin is the relative equivalence margin in (0, 1); 0 means
	// DefaultMargin.
	Margin float64
	// Alpha is the level of the equivalence test in (0, 0.5); 0 means
	// DefaultAlpha.
	Alpha float64
	// Notes are carried into the report (BuildTest's Test.Notes).
	Notes []string
}

// Original is a verified original bundle: how the user named it, the
// opened bundle (an *artifact.Bundle) and its verification, which must
// have verified.
type Original struct {
	Name         string
	Bundle       schema.Run
	Verification *verify.Result
}

// Evaluate decides, per claimed metric and point of the original, whether
// the reproduction run in reproDir reproduces it, without capturing
// anything: the attestation of a reproduction recomputes its verdicts
// with it. reproDir must be a valid run directory whose manifest names the
// original's run-manifest digest (reproduces.run_manifest). Both sides
// are replayed under the claims' definitions, version and SLO (the
// original manifest's when the claims state none); the per-repeat values
// of every claimed metric are then tested for equivalence
// (stats.EquivalenceRatio: the Hodges–Lehmann ratio reproduction/original
// and its distribution-free interval inside ±Margin), counts and flags
// exactly.
func Evaluate(ctx context.Context, orig Original, reproDir string, opts Options) (*Report, error) {
	if err := opts.normalize(); err != nil {
		return nil, err
	}
	vr := orig.Verification
	if vr == nil || !vr.Verified || orig.Bundle == nil {
		return nil, errcond.Errorf(ErrNotVerified, "%s: the original bundle did not verify", orig.Name)
	}
	cl := orig.Bundle.Claims()
	if cl == nil || len(cl.Points) == 0 {
		return nil, errcond.Errorf(ErrNoClaims, "%s: the original bundle makes no claims: nothing to reproduce", orig.Name)
	}
	rd, digest, err := openReproduction(ctx, reproDir, vr.ManifestDigest)
	if err != nil {
		return nil, err
	}
	if err := rerun.CheckAnotherRun(orig.Bundle, rd); err != nil {
		hint := ""
		if errors.Is(err, rerun.ErrRepeatsTimings) && rd.Manifest().Evidence == schema.EvidenceSynthetic {
			// benchseal's simulator draws every time from its seeds: one
			// started afresh with the original server's seeds answers the
			// same requests with the same times.
			hint = " (the reproduction ran against benchseal's simulator: started afresh with the original server's flags, it times every answer as it did; give it --step-jitter and a --jitter-seed of its own)"
		}
		return nil, errcond.Errorf(ErrNotAReproduction, "%s: not a reproduction of this bundle: %w%s", reproDir, err, hint)
	}
	if err := checkRanTest(sourceOf(orig), rd); err != nil {
		return nil, errcond.Errorf(ErrNotAReproduction, "%s: not a reproduction of this bundle: %w", reproDir, err)
	}
	if err := checkScrapedModel(orig.Bundle.Manifest(), rd); err != nil {
		return nil, errcond.Errorf(ErrNotAReproduction, "%s: not a reproduction of this bundle: %w", reproDir, err)
	}
	if err := checkForcedLength(rd); err != nil {
		return nil, errcond.Errorf(ErrNotAReproduction, "%s: not a reproduction of this bundle: %w", reproDir, err)
	}
	om := orig.Bundle.Manifest()
	ropts := replay.Options{Definitions: cl.Definitions, Version: cl.DefinitionsVersion}
	slo := replay.SLOFromManifest(om.SLO)
	if cl.SLO != nil {
		slo = replay.SLOFromManifest(*cl.SLO)
		slo.Source = "claims"
	}
	ropts.SLO = &slo
	or, err := replay.Replay(ctx, orig.Bundle, ropts)
	if err != nil {
		return nil, fmt.Errorf("replay %s: %w", orig.Name, err)
	}
	rr, err := replay.Replay(ctx, rd, ropts)
	if err != nil {
		return nil, fmt.Errorf("replay %s: %w", reproDir, err)
	}
	rep := &Report{Schema: SchemaV1, ReproductionDir: reproDir, ReproductionManifestDigest: digest,
		Margin: opts.Margin, Alpha: opts.Alpha, Definitions: or.Definitions, DefinitionsVersion: or.DefinitionsVersion,
		Boundary: om.Client.Boundary, Repeats: verdict.RepeatCounts{Original: om.Load.Repeats, Reproduction: rd.Manifest().Load.Repeats},
		Original: originalRef(orig), Notes: slices.Clone(opts.Notes), Limits: []string{}}
	for _, g := range groupClaims(cl) {
		cv, err := decide(g, or, rr, opts)
		if err != nil {
			return nil, err
		}
		rep.Claims = append(rep.Claims, cv)
	}
	g := compare.RunGuard([]*compare.Input{
		{Name: orig.Name, Manifest: om, Result: or},
		{Name: reproDir, Manifest: rd.Manifest(), Result: rr, WorkloadNotShipped: rd.Manifest().Workload.SHA256 != "" && rd.WorkloadPath == ""},
	}, compare.GuardOptions{})
	rep.Limits = limits(orig.Name, om, reproDir, rd.Manifest(), g)
	rep.Overall, rep.Counts, rep.Withheld = verdict.Overall(rep.Claims, setupWithheld(om, rd.Manifest(), g))
	return rep, nil
}

func (o *Options) normalize() error {
	if o.Margin == 0 {
		o.Margin = DefaultMargin
	}
	if o.Alpha == 0 {
		o.Alpha = DefaultAlpha
	}
	if !(o.Margin > 0 && o.Margin < 1) {
		return errcond.Errorf(ErrBadOption, "invalid reproduce option: margin %s: want a fraction in (0, 1), e.g. 0.1 for ±10 %%", digits.Shortest(o.Margin))
	}
	if !(o.Alpha > 0 && o.Alpha < 0.5) {
		return errcond.Errorf(ErrBadOption, "invalid reproduce option: alpha %s: want 0 < alpha < 0.5", digits.Shortest(o.Alpha))
	}
	return nil
}

// openReproduction validates the reproduction run directory, checks that
// it names the original and returns it with the digest of its
// manifest.json.
func openReproduction(ctx context.Context, dir, original string) (*schema.RunDir, string, error) {
	// A directory that cannot be read is an error of its own, not a run
	// shown to be no reproduction.
	if _, err := os.Stat(dir); err != nil {
		return nil, "", fmt.Errorf("reproduction: %w", err)
	}
	if _, err := artifact.ValidatePackable(ctx, dir, 20); err != nil {
		return nil, "", errcond.Errorf(ErrNotAReproduction, "%s: not a reproduction of this bundle: the run directory is not valid: %w", dir, err)
	}
	rd, err := schema.OpenRunDir(dir)
	if err != nil {
		return nil, "", err
	}
	m := rd.Manifest()
	switch r := m.Reproduces; {
	case m.Incomplete:
		return nil, "", errcond.Errorf(ErrNotAReproduction, "%s: not a reproduction of this bundle: the run is INCOMPLETE (%s): an interrupted run is not a re-run of the test; run benchseal reproduce again", filepath.Join(dir, schema.ManifestFile), cmpOr(m.IncompleteReason, "no reason stated"))
	case r == nil:
		return nil, "", errcond.Errorf(ErrNotAReproduction, "%s: not a reproduction of this bundle: its manifest names no original (reproduces.run_manifest)", filepath.Join(dir, schema.ManifestFile))
	case r.RunManifest != original:
		return nil, "", errcond.Errorf(ErrNotAReproduction, "%s: not a reproduction of this bundle: reproduces.run_manifest is %s, the bundle's run manifest is %s", filepath.Join(dir, schema.ManifestFile), r.RunManifest, original)
	}
	b, err := os.ReadFile(filepath.Join(dir, schema.ManifestFile))
	if err != nil {
		return nil, "", err
	}
	s := sha256.Sum256(b)
	return rd, "sha256:" + hex.EncodeToString(s[:]), nil
}

// originalRef names the original as its verification does.
func originalRef(orig Original) verdict.OriginalRef {
	vr := orig.Verification
	ref := verdict.OriginalRef{Bundle: orig.Name, RunManifest: vr.ManifestDigest, RunID: vr.RunID, Authenticated: vr.Authenticated}
	for _, s := range vr.Signatures {
		if s.Verified {
			who := s.Key
			if s.Identity != "" {
				who = s.Identity + " (" + s.Issuer + ")"
			}
			ref.SignedBy = append(ref.SignedBy, who)
		}
	}
	return ref
}

// claimGroup is one claimed metric at one point: the claims of its
// repeats and of the point (its summary) together.
type claimGroup struct {
	point, metric string
	paths         []string
	perRepeat     []float64
	point1        *float64 // the point's own claim (summary median or repeat-less)
}

// groupClaims groups the claims by point and per-repeat metric, in
// claims order.
func groupClaims(cl *schema.Claims) []*claimGroup {
	var out []*claimGroup
	idx := map[[2]string]*claimGroup{}
	for _, pc := range cl.Points {
		for _, c := range pc.Metrics {
			metric, pointClaim := schema.ClaimedMetric(c.Metric)
			k := [2]string{pc.Point, metric}
			g := idx[k]
			if g == nil {
				g = &claimGroup{point: pc.Point, metric: metric}
				idx[k] = g
				out = append(out, g)
			}
			if !slices.Contains(g.paths, c.Metric) {
				g.paths = append(g.paths, c.Metric)
			}
			v := c.Value
			switch {
			case pc.Repeat == nil || pointClaim:
				if g.point1 == nil || strings.HasSuffix(c.Metric, ".median") {
					g.point1 = &v
				}
			default:
				g.perRepeat = append(g.perRepeat, v)
			}
		}
	}
	return out
}

// repeatValues returns the per-repeat values of metric at point (repeats
// not shown independent of another counted once; null ones left out) and
// the first reason a repeat had none.
func repeatValues(r *replay.Result, point, metric string) ([]float64, string) {
	var out []float64
	why := ""
	found := false
	for _, p := range replay.Independent(r.Results) {
		if p.Point != point {
			continue
		}
		found = true
		v, reason := r.Resolve(point, p.Repeat, metric)
		f, ok := v.Float64()
		if reason != "" || !ok {
			if why == "" {
				why = fmt.Sprintf("repeat %d: %s", p.Repeat, cmpOr(reason, "not a number"))
			}
			continue
		}
		out = append(out, f)
	}
	if !found {
		why = fmt.Sprintf("no records for point %q", point)
	}
	return out, why
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// decide gives the verdict of one claim group.
func decide(g *claimGroup, or, rr *replay.Result, opts Options) (ClaimVerdict, error) {
	cv := ClaimVerdict{Point: g.point, Metric: g.metric, Paths: g.paths, Kind: verdict.KindRatio, Verdict: Inconclusive}
	cv.Claimed, cv.ClaimedPerRepeat = g.point1, g.perRepeat
	var whyO, whyR string
	cv.Original, whyO = repeatValues(or, g.point, g.metric)
	cv.Reproduced, whyR = repeatValues(rr, g.point, g.metric)
	cv.OriginalMedian, cv.ReproducedMedian = medianPtr(cv.Original), medianPtr(cv.Reproduced)
	switch {
	case len(cv.Original) == 0:
		cv.Reason = "the original's records do not determine it: " + whyO
		return cv, nil
	case len(cv.Reproduced) == 0:
		cv.Reason = "the reproduction's records do not determine it: " + whyR
		return cv, nil
	}
	if schema.ExactMetric(g.metric) {
		cv.Kind = verdict.KindExact
		cv.Verdict, cv.Reason = decideExact(cv.Original, cv.Reproduced)
		return cv, nil
	}
	if allZero(cv.Original) && allZero(cv.Reproduced) {
		cv.Verdict, cv.Reason = Reproduced, "0 in every repeat of both"
		return cv, nil
	}
	e, err := stats.EquivalenceRatio(cv.Original, cv.Reproduced, opts.Margin, opts.Alpha)
	if err != nil {
		cv.Reason = err.Error()
		return cv, nil
	}
	cv.Verdict, cv.Reason = verdict.Of(e.Verdict), e.Reason
	if cv.Verdict == Inconclusive && e.RepeatsNeeded > 0 {
		cv.RepeatsNeeded, cv.Reason, err = reproductionRepeats(cv.Original, cv.Reproduced, e.Reason, opts)
		if err != nil {
			return cv, err
		}
	}
	if e.Ratio > 0 {
		cv.Ratio = &e.Ratio
	}
	if e.Lo > 0 && e.Hi > 0 {
		cv.Lo, cv.Hi, cv.Confidence = &e.Lo, &e.Hi, &e.Confidence
	}
	return cv, nil
}

// reproductionRepeats is the advice of an inconclusive ratio: the
// reproduction repeats needed with the original's repeats as they are
// (stats.ReproductionRepeatsNeeded; the reviewer cannot add any to the
// original), or 0 and a reason saying that only the publisher's repeats
// can decide. reason is EquivalenceRatio's, whose advice is per side.
func reproductionRepeats(o, r []float64, reason string, opts Options) (int, string, error) {
	if i := strings.Index(reason, "even "); i >= 0 {
		reason = strings.TrimSuffix(reason[:i], "; ")
	}
	need, err := stats.ReproductionRepeatsNeeded(o, r, opts.Margin, opts.Alpha)
	if err != nil {
		return 0, reason, err
	}
	switch {
	case !need.Interval:
		return 0, joinReason(reason, fmt.Sprintf("the original's %d repeats cannot give a %s %% interval with any number of reproduction repeats up to %d: the publisher must provide more repeats", len(o), digits.Shortest(100*(1-2*opts.Alpha)), stats.ExactLimit)), nil
	case need.Needed > stats.ExactLimit:
		return need.Needed, joinReason(reason, fmt.Sprintf("with the original's %d repeats, even %d reproduction repeats would not decide at the observed spread: the publisher must provide more repeats", len(o), stats.ExactLimit)), nil
	}
	return need.Needed, reason, nil
}

func joinReason(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// decideExact compares counts or flags: reproduced when every repeat of
// the reproduction took a value within the original repeats' range (a
// constant original: that very value), not reproduced when no repeat did,
// else inconclusive.
func decideExact(o, r []float64) (Verdict, string) {
	olo, ohi := slices.Min(o), slices.Max(o)
	rlo, rhi := slices.Min(r), slices.Max(r)
	switch {
	case rlo >= olo && rhi <= ohi:
		return Reproduced, ""
	case rhi < olo || rlo > ohi:
		return NotReproduced, fmt.Sprintf("the original's repeats gave %s, the reproduction's %s", span(olo, ohi), span(rlo, rhi))
	}
	return Inconclusive, fmt.Sprintf("some of the reproduction's repeats fall outside the original's: the original's gave %s, the reproduction's %s", span(olo, ohi), span(rlo, rhi))
}

func span(lo, hi float64) string {
	if lo == hi {
		return digits.Shortest(lo)
	}
	return digits.Shortest(lo) + ".." + digits.Shortest(hi)
}

func allZero(v []float64) bool {
	return !slices.ContainsFunc(v, func(x float64) bool { return x != 0 })
}

func median(v []float64) float64 {
	if len(v) == 0 {
		return 0
	}
	s := slices.Clone(v)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

func medianPtr(v []float64) *float64 {
	if len(v) == 0 {
		return nil
	}
	m := median(v)
	return &m
}

// limits states what differs between the original and the reproduction
// (compare's comparability guard g over the two), so that no verdict
// hides another machine, engine, place or model revision.
func limits(origName string, om *schema.Manifest, reproName string, rm *schema.Manifest, g *compare.Guard) []string {
	out := []string{}
	if l := transportLimit(origName, om, reproName, rm); l != "" {
		out = append(out, l)
	}
	for _, c := range g.Checks {
		if c.Status == compare.Pass {
			continue
		}
		out = append(out, fmt.Sprintf("%s %s: %s", c.Name, strings.ToLower(c.Status), c.Detail))
	}
	return out
}

// setupWithheld says what makes the reproduction not one of the
// original's claims whatever its numbers (verdict.Overall withholds
// REPRODUCED for each): another model or model revision (the claims are
// of the original's model), another prefix-cache state at its points
// (llama.cpp's host prompt cache survives a slot erase, so a reproduction
// against the server that served the original finds its prompts cached:
// internal/enginetest's reproduce), simulated against measured evidence (a
// simulator reproduces its own numbers, not an engine's, and the
// reverse), fewer repeats than the original's (a reproduction runs
// at least the original's test), and no server scrapes where the original
// has them (lessEvidenced), and a server that had served requests before
// and kept its cache where the original's was fresh (warmServer). Hardware, engine and client location
// may differ: that is what a reproduction elsewhere is, and limits states
// them.
func setupWithheld(om, rm *schema.Manifest, g *compare.Guard) []string {
	var out []string
	for _, name := range []string{compare.CheckModel, compare.CheckRevision} {
		if c := g.Check(name); c != nil && c.Status == compare.Differs {
			out = append(out, fmt.Sprintf("%s differs (%s): a reproduction on another model is not one of the original's claims", name, c.Detail))
		}
	}
	if c := g.Check(compare.CheckPrefixCache); c != nil && c.Status == compare.Differs {
		out = append(out, fmt.Sprintf("%s differs (%s): a server that held another prefix-cache state (one that had seen the prompts answers them from its cache) did not run the original's test; reproduce on a server in the original's cache state", compare.CheckPrefixCache, c.Detail))
	}
	if o, r := simulated(om), simulated(rm); o != r {
		side := map[bool]string{true: "synthetic (benchseal's simulator or synthetic evidence)", false: "measured on an inference server"}
		out = append(out, fmt.Sprintf("the original is %s and the reproduction %s: one does not reproduce the other", side[o], side[r]))
	}
	if n, o := rm.Load.Repeats, om.Load.Repeats; n < o {
		out = append(out, fmt.Sprintf("the reproduction ran %d repeats, fewer than the original's %d: a reproduction of the claims runs at least the original's repeats", n, o))
	}
	for _, w := range []string{lessEvidenced(om, rm), warmServer(om, rm)} {
		if w != "" {
			out = append(out, w)
		}
	}
	return out
}

// warmServer says when the reproduction ran on a server that had served
// requests before it (server_state.fresh measured or declared false) and
// whose prefix cache no confirmed reset emptied at some point, while the
// original's server was fresh or its cache empty at every point: the
// earlier requests may have left the test's prompts cached (a server
// with a prefix cache answers a prompt it has seen from the cache), so
// the reproduction ran in another state than the original's test.
func warmServer(om, rm *schema.Manifest) string {
	rs := rm.ServerState
	if rs == nil || rs.Fresh == nil || rs.Fresh.Fresh || !freshOrEmpty(om.ServerState) {
		return ""
	}
	uncleared := 0
	for _, p := range rs.Points {
		if !emptied(p) {
			uncleared++
		}
	}
	if uncleared == 0 && len(rs.Points) > 0 {
		return ""
	}
	before := "requests and prompt tokens before it not measured"
	if f := rs.Fresh; f.RequestsBefore != nil && f.PromptTokensBefore != nil {
		before = fmt.Sprintf("%s requests and %s prompt tokens served before it", digits.Shortest(*f.RequestsBefore), digits.Shortest(*f.PromptTokensBefore))
	}
	at := fmt.Sprintf("at %d of %d point(s)", uncleared, len(rs.Points))
	if len(rs.Points) == 0 {
		at = "(no point states its cache)"
	}
	return fmt.Sprintf("the reproduction's server was not fresh (server_state.fresh, %s: %s) and no confirmed reset emptied its prefix cache %s, while the original's server was fresh or its cache empty: a server that may hold the test's prompts in its cache did not run the original's test; reproduce on a freshly started server", rs.Fresh.Source, before, at)
}

// freshOrEmpty reports whether ss says the server was fresh, or its prefix
// cache empty or disabled at every point.
func freshOrEmpty(ss *schema.ServerState) bool {
	if ss == nil {
		return false
	}
	if ss.Fresh != nil && ss.Fresh.Fresh {
		return true
	}
	return len(ss.Points) > 0 && !slices.ContainsFunc(ss.Points, func(p schema.PointState) bool {
		return p.PrefixCache != schema.PrefixCacheEmpty && p.PrefixCache != schema.PrefixCacheDisabled
	})
}

// emptied reports whether p's prefix cache was shown empty: a successful
// reset, the engine's own reports (measured), or no cache at all.
func emptied(p schema.PointState) bool {
	switch p.PrefixCache {
	case schema.PrefixCacheDisabled:
		return true
	case schema.PrefixCacheEmpty:
		return p.PrefixCacheSource == schema.StateReset || p.PrefixCacheSource == schema.StateMeasured
	}
	return false
}

// lessEvidenced says when the reproduction stores less evidence of its
// server than the original: the original kept server scrapes
// (manifest.server_metrics) and the reproduction, captured against an
// HTTP endpoint (where reproduce scrapes /metrics by default), kept none.
// The scrapes are what places its records on the server's own counters
// and names the model it served (checkScrapedModel); a reproduction
// without them asks to be believed where the original did not.
func lessEvidenced(om, rm *schema.Manifest) string {
	if om.ServerMetrics == nil || len(om.ServerMetrics.Scrapes) == 0 || schema.InProcessSimulator(rm) ||
		(rm.ServerMetrics != nil && len(rm.ServerMetrics.Scrapes) > 0) {
		return ""
	}
	return fmt.Sprintf("the reproduction, captured against an HTTP endpoint, stores no server scrapes (manifest.server_metrics) where the original stores %d: it is less evidenced than the original, since no server counters place its records or name the model it served; reproduce with the server's /metrics scraped", len(om.ServerMetrics.Scrapes))
}

// simulated reports whether m's numbers are synthetic: its evidence says
// so, or the server identified itself as benchseal's simulator.
func simulated(m *schema.Manifest) bool {
	return m.Evidence == schema.EvidenceSynthetic || len(schema.SimulatorIdentity(m)) > 0
}

// transportLimit says when one side was captured against the in-process
// simulator (capture --simulate, as its manifest's command line records:
// HTTP over 127.0.0.1 to a server in the client's own process,
// simulator/start.go) and the other against an HTTP endpoint served by
// another process: the same simulator preset then differs by the path
// between client and server (one process's scheduler and collector, or a
// process boundary and perhaps a network), whose share of a latency tail
// (ITL p99 especially) is large at simulator timescales.
func transportLimit(origName string, om *schema.Manifest, reproName string, rm *schema.Manifest) string {
	o, r := schema.InProcessSimulator(om), schema.InProcessSimulator(rm)
	if o == r {
		return ""
	}
	side := func(name string, in bool) string {
		if in {
			return name + " against the in-process simulator (capture --simulate: HTTP over 127.0.0.1 to a server in the client's own process)"
		}
		return name + " against an HTTP endpoint served by another process"
	}
	return fmt.Sprintf("path to the server differs: %s; %s: latencies include another path, tails most of all", side(origName, o), side(reproName, r))
}
