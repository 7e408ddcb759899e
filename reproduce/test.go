package reproduce

import (
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/plan"
	"github.com/benchseal/benchseal/schema"
)

// ErrNotReproducible is the condition of a bundle whose test cannot be
// rebuilt from what it ships; the error says exactly what is missing.
var ErrNotReproducible = errors.New("the bundle's test cannot be rebuilt")

// Source is what a test is taken from: a verified bundle's manifest, its
// workload items and its pre-registered plan.
type Source struct {
	// Manifest is the original run's manifest.
	Manifest *schema.Manifest
	// Workload opens the bundle's workload.jsonl; nil when the bundle
	// ships none.
	Workload func() (io.ReadCloser, error)
	// Plan is the pre-registered plan the verifier checked the run
	// against without deviation (verify.PlanResult.Plan); nil when none.
	Plan *plan.Plan
}

// Test is what a reproduction sends: the original's load plan, workload
// and request parameters, and what its claims are judged by.
type Test struct {
	// Plan is the capture plan: the original's load points, counts,
	// warmup, repeats (or fewer, see Notes), seed and cancellations.
	Plan capture.Plan
	// Request holds the original's API, streaming, forced length and
	// temperature; Model is left for the reviewer to name.
	Request capture.RequestOptions
	// Prompts is the original's workload items; nil for a synthetic
	// workload, which capture regenerates from the plan's seed.
	Prompts []capture.Item
	// Dataset names the original's workload (manifest workload.dataset).
	Dataset string
	// Registered is the pre-registered plan the reproduction executes,
	// when the original executed one and the repeats are its own.
	Registered *plan.Plan
	// UnexecutedPlan is the original's pre-registered plan when the
	// reproduction does not execute it (other repeats); nil otherwise.
	UnexecutedPlan *plan.Plan
	// SLO is the objective the original declared before its run.
	SLO schema.SLO
	// OriginalRepeats is the original's repeats.
	OriginalRepeats int
	// Notes say where the reproduction's test departs from the
	// original's (fewer repeats, a seed the original did not state).
	Notes []string
}

// BuildTest takes the test from src. repeats is the reproduction's
// repeats (0: the original's; fewer is allowed and said in Notes). A test
// that cannot be rebuilt is an error wrapping ErrNotReproducible that
// names every missing piece.
func BuildTest(src Source, repeats int) (*Test, error) {
	m := src.Manifest
	if m == nil {
		return nil, errors.New("reproduce: no manifest")
	}
	if repeats < 0 {
		return nil, fmt.Errorf("reproduce: repeats %d: want at least 1 (0: the original's)", repeats)
	}
	t, missing := testOf(m, repeats)
	if !synthetic(m) {
		t.Prompts = itemsOf(src, func(format string, args ...any) { missing = append(missing, fmt.Sprintf(format, args...)) })
	}
	if len(missing) > 0 {
		return nil, errcond.Errorf(ErrNotReproducible, "the bundle's test cannot be rebuilt: %s", strings.Join(missing, "; "))
	}
	if err := t.Plan.Normalize(); err != nil {
		// %v: the bundle's plan failing capture's rules is
		// ErrNotReproducible, not plan.ErrPlan (Normalize's condition: a
		// plan the user gave, which capture answers with a usage error).
		return nil, errcond.Errorf(ErrNotReproducible, "the bundle's test cannot be rebuilt: its load as capture would run it: %v", err)
	}
	if p := src.Plan; p != nil && t.Plan.Repeats == p.Load.Repeats {
		t.Registered = p
		t.SLO = p.SLO
	} else if p != nil {
		t.UnexecutedPlan = p
		t.Notes = append(t.Notes, "the original executed pre-registered plan "+planDigest(p)+"; with other repeats the reproduction does not")
	}
	return t, nil
}

