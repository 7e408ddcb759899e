package replay

import (
	"math"

	"github.com/benchseal/benchseal/schema"
)

// The SLO rule, stated once: the canonical definitions' help, replay's
// and compare's CLI help and the tables of docs/metrics.md and
// docs/replay.md are generated from these (TestDefinitionsInSync).
const (
	// GoodRequestRule says which request is good.
	GoodRequestRule = "status ok, ≥ 1 content chunk, ttft ≤ T_ttft, e2e ≤ T_e2e, tpot ≤ T_tpot (inclusive; tpot compared as L−F ≤ T·(n−1)); " +
		"a one-token answer passes a TPOT limit unless `one_token: fail`; a limit whose metric the request did not measure leaves it unjudged (neither good nor a miss), and goodput, counts.good and SLO attainment are null with the reason"
	// GoodputRule says what goodput divides.
	GoodputRule = "good requests (their output tokens) × 10⁹ ÷ window — the same elapsed window as the throughputs, so a repeat in which every request failed has goodput 0, not null; " +
		"null when no SLO is set, or with the window's reason"
	// AttainmentRule says what SLO attainment divides.
	AttainmentRule = "good ÷ declared measured requests (sent, plus declared without a record; failures and missing requests are misses), good ÷ ok"
)

// Verdict is one request's outcome under an SLO.
type Verdict int

const (
	// Pass: every limit is met.
	Pass Verdict = iota
	// Fail: some limit is missed (failures win over unknowns).
	Fail
	// Unknown: no limit is missed, but some limit's metric was not
	// measured for the request, so it cannot be judged.
	Unknown
)

// Measure is one metric of one request as an SLO limit reads it: an
// exact number of nanoseconds (a fraction), a float64 number of
// nanoseconds (the peer definitions compute in float64), or not measured.
type Measure struct {
	kind     uint8
	num, den int64
	f        float64
}

const (
	notMeasured uint8 = iota
	exactKind
	floatKind
)

// ExactNS is a metric of num/den ns (den > 0), compared exactly.
func ExactNS(num, den int64) Measure { return Measure{kind: exactKind, num: num, den: den} }

// FloatNS is a metric of v ns in float64; NaN is a value the source did
// not store (not measured).
func FloatNS(v float64) Measure {
	if math.IsNaN(v) {
		return Measure{}
	}
	return Measure{kind: floatKind, f: v}
}

// NotMeasured is a metric the request did not measure.
var NotMeasured = Measure{}

// Measured reports whether the metric was measured.
func (m Measure) Measured() bool { return m.kind != notMeasured }

// within judges the measure against an inclusive limit of limit ns.
func (m Measure) within(limit int64) Verdict {
	switch m.kind {
	case exactKind:
		if cmpFrac(frac{m.num, m.den}, frac{limit, 1}) <= 0 {
			return Pass
		}
		return Fail
	case floatKind:
		if m.f <= float64(limit) {
			return Pass
		}
		return Fail
	}
	return Unknown
}

// Observed is what one successful request measured for an SLO.
type Observed struct {
	TTFT, E2E, TPOT Measure
	// OneToken says the answer has fewer than two tokens, so it has no
	// TPOT: the one-token policy decides a TPOT limit.
	OneToken bool
}

// metric returns the measure SLO limit name limits (one of
// schema.SLOKeys).
func (o *Observed) metric(name string) Measure {
	switch name {
	case schema.SLOTTFT:
		return o.TTFT
	case schema.SLOE2E:
		return o.E2E
	}
	return o.TPOT
}

// Judgement is a verdict with the limit that decided it: the first limit
// missed (Fail) or the first whose metric was not measured (Unknown); ""
// for Pass.
type Judgement struct {
	Verdict Verdict
	Limit   string
}

// Reason says why the verdict is what it is.
func (j Judgement) Reason() string {
	switch j.Verdict {
	case Fail:
		return j.Limit + " above its limit"
	case Unknown:
		return j.Limit + " not measured: its limit cannot be judged"
	}
	return "every limit met"
}

// Judge applies s to one successful request: Fail when some limit is
// missed, else Unknown when some limit's metric was not measured, else
// Pass. With no limit set every request passes.
func (s SLOSpec) Judge(o Observed) Judgement {
	return s.judge(o, "")
}

// judgeSwept is Judge with the limit on the swept metric (one of
// schema.SLOKeys) lifted: a sweep replaces it with each of its limits, so only
// whether that metric was measured (or, for a one-token answer's TPOT,
// the one-token policy) counts.
func (s SLOSpec) judgeSwept(o Observed, metric string) Judgement {
	return s.judge(o, metric)
}

func (s SLOSpec) judge(o Observed, swept string) Judgement {
	j := Judgement{Verdict: Pass}
	note := func(limit string, v Verdict) bool {
		switch {
		case v == Fail:
			j = Judgement{Verdict: Fail, Limit: limit}
			return true
		case v == Unknown && j.Verdict == Pass:
			j = Judgement{Verdict: Unknown, Limit: limit}
		}
		return false
	}
	if note(schema.SLOTTFT, limitVerdict(o.TTFT, s.TTFTNS, swept == schema.SLOTTFT)) ||
		note(schema.SLOE2E, limitVerdict(o.E2E, s.E2ENS, swept == schema.SLOE2E)) {
		return j
	}
	tpot := swept == schema.SLOTPOT
	if (s.TPOTNS != nil || tpot) && o.OneToken {
		if s.OneToken != schema.OneTokenPass {
			note(schema.SLOTPOT, Fail)
		}
		return j
	}
	note(schema.SLOTPOT, limitVerdict(o.TPOT, s.TPOTNS, tpot))
	return j
}

// limitVerdict judges m against limit; no limit passes; a swept limit
// passes whatever was measured.
func limitVerdict(m Measure, limit *int64, swept bool) Verdict {
	switch {
	case swept:
		if m.Measured() {
			return Pass
		}
		return Unknown
	case limit == nil:
		return Pass
	}
	return m.within(*limit)
}
