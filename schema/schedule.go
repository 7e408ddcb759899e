package schema

import (
	"math"
	"math/rand/v2"
	"time"
)

// Schedule returns the intended send offsets (ns from the start of the
// phase) of an open-loop point: the first at 0, then inter-arrival gaps
// drawn from the arrival process — constant 1/rate, exponential with mean
// 1/rate (Poisson), or gamma with shape burstiness and scale
// 1/(rate·burstiness) (vLLM's convention: burstiness 1 is Poisson, lower is
// burstier). It stops after n offsets (n > 0) or at the first offset at or
// beyond limit (limit > 0); with neither it stops at n = MaxInt, so callers
// bound it. The same arguments give the same schedule: validate and verify
// regenerate a capture's schedule from its seed (see GeneratorBenchsealV1).
func Schedule(arrival string, rate, burstiness float64, n int, limit time.Duration, seed int64, stream uint64) []int64 {
	if n <= 0 {
		n = math.MaxInt
	}
	hint := 1 << 20 // a preallocation hint, bounded whatever the arguments
	if f := float64(rate*limit.Seconds()) + 16; limit > 0 && f < float64(hint) {
		hint = int(f)
	}
	out := make([]int64, 0, min(hint, n))
	g := newScheduler(arrival, rate, burstiness, limit, seed, stream)
	for len(out) < n {
		t, ok := g.next()
		if !ok {
			break
		}
		out = append(out, t)
	}
	return out
}

// scheduler yields the offsets of Schedule one at a time, so a checker
// walks a long schedule without holding it.
type scheduler struct {
	rng        *rand.Rand
	arrival    string
	mean       float64
	burstiness float64
	limit      time.Duration
	t          float64
	i          int64 // offsets yielded so far
	// trace and speedup: a trace replay's schedule (arrival
	// ArrivalTrace), TraceOffset of each trace time in turn.
	trace   []int64
	speedup float64
}

func newScheduler(arrival string, rate, burstiness float64, limit time.Duration, seed int64, stream uint64) *scheduler {
	return &scheduler{rng: rand.New(rand.NewPCG(uint64(seed), stream)), arrival: arrival, mean: 1e9 / rate,
		burstiness: burstiness, limit: limit}
}

// next returns the next offset, or false at the schedule's limit.
func (g *scheduler) next() (int64, bool) {
	if g.arrival == ArrivalTrace {
		if g.i >= int64(len(g.trace)) {
			return 0, false
		}
		g.i++
		return TraceOffset(g.trace[g.i-1], g.speedup), true
	}
	if g.limit > 0 && g.t >= float64(g.limit) {
		return 0, false
	}
	out := int64(g.t)
	g.i++
	switch g.arrival {
	case ArrivalConstant:
		g.t = float64(g.i) * g.mean // no accumulated rounding drift
	case ArrivalGamma:
		g.t += gamma(g.rng, g.burstiness) * g.mean / g.burstiness
	default: // Poisson
		g.t += float64(g.rng.ExpFloat64() * g.mean)
	}
	return out, true
}

// gamma draws from Gamma(shape, 1) by Marsaglia and Tsang's method.
func gamma(rng *rand.Rand, shape float64) float64 {
	if shape < 1 {
		// Boost: Gamma(a) = Gamma(a+1) · U^(1/a).
		u := rng.Float64()
		for u == 0 {
			u = rng.Float64()
		}
		return gamma(rng, shape+1) * math.Pow(u, 1/shape)
	}
	d := shape - 1.0/3
	c := 1 / math.Sqrt(9*d)
	for {
		x := rng.NormFloat64()
		v := 1 + float64(c*x)
		if v <= 0 {
			continue
		}
		v = float64(v * v * v)
		u := rng.Float64()
		if u < 1-float64(0.0331*x*x*x*x) {
			return d * v
		}
		if u > 0 && math.Log(u) < float64(0.5*x*x)+float64(d*(1-v+math.Log(v))) {
			return d * v
		}
	}
}