// testOf is the test m states, without its workload items: the load
// plan, the request parameters and the SLO, with repeats (0: m's own) in
// place of m's, and what is missing to rebuild it. A workload that is
// not synthetic gives every length by its items, so its points state
// none.
func testOf(m *schema.Manifest, repeats int) (*Test, []string) {
	var missing []string
	miss := func(format string, args ...any) { missing = append(missing, fmt.Sprintf(format, args...)) }
	refuseUnrebuildable(m, miss)
	t := &Test{Dataset: m.Workload.Dataset, SLO: m.SLO, OriginalRepeats: m.Load.Repeats}
	t.Request = requestOf(m, miss)
	t.Plan = loadPlanOf(m, miss)
	if repeats > 0 && repeats != m.Load.Repeats {
		t.Plan.Repeats = repeats
		if repeats < m.Load.Repeats {
			t.Notes = append(t.Notes, fmt.Sprintf("the reproduction runs %d repeats, fewer than the original's %d: fewer repeats decide fewer claims", repeats, m.Load.Repeats))
		} else {
			t.Notes = append(t.Notes, fmt.Sprintf("the reproduction runs %d repeats, the original %d", repeats, m.Load.Repeats))
		}
	}
	if m.Client.Seed == nil {
		t.Notes = append(t.Notes, "the original states no seed (client.seed): the reproduction uses seed 0, so its request order and schedule are its own")
	}
	if synthetic(m) {
		distributionsOf(m, &t.Plan, miss)
	} else {
		for i := range t.Plan.Points {
			t.Plan.Points[i].InputTokens, t.Plan.Points[i].OutputTokens = 0, 0
		}
	}
	return t, missing
}

// refuseUnrebuildable names what makes a run's test impossible to rebuild
// whatever it ships: a lone shard, a trace replay, multi-turn sessions,
// external evidence, an
// imported run whose tool's load is not stated.
func refuseUnrebuildable(m *schema.Manifest, miss func(string, ...any)) {
	if m.ExternalReference() {
		miss("the run is external evidence (manifest.external, %s) without per-request records: there is no test to re-run", m.External[0].Kind)
	}
	if m.Shard != nil {
		miss("the run is shard %d of %d of a sharded capture (manifest.shard): reproduce the merged run", m.Shard.Index, m.Shard.Count)
	}
	if m.Workload.Trace != nil {
		miss("the run replays the %s trace %s (workload.trace): reproduce does not replay traces; capture --trace with the same file, speed-up and window re-runs it", m.Workload.Trace.Format, m.Workload.Trace.File)
	}
	if s := m.Workload.Sessions; s != nil {
		// Without them the items would go shuffled and without their
		// history, another test under the same name.
		miss("the run sent %d multi-turn sessions of %s %s (workload.sessions): reproduce does not re-run sessions in order with their history; capture --sharegpt with the same file and --sessions re-runs them", s.Sessions, s.Format, s.File)
	}
	if m.Imported() {
		tool := "another tool"
		if m.Source != nil {
			tool = m.Source.Tool
		}
		if m.Load.Mode != schema.ModeConcurrency && m.Load.Mode != schema.ModeRate {
			miss("the run was imported from %s, whose load mode (load.mode %q) is neither concurrency nor rate", tool, m.Load.Mode)
		}
	}
}

// requestOf takes the request parameters from the manifest's decoding.
func requestOf(m *schema.Manifest, miss func(string, ...any)) capture.RequestOptions {
	d := m.Decoding
	r := capture.RequestOptions{Stream: d.Streaming, Temperature: d.Temperature, Seed: d.Seed,
		ForceLength: d.IgnoreEOS || d.MinTokens > 0, PerChunkUsage: m.Notes["per_chunk_usage"] != ""}
	switch d.Endpoint {
	case "/v1/chat/completions":
		r.API = capture.APIChat
	case "/v1/completions":
		r.API = capture.APICompletions
	case "":
		miss("decoding.endpoint is not stated: chat or completions API unknown")
	default:
		miss("decoding.endpoint %q is neither /v1/chat/completions nor /v1/completions", d.Endpoint)
	}
	if m.Client.Boundary == schema.BoundaryServerTimer {
		miss("the measurement boundary is server-timer (client.boundary): a client re-run measures another boundary")
	}
	return r
}

