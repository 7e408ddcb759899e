package capture

import (
	"fmt"
	"time"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/plan"
	"github.com/benchseal/benchseal/schema"
)

// Default synthetic prompt and output lengths, in tokens.
const (
	DefaultInputTokens  = 128
	DefaultOutputTokens = 128
)

// PresetProtocol is the one ready plan: short and long prompts × short and
// long outputs × increasing load (ProtocolPoints).
const PresetProtocol = "protocol"

// LoadSpec is a load as capture's command line states it: one list of
// loads sharing the counts, or the protocol preset over such a list. Its
// Plan method is how those flags become a Plan; its errors name the flags.
type LoadSpec struct {
	// Concurrency (closed loop) or Rate (open loop, requests per second):
	// the load of each point, in order. At most one is set.
	Concurrency []int
	Rate        []float64
	// Arrival of rate points: constant, poisson or gamma; "" is poisson,
	// or gamma when Burstiness is given.
	Arrival string
	// Burstiness is the gamma shape (1 = poisson, < 1 burstier); nil: not
	// given. Only gamma arrivals use it.
	Burstiness *float64
	// Requests and Duration end each measured point (whichever first);
	// one of them is needed unless a preset sets the counts.
	Requests int
	Duration time.Duration
	Warmup   schema.Warmup
	// Repeats of the whole sweep (0: 1).
	Repeats        int
	Timeout        time.Duration
	MaxOutstanding int
	// CancelFraction of requests are cancelled CancelAfter their send.
	CancelFraction float64
	CancelAfter    time.Duration
	Seed           int64
	// InputTokens and OutputTokens are the synthetic lengths; nil: the
	// defaults. The protocol preset sets its own, so it refuses them.
	InputTokens, OutputTokens *int
	// InputLengths and OutputLengths draw the synthetic lengths from a
	// distribution instead (Plan.InputLengths); nil: not given.
	InputLengths, OutputLengths *LengthSpec
	// Preset is "" or PresetProtocol.
	Preset string
	// Trace, when set, is the whole load: one rate point sending the
	// trace's requests at their times (no loads, counts, warmup, preset
	// or synthetic lengths).
	Trace *TraceRun
	// Sessions, when set, is the workload: every concurrency point runs
	// its sessions, whose turns are its requests (no rate, counts,
	// warmup, preset or input lengths).
	Sessions *SessionRun
}

// sessionPlan is the plan of a session run.
func (s LoadSpec) sessionPlan(p *Plan) (*Plan, error) {
	switch {
	case len(s.Rate) > 0 && len(s.Concurrency) > 0:
		return nil, flagError("--sessions runs C sessions at once (--concurrency) or starts them at a rate (--rate), not both")
	case len(s.Rate) == 0 && (s.Arrival != "" || s.Burstiness != nil):
		return nil, flagError("--arrival and --burstiness shape the sessions' arrivals: give --rate too")
	case len(s.Concurrency) == 0 && len(s.Rate) == 0:
		return nil, flagError("--sessions needs --concurrency (sessions at once) or --rate (sessions started per second)")
	case s.Preset != "":
		return nil, flagError("--sessions cannot be combined with --preset")
	case s.Requests != 0 || s.Duration != 0:
		return nil, flagError("--sessions sends every turn of its sessions; drop --requests and --duration")
	case s.Warmup.Requests != 0 || s.Warmup.Duration != 0:
		return nil, flagError("--sessions has no warmup: drop --warmup-requests and --warmup-duration")
	case s.InputTokens != nil || s.InputLengths != nil || s.OutputLengths != nil:
		return nil, flagError("--sessions sends the dataset's messages; drop --input-tokens (and give --output-tokens as one length, or none for the dataset's answer lengths)")
	}
	if s.CancelFraction != 0 || s.CancelAfter != 0 {
		p.Cancel = &Cancel{Fraction: s.CancelFraction, After: schema.Duration(s.CancelAfter)}
	}
	p.Mode = schema.ModeConcurrency
	p.InputTokens, p.OutputTokens = 0, 0
	for _, c := range s.Concurrency {
		p.Points = append(p.Points, schema.Point{Concurrency: c, Requests: len(s.Sessions.Items)})
	}
	arrival, burstiness := s.arrival()
	for _, r := range s.Rate {
		if !(r > 0 && r <= MaxRate) {
			return nil, flagError(fmt.Sprintf("--rate %s: want a rate above 0 and at most %d sessions per second", digits.Shortest(r), MaxRate))
		}
		p.Mode = schema.ModeRate
		p.Points = append(p.Points, schema.Point{Rate: r, Arrival: arrival, Burstiness: burstiness, Requests: len(s.Sessions.Items)})
	}
	if err := p.Normalize(); err != nil {
		return nil, err
	}
	return p, nil
}

// lengths sets the plan's synthetic lengths or length distributions
// (whose bounds Normalize makes the points' lengths).
func (s LoadSpec) lengths(p *Plan) {
	for _, l := range []struct {
		n    *int
		dist *LengthSpec
		to   *int
		toD  **LengthSpec
	}{{s.InputTokens, s.InputLengths, &p.InputTokens, &p.InputLengths}, {s.OutputTokens, s.OutputLengths, &p.OutputTokens, &p.OutputLengths}} {
		switch {
		case l.dist != nil:
			*l.to, *l.toD = 0, l.dist
		case l.n != nil:
			*l.to = *l.n
		}
	}
}

