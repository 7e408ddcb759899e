package capture

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"time"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/plan"
	"github.com/benchseal/benchseal/schema"
)

// Plan is what a capture does: the load points, in order, each run
// Repeats times, with warmup before every (point, repeat) cell. It is the
// format of the --plan JSON file.
type Plan struct {
	// Mode is schema.ModeConcurrency (closed loop) or schema.ModeRate
	// (open loop).
	Mode   string         `json:"mode"`
	Points []schema.Point `json:"points"`
	// Warmup is sent before each (point, repeat) cell at the same load,
	// recorded with phase "warmup".
	Warmup schema.Warmup `json:"warmup"`
	// Repeats runs the whole sweep this many times (interleaved: every
	// point once, then again). Default 1.
	Repeats int `json:"repeats,omitempty"`
	// RequestTimeout ends a request with status timeout. Zero: no timeout.
	RequestTimeout schema.Duration `json:"request_timeout,omitempty"`
	// MaxOutstanding caps in-flight requests; a scheduled request beyond
	// it is not sent and is recorded as rejected. Zero: no cap.
	MaxOutstanding int `json:"max_outstanding,omitempty"`
	// Cancel cancels a seeded fraction of requests after a delay.
	Cancel *Cancel `json:"cancel,omitempty"`
	// Seed fixes the request order, the arrival schedule, the synthetic
	// prompts and the cancelled subset.
	Seed int64 `json:"seed"`
	// InputTokens and OutputTokens are the default synthetic prompt and
	// output lengths of points that state none.
	InputTokens  int `json:"input_tokens,omitempty"`
	OutputTokens int `json:"output_tokens,omitempty"`
	// InputLengths and OutputLengths, when set, draw each synthetic item's
	// input and output length from a distribution (LengthSpec, seeded);
	// every point's input_tokens and output_tokens are then the
	// distribution's upper bound.
	InputLengths  *LengthSpec `json:"input_lengths,omitempty"`
	OutputLengths *LengthSpec `json:"output_lengths,omitempty"`
	// DistinctPrompts gives every point × repeat synthetic prompts of its
	// own (drawn from the seed, so in the workload and its hash), so no
	// engine cache carries over from one cell to the next; the preflight
	// probe then sends a prompt of its own too.
	DistinctPrompts bool `json:"distinct_prompts,omitempty"`
}

// normalizeWorkload sets and checks the points' lengths of the plan's
// length distributions (a distribution's bound is every point's length)
// and the points of a trace replay, calling bad for each problem.
func (p *Plan) normalizeWorkload(bad func(format string, args ...any)) {
	for _, d := range []struct {
		dist  *LengthSpec
		plan  *int
		field string
		get   func(*schema.Point) *int
	}{
		{p.InputLengths, &p.InputTokens, "input", func(pt *schema.Point) *int { return &pt.InputTokens }},
		{p.OutputLengths, &p.OutputTokens, "output", func(pt *schema.Point) *int { return &pt.OutputTokens }},
	} {
		if d.dist == nil {
			continue
		}
		if *d.plan != 0 && *d.plan != d.dist.Hi {
			bad("%s_tokens %d and %s_lengths %s: the lengths' bound is the plan's %s_tokens", d.field, *d.plan, d.field, d.dist, d.field)
		}
		*d.plan = d.dist.Hi
		for i := range p.Points {
			if v := d.get(&p.Points[i]); *v != 0 && *v != d.dist.Hi {
				bad("points[%d]: %s_tokens %d with %s_lengths %s: each synthetic item draws its length from the distribution, bounded by %d", i, d.field, *v, d.field, d.dist, d.dist.Hi)
			}
		}
	}
	for i, pt := range p.Points {
		if pt.Arrival != schema.ArrivalTrace {
			continue
		}
		if pt.Burstiness != 0 || pt.Duration != 0 || pt.Requests == 0 {
			bad("points[%d] %s: a trace replay's point has its trace's requests, no burstiness and no duration", i, pt.Name)
		}
		if p.Warmup.Requests > 0 || p.Warmup.Duration > 0 {
			bad("points[%d] %s: a trace replay has no warmup (its requests are the trace's)", i, pt.Name)
		}
	}
}

// Cancel describes planned client-side cancellation.
type Cancel struct {
	// Fraction of requests (0..1) cancelled After their send.
	Fraction float64         `json:"fraction"`
	After    schema.Duration `json:"after"`
}