// loadPlanOf takes the load from the manifest: points, warmup, repeats,
// timeout, outstanding cap, seed and the planned cancellations.
func loadPlanOf(m *schema.Manifest, miss func(string, ...any)) capture.Plan {
	l := m.Load
	p := capture.Plan{Mode: l.Mode, Points: slices.Clone(l.Points), Warmup: l.Warmup, Repeats: l.Repeats,
		RequestTimeout: l.RequestTimeout, MaxOutstanding: l.MaxOutstanding,
		DistinctPrompts: m.Notes["distinct_prompts"] != ""}
	if m.Client.Seed != nil {
		p.Seed = *m.Client.Seed
	}
	if len(p.Points) == 0 {
		miss("load.points is empty")
	}
	for i := range p.Points {
		pt := &p.Points[i]
		if pt.Requests == 0 && pt.Duration == 0 && l.Duration > 0 {
			pt.Duration = l.Duration
		}
		if pt.Requests == 0 && pt.Duration == 0 {
			miss("load.points[%d] %s states neither requests nor duration", i, pt.Name)
		}
	}
	if note := m.Notes["cancellation"]; note != "" {
		c, err := parseCancellation(note)
		if err != nil {
			miss("notes.cancellation: %v", err)
		}
		p.Cancel = c
	}
	return p
}

// cancellationNote is how capture states planned cancellations
// (capture/manifest.go).
const cancellationNote = "a seeded %g fraction of requests is cancelled by the client %s after its send (status cancelled)"

// parseCancellation reads the fraction and delay of capture's
// cancellation note.
func parseCancellation(note string) (*capture.Cancel, error) {
	var frac float64
	var after string
	if _, err := fmt.Sscanf(note, "a seeded %g fraction of requests is cancelled by the client %s after", &frac, &after); err != nil {
		return nil, fmt.Errorf("%q is not capture's statement of planned cancellations (%q): %w", note, cancellationNote, err)
	}
	d, err := time.ParseDuration(after)
	if err != nil {
		return nil, fmt.Errorf("delay %q: %w", after, err)
	}
	return &capture.Cancel{Fraction: frac, After: schema.Duration(d)}, nil
}

// synthetic reports whether the run's workload is benchseal's seeded
// synthetic prompts, which capture regenerates from the plan.
func synthetic(m *schema.Manifest) bool {
	return m.Load.Generator == schema.GeneratorBenchsealV1 && m.Workload.Dataset == "synthetic" && m.Workload.Trace == nil && !m.Imported()
}

// distributionsOf sets the plan's length distributions from a synthetic
// workload's stated specs (workload.input_tokens.spec and
// workload.output_tokens.spec, capture's LengthSpec), so the regenerated
// prompts draw the same lengths.
func distributionsOf(m *schema.Manifest, p *capture.Plan, miss func(string, ...any)) {
	for _, d := range []struct {
		field string
		dist  *schema.LengthDist
		set   **capture.LengthSpec
	}{{"workload.input_tokens", m.Workload.InputTokens, &p.InputLengths}, {"workload.output_tokens", m.Workload.OutputTokens, &p.OutputLengths}} {
		if d.dist == nil || d.dist.Spec == "" {
			continue
		}
		s, err := capture.ParseLengthSpec(d.dist.Spec)
		if err != nil {
			miss("%s.spec %q: %v", d.field, d.dist.Spec, err)
			continue
		}
		if !s.Fixed() {
			*d.set = &s
		}
	}
}

// itemsOf reads the bundle's workload items, or names why there are none.
func itemsOf(src Source, miss func(string, ...any)) []capture.Item {
	w := src.Manifest.Workload
	if src.Workload == nil {
		switch {
		case w.Private:
			miss("the workload is private (workload.private): the bundle ships only its hash (workload.sha256 %s), not the prompts (workload.jsonl)", w.SHA256)
		case w.SHA256 != "":
			miss("the bundle ships only the workload's hash (workload.sha256 %s), not its prompts (workload.jsonl)", w.SHA256)
		default:
			miss("the bundle ships no workload: neither its prompts (workload.jsonl) nor a hash (workload.sha256)")
		}
		return nil
	}
	rc, err := src.Workload()
	if err != nil {
		miss("%s: %v", schema.WorkloadFile, err)
		return nil
	}
	defer rc.Close()
	items, err := capture.ReadPrompts(rc, schema.WorkloadFile, 0)
	if err != nil {
		miss("%v", err)
		return nil
	}
	if len(items) == 0 {
		miss("%s holds no items", schema.WorkloadFile)
	}
	return items
}

// planDigest names a plan by its digest, or by its title when it has none.
func planDigest(p *plan.Plan) string {
	if d, err := p.Digest(); err == nil {
		return d
	}
	return fmt.Sprintf("%q", p.Title)
}
