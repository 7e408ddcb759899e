package replay

import (
	"math"
	"math/big"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/schema"
)

// durationSyntax is time.ParseDuration's grammar without a sign: a
// string that matches it and does not parse overflows int64 nanoseconds.
var durationSyntax = regexp.MustCompile(`^(([0-9]+(\.[0-9]*)?|\.[0-9]+)(ns|us|µs|μs|ms|s|m|h))+$`)

func parseDur(s string) (int64, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil && durationSyntax.MatchString(strings.TrimSpace(s)) {
		// Well formed, so time.ParseDuration refused it for its size.
		return 0, badInput("%q is longer than the longest duration, %s", s, time.Duration(math.MaxInt64))
	}
	if err != nil || d < 0 {
		return 0, badInput("%q is not a non-negative duration like 200ms", s)
	}
	return int64(d), nil
}

func pairs(s string, f func(k, v string) error) error {
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok {
			return badInput("%q is not key=value", part)
		}
		if err := f(strings.TrimSpace(k), strings.TrimSpace(v)); err != nil {
			return err
		}
	}
	return nil
}

// ParseSLO parses "ttft=200ms,e2e=5s,tpot=50ms,one_token=fail". Unset
// limits stay nil; one_token defaults to pass. An empty list and a key
// given twice are errors.
func ParseSLO(s string) (SLOSpec, error) {
	out := SLOSpec{OneToken: schema.OneTokenPass, Source: "flag"}
	seen := map[string]bool{}
	err := pairs(s, func(k, v string) error {
		if seen[k] {
			return badInput("%s is given twice", k)
		}
		seen[k] = true
		if k == schema.SLOOneToken {
			if v != schema.OneTokenPass && v != schema.OneTokenFail {
				return badInput("%s must be pass or fail, not %q", schema.SLOOneToken, v)
			}
			out.OneToken = v
			return nil
		}
		d, err := parseDur(v)
		if err != nil {
			return err
		}
		switch k {
		case schema.SLOTTFT:
			out.TTFTNS = &d
		case schema.SLOE2E:
			out.E2ENS = &d
		case schema.SLOTPOT:
			out.TPOTNS = &d
		default:
			return badInput("unknown SLO key %q (want %s)", k, strings.Join(append(slices.Clone(schema.SLOKeys), schema.SLOOneToken), ", "))
		}
		return nil
	})
	if err == nil && len(seen) == 0 {
		err = badInput("no limits given: want key=value pairs like %s", SLOExample)
	}
	return out, err
}

// SLOExample is an SLO as ParseSLO takes it, every limit set
// ("ttft=200ms,e2e=5s,tpot=50ms"): the example help texts and errors give.
var SLOExample = SLOPairs(map[string]string{schema.SLOTTFT: "200ms", schema.SLOE2E: "5s", schema.SLOTPOT: "50ms"})

// SweepExample is a sweep as ParseSweep takes it ("ttft=50ms..2s[:steps]").
var SweepExample = schema.SLOTTFT + "=50ms..2s[:steps]"

// MLPerfExample is the limits of the MLPerf check as ParseMLPerf takes
// them ("ttft=450ms,tpot=40ms").
var MLPerfExample = SLOPairs(map[string]string{schema.SLOTTFT: "450ms", schema.SLOTPOT: "40ms"})

// SLOPairs writes limits as ParseSLO takes them, key=value pairs in
// table order, for the keys of schema.SLOKeys that limits holds:
// SLOPairs(map[string]string{schema.SLOTTFT: "200ms"}) is "ttft=200ms".
func SLOPairs(limits map[string]string) string {
	var parts []string
	for _, k := range schema.SLOKeys {
		if v, ok := limits[k]; ok {
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, ",")
}

// orList writes words as a list ending in "or": "ttft, e2e or tpot".
func orList(words []string) string {
	if len(words) < 2 {
		return strings.Join(words, "")
	}
	return strings.Join(words[:len(words)-1], ", ") + " or " + words[len(words)-1]
}

// ParseSweep parses "ttft=50ms..2s[:steps]"; without steps the limits
// are round (SweepSpec.Steps 0), and explicit steps must be 1 to 10000.
func ParseSweep(s string) (*SweepSpec, error) {
	k, v, ok := strings.Cut(s, "=")
	if !ok {
		return nil, badInput("sweep %q is not metric=FROM..TO[:STEPS]", s)
	}
	sp := &SweepSpec{Metric: strings.TrimSpace(k)}
	if rng, steps, ok := strings.Cut(v, ":"); ok {
		n, err := strconv.Atoi(steps)
		if err != nil {
			return nil, badInput("sweep steps %q is not a whole number", steps)
		}
		if n == 0 {
			// Explicit steps: at least one (0 is SweepSpec's round limits).
			return nil, badInput("sweep range %s in 0 steps: want 1 to 10000 steps", rng)
		}
		sp.Steps, v = n, rng
	}
	from, to, ok := strings.Cut(v, "..")
	if !ok {
		return nil, badInput("sweep range %q is not FROM..TO", v)
	}
	var err error
	if sp.FromNS, err = parseDur(from); err != nil {
		return nil, err
	}
	if sp.ToNS, err = parseDur(to); err != nil {
		return nil, err
	}
	return sp, sp.check()
}

// ParseMLPerf parses "ttft=450ms,tpot=40ms[,min_duration=600s,min_queries=100]".
func ParseMLPerf(s string) (*MLPerfLimits, error) {
	l := &MLPerfLimits{}
	err := pairs(s, func(k, v string) error {
		if k == "min_queries" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return badInput("min_queries %q is not a whole number ≥ 0", v)
			}
			l.MinQueries = n
			return nil
		}
		d, err := parseDur(v)
		if err != nil {
			return err
		}
		switch k {
		case schema.SLOTTFT:
			l.TTFTNS = d
		case schema.SLOTPOT:
			l.TPOTNS = d
		case "min_duration":
			l.MinDurationNS = d
		default:
			return badInput("unknown mlperf key %q", k)
		}
		return nil
	})
	if err == nil && (l.TTFTNS <= 0 || l.TPOTNS <= 0) {
		err = badInput("mlperf check needs %s and %s limits", schema.SLOTTFT, schema.SLOTPOT)
	}
	return l, err
}

// ParseSmooth parses "alpha=2.5,v=200ms,f=linear:2s".
func ParseSmooth(s string) (*SmoothParams, error) {
	p := &SmoothParams{}
	err := pairs(s, func(k, v string) error {
		switch k {
		case "alpha":
			r, ok := new(big.Rat).SetString(v)
			if !ok {
				return badInput("alpha %q is not a decimal", v)
			}
			p.Alpha = r
		case "v":
			d, err := parseDur(v)
			if err != nil {
				return err
			}
			p.VNS = d
		case "f":
			name, arg, _ := strings.Cut(v, ":")
			p.F = name
			if arg != "" {
				d, err := parseDur(arg)
				if err != nil {
					return err
				}
				p.LNS = d
			}
		default:
			return badInput("unknown smooth goodput key %q", k)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return p, p.check()
}

// ParseFraction parses a decimal such as "0.9" exactly.
func ParseFraction(s string) (*big.Rat, error) {
	r, ok := new(big.Rat).SetString(s)
	if !ok || r.Sign() < 0 || r.Cmp(big.NewRat(1, 1)) > 0 {
		return nil, badInput("%q is not a fraction in [0, 1]", s)
	}
	return r, nil
}

// badInput returns an ErrBadOption error. Its text is the message alone,
// so a caller can prefix the flag the value came from.
func badInput(format string, args ...any) error {
	return errcond.Errorf(ErrBadOption, format, args...)
}