// tracePlan is the plan of a trace replay.
func (s LoadSpec) tracePlan(p *Plan) (*Plan, error) {
	switch {
	case len(s.Rate) > 0 || len(s.Concurrency) > 0 || s.Preset != "":
		return nil, flagError("--trace sets the schedule; drop --rate, --concurrency and --preset")
	case s.Requests != 0 || s.Duration != 0:
		return nil, flagError("--trace sends the trace's requests; drop --requests and --duration (--trace-window selects a part)")
	case s.Warmup.Requests != 0 || s.Warmup.Duration != 0:
		return nil, flagError("--trace has no warmup: drop --warmup-requests and --warmup-duration")
	case s.InputTokens != nil || s.OutputTokens != nil || s.InputLengths != nil || s.OutputLengths != nil:
		return nil, flagError("--trace gives every request its own lengths; drop --input-tokens and --output-tokens")
	case s.Arrival != "" || s.Burstiness != nil:
		return nil, flagError("--trace sets the arrivals; drop --arrival and --burstiness")
	}
	p.Mode = schema.ModeRate
	p.InputTokens, p.OutputTokens = 0, 0
	p.Points = []schema.Point{{Name: "trace", Rate: s.Trace.Rate(), Arrival: schema.ArrivalTrace, Requests: len(s.Trace.Items)}}
	if err := p.Normalize(); err != nil {
		return nil, err
	}
	return p, nil
}

// arrival returns the arrival process and burstiness of rate points:
// --arrival, gamma when only --burstiness is given, else Poisson (the
// burstiness is 0 unless the arrival is gamma).
func (s LoadSpec) arrival() (string, float64) {
	arrival, burstiness := s.Arrival, 0.0
	if s.Burstiness != nil {
		burstiness = *s.Burstiness
		if arrival == "" {
			arrival = schema.ArrivalGamma
		}
	}
	if arrival == "" {
		arrival = schema.ArrivalPoisson
	}
	if arrival != schema.ArrivalGamma {
		burstiness = 0
	}
	return arrival, burstiness
}

// flagError is a LoadSpec mistake, said in terms of the flags; it is an
// plan.ErrPlan.
func flagError(msg string) error { return errcond.Errorf(plan.ErrPlan, "%s", msg) }

// Plan returns the normalized plan s states. Every error is a plan.ErrPlan.
func (s LoadSpec) Plan() (*Plan, error) {
	p := &Plan{
		Warmup:         s.Warmup,
		Repeats:        s.Repeats,
		RequestTimeout: schema.Duration(s.Timeout),
		MaxOutstanding: s.MaxOutstanding,
		Seed:           s.Seed,
		InputTokens:    DefaultInputTokens,
		OutputTokens:   DefaultOutputTokens,
	}
	if s.Trace != nil {
		return s.tracePlan(p)
	}
	if s.Sessions != nil {
		return s.sessionPlan(p)
	}
	s.lengths(p)
	if s.CancelFraction != 0 || s.CancelAfter != 0 {
		p.Cancel = &Cancel{Fraction: s.CancelFraction, After: schema.Duration(s.CancelAfter)}
	}
	arrival, burstiness := s.arrival()
	var loads []float64
	p.Mode = schema.ModeConcurrency
	switch {
	case len(s.Rate) > 0:
		p.Mode = schema.ModeRate
		loads = s.Rate
		// Said in the flag's words before a plan exists: the plan's own
		// check would name a point (rate--5) the user never wrote.
		for _, r := range s.Rate {
			if !(r > 0 && r <= MaxRate) {
				return nil, flagError(fmt.Sprintf("--rate %s: want a rate above 0 and at most %d requests per second", digits.Shortest(r), MaxRate))
			}
		}
	case len(s.Concurrency) > 0:
		for _, c := range s.Concurrency {
			if c < 1 {
				return nil, flagError(fmt.Sprintf("--concurrency %d: want at least 1 request in flight", c))
			}
			loads = append(loads, float64(c))
		}
	}
	// rateArrival sets the arrival of a rate point.
	rateArrival := func(pt *schema.Point) {
		if p.Mode != schema.ModeRate {
			return
		}
		pt.Arrival = arrival
		if arrival == schema.ArrivalGamma {
			pt.Burstiness = burstiness
		}
	}
	switch s.Preset {
	case "":
		if loads == nil {
			return nil, flagError("give --concurrency, --rate, --preset protocol or --plan")
		}
		if s.Requests == 0 && s.Duration == 0 {
			return nil, flagError("give --requests or --duration")
		}
		for _, l := range loads {
			pt := schema.Point{Requests: s.Requests, Duration: schema.Duration(s.Duration)}
			if p.Mode == schema.ModeRate {
				pt.Rate = l
				rateArrival(&pt)
			} else {
				pt.Concurrency = int(l)
			}
			p.Points = append(p.Points, pt)
		}
	case PresetProtocol:
		if s.InputTokens != nil || s.OutputTokens != nil || s.InputLengths != nil || s.OutputLengths != nil {
			return nil, flagError("--preset protocol sets the prompt and output lengths; drop --input-tokens/--output-tokens")
		}
		p.Points = ProtocolPoints(p.Mode, loads, s.Requests)
		for i := range p.Points {
			p.Points[i].Duration = schema.Duration(s.Duration)
			rateArrival(&p.Points[i])
		}
	default:
		return nil, flagError(fmt.Sprintf("--preset %q: the only preset is protocol", s.Preset))
	}
	if err := p.Normalize(); err != nil {
		return nil, err
	}
	return p, nil
}