// DecodePlan reads a plan JSON document strictly (unknown fields are
// errors) and checks it.
func DecodePlan(r io.Reader) (*Plan, error) {
	b, err := io.ReadAll(io.LimitReader(r, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("read plan: %w", err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	var p Plan
	if err := dec.Decode(&p); err != nil {
		return nil, errcond.Errorf(plan.ErrPlan, "invalid plan: decode: %w", err)
	}
	if dec.More() {
		return nil, errcond.Errorf(plan.ErrPlan, "invalid plan: trailing data after JSON value")
	}
	if err := p.Normalize(); err != nil {
		return nil, err
	}
	return &p, nil
}

// Normalize fills defaults (repeats 1, arrival poisson, burstiness 1,
// names) and checks the plan, reporting every problem.
func (p *Plan) Normalize() error {
	var errs []error
	bad := func(format string, args ...any) { errs = append(errs, fmt.Errorf(format, args...)) }
	p.normalizeRunWide(bad)
	p.normalizeWorkload(bad)
	seen := map[string]bool{}
	for i := range p.Points {
		p.normalizePoint(bad, i, &p.Points[i], seen)
	}
	if len(errs) > 0 {
		return errcond.Errorf(plan.ErrPlan, "invalid plan: %w", errors.Join(errs...))
	}
	return nil
}

// normalizeRunWide fills the repeats default and checks the settings that
// hold for the whole run (repeats, mode, point count, warmup, caps,
// token lengths, cancellation), reporting each problem to bad: Normalize's
// first phase, before the workload and the points.
func (p *Plan) normalizeRunWide(bad func(format string, args ...any)) {
	p.Repeats = cmp.Or(p.Repeats, 1)
	if p.Repeats < 0 || p.Repeats > MaxRepeats {
		bad("repeats %d out of range 1..%d", p.Repeats, MaxRepeats)
	}
	if p.Mode != schema.ModeConcurrency && p.Mode != schema.ModeRate {
		bad("mode %q: want %q or %q", p.Mode, schema.ModeConcurrency, schema.ModeRate)
	}
	if len(p.Points) == 0 || len(p.Points) > MaxPoints {
		bad("need 1..%d points, have %d", MaxPoints, len(p.Points))
	}
	if p.Warmup.Requests < 0 || p.Warmup.Requests > MaxRequestsPerPoint {
		bad("warmup.requests %d out of range", p.Warmup.Requests)
	}
	if p.MaxOutstanding < 0 {
		bad("max_outstanding must not be negative")
	}
	if p.InputTokens < 0 || p.OutputTokens < 0 {
		bad("input_tokens and output_tokens must not be negative")
	}
	if c := p.Cancel; c != nil {
		if !(c.Fraction >= 0 && c.Fraction <= 1) {
			bad("cancel.fraction %s out of range 0..1", digits.Shortest(c.Fraction))
		}
		if c.Fraction > 0 && c.After <= 0 {
			bad("cancel.after must be > 0")
		}
	}
}

// normalizePoint fills point i's defaults (name, token lengths from the
// plan) and checks it, reporting each problem to bad; seen holds the
// names of the points before it. Normalize's per-point phase, with the
// mode's own rules in checkConcurrencyPoint and normalizeRatePoint.
func (p *Plan) normalizePoint(bad func(format string, args ...any), i int, pt *schema.Point, seen map[string]bool) {
	if pt.Name == "" {
		if p.Mode == schema.ModeRate {
			pt.Name = fmt.Sprintf("rate-%s", digits.Shortest(pt.Rate))
		} else {
			pt.Name = fmt.Sprintf("c%d", pt.Concurrency)
		}
	}
	if seen[pt.Name] {
		bad("points[%d]: duplicate name %q", i, pt.Name)
	}
	seen[pt.Name] = true
	if pt.InputTokens == 0 {
		pt.InputTokens = p.InputTokens
	}
	if pt.OutputTokens == 0 {
		pt.OutputTokens = p.OutputTokens
	}
	if pt.InputTokens < 0 || pt.OutputTokens < 0 {
		bad("points[%d] %s: negative token length", i, pt.Name)
	}
	if pt.Requests < 0 || pt.Requests > MaxRequestsPerPoint {
		bad("points[%d] %s: requests %d out of range 0..%d", i, pt.Name, pt.Requests, MaxRequestsPerPoint)
	}
	if pt.Requests == 0 && pt.Duration == 0 {
		bad("points[%d] %s: set requests or duration", i, pt.Name)
	}
	switch p.Mode {
	case schema.ModeConcurrency:
		p.checkConcurrencyPoint(bad, i, pt)
	case schema.ModeRate:
		normalizeRatePoint(bad, i, pt)
	}
}

// checkConcurrencyPoint checks the closed-loop rules of point i (a
// concurrency in range and within max_outstanding, no rate-mode fields),
// reporting each problem to bad: the concurrency-mode half of
// normalizePoint.
func (p *Plan) checkConcurrencyPoint(bad func(format string, args ...any), i int, pt *schema.Point) {
	if pt.Concurrency < 1 || pt.Concurrency > MaxConcurrency {
		bad("points[%d] %s: concurrency %d out of range 1..%d", i, pt.Name, pt.Concurrency, MaxConcurrency)
	}
	if pt.Rate != 0 || pt.Arrival != "" || pt.Burstiness != 0 {
		bad("points[%d] %s: rate, arrival and burstiness belong to rate mode", i, pt.Name)
	}
	if p.MaxOutstanding > 0 && pt.Concurrency > p.MaxOutstanding {
		bad("points[%d] %s: concurrency %d exceeds max_outstanding %d", i, pt.Name, pt.Concurrency, p.MaxOutstanding)
	}
}

// normalizeRatePoint fills rate point i's defaults (arrival poisson,
// burstiness 1 with gamma) and checks its open-loop rules (rate, arrival,
// burstiness, rate × duration), reporting each problem to bad: the
// rate-mode half of normalizePoint.
func normalizeRatePoint(bad func(format string, args ...any), i int, pt *schema.Point) {
	if !(pt.Rate > 0 && pt.Rate <= MaxRate) {
		bad("points[%d] %s: rate %s out of range (0, %d]", i, pt.Name, digits.Shortest(pt.Rate), MaxRate)
	}
	if pt.Concurrency != 0 {
		bad("points[%d] %s: concurrency belongs to concurrency mode (use max_outstanding to cap a rate point)", i, pt.Name)
	}
	if pt.Arrival == "" {
		pt.Arrival = schema.ArrivalPoisson
	}
	switch pt.Arrival {
	case schema.ArrivalConstant, schema.ArrivalPoisson, schema.ArrivalTrace: // trace: see normalizeWorkload
		if pt.Burstiness != 0 && pt.Burstiness != 1 {
			bad("points[%d] %s: burstiness needs arrival gamma", i, pt.Name)
		}
	case schema.ArrivalGamma:
		if pt.Burstiness == 0 {
			pt.Burstiness = 1
		}
		if !(pt.Burstiness > 0 && pt.Burstiness <= 1000) {
			bad("points[%d] %s: burstiness %s out of range (0, 1000]", i, pt.Name, digits.Shortest(pt.Burstiness))
		}
	default:
		bad("points[%d] %s: arrival %q: want constant, poisson or gamma", i, pt.Name, pt.Arrival)
	}
	if pt.Requests == 0 && pt.Rate*time.Duration(pt.Duration).Seconds() > MaxRequestsPerPoint {
		bad("points[%d] %s: rate × duration exceeds %d requests", i, pt.Name, MaxRequestsPerPoint)
	}
}

// Protocol preset axes: prompt and output lengths in tokens.
const (
	PresetInputShort, PresetInputLong   = 128, 2048
	PresetOutputShort, PresetOutputLong = 128, 1024
)

// presetConcurrency is the preset's default load axis.
var presetConcurrency = []int{1, 4, 16, 64}

// ProtocolPoints returns the protocol's ready matrix: short and long
// prompts × short and long outputs × increasing load. In concurrency mode
// loads are concurrencies (default 1, 4, 16, 64); in rate mode, rates.
// requests is the request count of each point (0: 8 × concurrency, at
// least 32, for concurrency; 10 s worth of requests, at least 32, for
// rates).
func ProtocolPoints(mode string, loads []float64, requests int) []schema.Point {
	if len(loads) == 0 {
		for _, c := range presetConcurrency {
			loads = append(loads, float64(c))
		}
	}
	var pts []schema.Point
	for _, in := range []int{PresetInputShort, PresetInputLong} {
		for _, out := range []int{PresetOutputShort, PresetOutputLong} {
			for _, l := range loads {
				pt := schema.Point{InputTokens: in, OutputTokens: out, Requests: requests}
				if mode == schema.ModeRate {
					pt.Rate = l
					pt.Arrival = schema.ArrivalPoisson
					pt.Name = fmt.Sprintf("in%d-out%d-r%s", in, out, digits.Shortest(l))
					if pt.Requests == 0 {
						pt.Requests = max(32, int(math.Ceil(10*l)))
					}
				} else {
					pt.Concurrency = int(l)
					pt.Name = fmt.Sprintf("in%d-out%d-c%d", in, out, int(l))
					if pt.Requests == 0 {
						pt.Requests = max(32, 8*int(l))
					}
				}
				pts = append(pts, pt)
			}
		}
	}
	return pts
}

// Schedule returns the intended send offsets of an open-loop point; it is
// schema.Schedule with the per-point request cap MaxRequestsPerPoint.
func Schedule(arrival string, rate, burstiness float64, n int, limit time.Duration, seed int64, stream uint64) []int64 {
	if n <= 0 || n > MaxRequestsPerPoint {
		n = MaxRequestsPerPoint
	}
	return schema.Schedule(arrival, rate, burstiness, n, limit, seed, stream)
}

// Order returns a deterministic permutation of 0..n-1 from the seed.
func Order(n int, seed int64, stream uint64) []int {
	rng := rand.New(rand.NewPCG(uint64(seed), stream))
	return rng.Perm(n)
}
