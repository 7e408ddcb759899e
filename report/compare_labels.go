package report

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"

	"github.com/benchseal/benchseal/compare"
	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

// metricName is how a compared metric reads to a person: its name, its
// unit, the scale from the stored unit and the decimals shown.
type metricName struct {
	Name, Unit string
	Scale      *big.Rat
	Places     int
	// JSONUnit is the unit of the raw values in JSON.
	JSONUnit string
	// ValueUnit, when set, is the unit printed beside a single value
	// ("2.5 USD per 1M good tokens") where Unit is the header's.
	ValueUnit string
}

// valueUnit is the unit to print beside one value of the metric.
func (m metricName) valueUnit() string {
	if m.ValueUnit != "" {
		return m.ValueUnit
	}
	return m.Unit
}

// Header is "TTFT p50 (ms)".
func (m metricName) Header() string { return m.Name + " (" + m.Unit + ")" }

// distNames are the canonical distributions' labels (schema.Metrics).
var distNames = func() map[string]string {
	out := map[string]string{}
	for _, m := range schema.Metrics {
		if m.Kind == schema.MetricDistribution {
			out[m.Name] = m.Label
		}
	}
	return out
}()

// nameOf returns the human name and unit of a metric path.
func nameOf(path, currency string) metricName {
	if head, q, ok := strings.Cut(path, "."); ok {
		if n, ok := distNames[head]; ok {
			return metricName{n + " " + q, "ms", nsToMS, 3, "ns", ""}
		}
	}
	switch path {
	case schema.MetricRequestThroughput:
		return metricName{schema.MetricLabel(path), "req/s", one, ratePlaces, schema.MetricUnit(path), ""}
	case schema.MetricOutputTokenThroughput:
		return metricName{schema.MetricLabel(path), "tok/s", one, ratePlaces, schema.MetricUnit(path), ""}
	case schema.MetricGoodput:
		return metricName{schema.MetricLabel(path), "req/s", one, ratePlaces, schema.MetricUnit(path), ""}
	case schema.MetricTokenGoodput:
		return metricName{schema.MetricLabel(path), "tok/s", one, ratePlaces, schema.MetricUnit(path), ""}
	case schema.MetricSLOAttainment:
		return metricName{schema.MetricLabel(path), "% of declared", hundred, 2, "fraction", ""}
	case schema.MetricWindow:
		return metricName{schema.MetricLabel(path), "ms", nsToMS, 3, schema.MetricUnit(path), ""}
	case schema.MetricSmoothGoodput:
		return metricName{schema.MetricLabel(path), "tok/s", one, ratePlaces, schema.MetricUnit(path), ""}
	case schema.MetricTotalTokenThroughput:
		return metricName{schema.MetricLabel(path), "tok/s", one, ratePlaces, schema.MetricUnit(path), ""}
	case schema.MetricSLOAttainmentOK:
		return metricName{schema.MetricLabel(path), "% of ok", hundred, 2, "fraction", ""}
	case replay.CostPerMillionOutputTokens:
		return metricName{schema.MetricLabel(path), currency, one, 4, currency, ""}
	case replay.CostPerMillionGoodTokens:
		// The price behind it is the publisher's declared one
		// (cost.price_per_hour), never measured: the header says so.
		c := currency
		if c == "" {
			c = "currency not stated"
		}
		u := "per 1M good tokens, currency not stated"
		if currency != "" {
			u = currency + " per 1M good tokens"
		}
		return metricName{Name: schema.MetricLabel(path), Unit: c + ", at the declared price", Scale: one, Places: 4, JSONUnit: u, ValueUnit: u}
	case "capacity":
		return metricName{"Capacity", "offered load", one, 3, "offered load", ""}
	case compare.EnergyPerGoodToken:
		// Accelerator board energy (the exporters' counters), not wall
		// power: docs/energy.md.
		return metricName{"Accelerator energy per good token", "J", one, 4, "J", ""}
	case compare.EnergyPerOutputToken:
		return metricName{"Accelerator energy per output token", "J", one, 4, "J", ""}
	case compare.EnergyMeanPower:
		return metricName{"Mean accelerator power", "W", one, 1, "W", ""}
	}
	return metricName{path, "", one, 3, "", ""}
}

