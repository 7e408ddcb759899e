package synth

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/schema"
)

// ModelVersion identifies the synthetic server model; it changes whenever
// the same options would give different bytes.
const ModelVersion = "1"

// DefaultEpochUnixNS is the wall-clock time of t=0 of every synthetic run:
// 2026-01-01T00:00:00Z. It is fixed so that runs are reproducible.
const DefaultEpochUnixNS int64 = 1767225600_000000000

// Options configures a synthetic run.
type Options struct {
	// Seed selects the pseudo-random stream (PCG).
	Seed uint64
	// Requests is the number of measured requests over all points and
	// repeats, split by Split: every repeat of a point gets the same
	// count, the first points one more when it does not divide.
	Requests int
	// Mode is schema.ModeConcurrency (closed loop) or schema.ModeRate
	// (open loop, Poisson arrivals).
	Mode string
	// Points are the concurrency levels (integers) or the offered rates in
	// requests per second.
	Points []float64
	// Repeats is the number of measured repeats of every point.
	Repeats int
	// Warmup is the number of warmup requests run before each point.
	Warmup int
	// WorkloadItems is the number of workload items (workload.jsonl lines)
	// requests draw from.
	WorkloadItems int
	// EpochUnixNS is the wall-clock time of the run's t=0.
	EpochUnixNS int64
}

// DefaultOptions is a small but rich demo run: three concurrency points
// (one past the server's batch limit) × two repeats, about 2000 requests.
func DefaultOptions() Options {
	return Options{
		Seed:          1,
		Requests:      1800,
		Mode:          schema.ModeConcurrency,
		Points:        []float64{4, 16, 64},
		Repeats:       2,
		Warmup:        8,
		WorkloadItems: 1000,
		EpochUnixNS:   DefaultEpochUnixNS,
	}
}

// DefaultRatePoints are the offered rates used when Mode is rate and no
// points are given: light, near and past the server's capacity.
var DefaultRatePoints = []float64{8, 24, 48}

// Validate checks the options.
func (o *Options) Validate() error {
	var errs []error
	if o.Requests < 1 {
		errs = append(errs, errors.New("requests must be ≥ 1"))
	}
	if o.Mode != schema.ModeConcurrency && o.Mode != schema.ModeRate {
		errs = append(errs, fmt.Errorf("mode must be %q or %q, got %q", schema.ModeConcurrency, schema.ModeRate, o.Mode))
	}
	if len(o.Points) == 0 {
		errs = append(errs, errors.New("at least one point is needed"))
	}
	seen := map[string]bool{}
	for _, p := range o.Points {
		switch {
		case math.IsNaN(p) || math.IsInf(p, 0) || p <= 0:
			errs = append(errs, fmt.Errorf("point %s: must be a finite number > 0", digits.Shortest(p)))
		case o.Mode == schema.ModeConcurrency && (p != math.Trunc(p) || p > 100000):
			errs = append(errs, fmt.Errorf("point %s: concurrency must be a whole number ≤ 100000", digits.Shortest(p)))
		}
		if n := o.pointName(p); seen[n] {
			errs = append(errs, fmt.Errorf("point %s is given twice", digits.Shortest(p)))
		} else {
			seen[n] = true
		}
	}
	if n := len(o.Points) * o.Repeats; n > 0 && o.Requests >= 1 && o.Requests < n {
		errs = append(errs, fmt.Errorf("requests %d is fewer than %d points × %d repeats: every repeat of every point needs one", o.Requests, len(o.Points), o.Repeats))
	}
	if o.Repeats < 1 {
		errs = append(errs, errors.New("repeats must be ≥ 1"))
	}
	if o.Warmup < 0 {
		errs = append(errs, errors.New("warmup must be ≥ 0"))
	}
	if o.WorkloadItems < 1 {
		errs = append(errs, errors.New("workload items must be ≥ 1"))
	}
	if o.EpochUnixNS <= 0 {
		errs = append(errs, errors.New("epoch must be > 0"))
	}
	if len(errs) > 0 {
		return fmt.Errorf("check synth options: %w", errors.Join(errs...))
	}
	return nil
}

func (o *Options) pointName(p float64) string {
	if o.Mode == schema.ModeRate {
		return "r" + digits.Shortest(p)
	}
	return "c" + digits.Places(p, 0)
}

// Generate writes a synthetic run to w: workload.jsonl, the records and
// the manifest (evidence "synthetic"). It does not write claims and does
// not commit w. Memory stays bounded whatever the number of requests.
func Generate(ctx context.Context, opts Options, w *schema.RunWriter) (*schema.Manifest, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	g := &gen{
		opts: opts,
		rng:  rand.New(rand.NewPCG(opts.Seed, 0x62656e6368736561)), // "benchsea"
		w:    w,
	}
	wl := g.workload()
	sum, n, err := w.WriteWorkload(strings.NewReader(wl))
	if err != nil {
		return nil, fmt.Errorf("generate synthetic run: %w", err)
	}
	if err := g.run(ctx); err != nil {
		return nil, err
	}
	m := g.manifest(sum, n)
	if err := w.SetManifest(m); err != nil {
		return nil, fmt.Errorf("generate synthetic run: %w", err)
	}
	return m, nil
}

// WriteRun writes a synthetic run directory at dir (which must not exist
// or be empty), records zstd-compressed when compress is set: Generate
// into a new run writer, committed only when it succeeded, so a failure
// leaves nothing at dir. It returns the manifest and the number of
// records written.
func WriteRun(ctx context.Context, dir string, opts Options, compress bool) (*schema.Manifest, int64, error) {
	w, err := schema.CreateRun(dir, compress)
	if err != nil {
		return nil, 0, err
	}
	m, err := Generate(ctx, opts, w)
	if err != nil {
		w.Abort()
		return nil, 0, err
	}
	n := w.Records().Count()
	if err := w.Commit(); err != nil {
		return nil, 0, err
	}
	return m, n, nil
}

// Split returns how Requests is spread: the measured requests of each
// point (the same in every repeat, as the manifest declares one count per
// point and validate holds each repeat to it), their total, and a note
// saying how a total that is not a multiple of points × repeats was
// split ("" when it is). The remainder goes one request per repeat to the
// first points; what is left under one per repeat (fewer than Repeats
// requests) cannot be split evenly and is not run, said in the note.
func (o Options) Split() (perPoint []int, total int, note string) {
	cells := len(o.Points) * o.Repeats
	if cells == 0 || o.Requests < cells {
		return make([]int, len(o.Points)), 0, ""
	}
	base := o.Requests / cells
	rem := o.Requests % cells
	extra, left := rem/o.Repeats, rem%o.Repeats
	perPoint = make([]int, len(o.Points))
	for i := range perPoint {
		perPoint[i] = base
		if i < extra {
			perPoint[i]++
		}
		total += perPoint[i] * o.Repeats
	}
	if rem == 0 {
		return perPoint, total, ""
	}
	note = fmt.Sprintf("requests %d is not a multiple of %d points × %d repeats: each repeat of the first %d point(s) gets %d, of the others %d",
		o.Requests, len(o.Points), o.Repeats, extra, base+1, base)
	if extra == 0 {
		note = fmt.Sprintf("requests %d is not a multiple of %d points × %d repeats: each repeat of every point gets %d", o.Requests, len(o.Points), o.Repeats, base)
	}
	if left > 0 {
		note += fmt.Sprintf("; %d request(s) fewer than one per repeat are left out (every repeat of a point runs the same count): %d measured", left, total)
	}
	return perPoint, total, note
}