// inputLabel is A, B, C, … for the measured inputs.
func inputLabel(i int) string {
	if i < 26 {
		return string(rune('A' + i))
	}
	return "I" + strconv.Itoa(i+1)
}

// currencyOf is the one currency the inputs state (compare.Currency),
// "" when none or several.
func currencyOf(ins []*compare.Input) string {
	c := ""
	for _, in := range ins {
		if k := compare.Currency(in); k != "" {
			if c != "" && c != k {
				return ""
			}
			c = k
		}
	}
	return c
}

// verificationLine says how an input was checked, in one line.
func verificationLine(v compare.Verification) string {
	switch v.Status {
	case compare.Verified:
		s := "verified, signed by " + strings.Join(v.Keys, ", ")
		if v.BundleDigest != "" {
			s += "; bundle " + v.BundleDigest
		}
		return s
	case compare.Unsigned:
		s := "UNSIGNED (--allow-unsigned): integrity checked, NOTHING AUTHENTICATED"
		if v.BundleDigest != "" {
			s += "; bundle " + v.BundleDigest
		}
		return s
	case compare.RunDirectory:
		return "run directory: validated, not signed (nothing authenticated)"
	case compare.NotChecked:
		return "not checked here: replay reads the run as given (benchseal verify BUNDLE --key KEY checks signatures and claims)"
	}
	return v.Status
}

// delta is benchstat's change column: "~" when not significant, else the
// relative change with its sign, "?" when undefined.
func delta(c compare.Comparison) string {
	if !c.Tested {
		return "null"
	}
	if !c.Significant {
		return "~"
	}
	return signedChange(c)
}

// signedChange is the relative change of the medians, "+12.50%", or "?"
// when undefined.
func signedChange(c compare.Comparison) string {
	if c.Change.IsNull() {
		return "?"
	}
	s := Decimal(c.Change, hundred, 2)
	if !strings.HasPrefix(s, "-") {
		s = "+" + s
	}
	return s + "%"
}

// changeText is the text report's change column: the relative change of
// the medians always (docs/compare.md), marked "~" when the test found no
// significant difference; "null" when not tested.
func changeText(c compare.Comparison) string {
	if c.Tested && !c.Significant {
		return "~ " + signedChange(c)
	}
	return delta(c)
}

// pText is "p=0.00794 n=6+6" as benchstat lays it out, the p-value's
// digits those of decide's (digits.PValue).
func pText(c compare.Comparison, holm bool) string {
	if !c.Tested {
		return ""
	}
	s := "p=" + digits.PValue(c.P)
	if holm {
		s += " (Holm " + digits.PValue(c.PAdjusted) + ")"
	}
	return s + " n=" + strconv.Itoa(c.Base.Summary.N) + "+" + strconv.Itoa(c.Patch.Summary.N)
}

// sideText is "41.2 [38.0, 44.1]", or "null" when undefined.
func sideText(s compare.Side, mn metricName) string {
	if s.Summary.N == 0 {
		return "null"
	}
	return Decimal(s.Summary.Median, mn.Scale, mn.Places) + " " + intervalText(s.Summary, func(v replay.Value) string { return Decimal(v, mn.Scale, mn.Places) })
}

// intervalText prints a summary's interval "[lo, hi]", "[-, -]" when it
// has none, and never half of one: with one bound only (5 repeats bound
// a median from above at 95 %, not from below) it names the bound it has
// and why the other is missing.
func intervalText(s replay.Summary, f func(replay.Value) string) string {
	lo, hi := s.CILow.IsNull(), s.CIHigh.IsNull()
	switch {
	case lo == hi:
		return "[" + f(s.CILow) + ", " + f(s.CIHigh) + "]"
	case lo:
		return fmt.Sprintf("(at most %s; no lower bound from %d repeats)", f(s.CIHigh), s.N)
	}
	return fmt.Sprintf("(at least %s; no upper bound from %d repeats)", f(s.CILow), s.N)
}
