package report

import (
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// TestOneMillisecondRule: report's ms figures follow internal/digits
// (half to even from the exact ns), the rule replay's reason texts use.
func TestOneMillisecondRule(t *testing.T) {
	for ns, want := range map[float64]string{370050500: "370.050 ms", 2500: "0.002 ms", 3500: "0.004 ms"} {
		if got := MillisecondsText(ns); got != want {
			t.Errorf("MillisecondsText(%v) = %q, want %q", ns, got, want)
		}
	}
}

// TestRatesHaveOnePrecision: compare and decide print a rate with the
// digits replay's tables print it with (941.6 tok/s in compare beside
// 946.095 in replay was two values for one thing).
func TestRatesHaveOnePrecision(t *testing.T) {
	for _, m := range schema.Metrics {
		if m.Kind != schema.MetricScalar || (m.Unit != "req/s" && m.Unit != "tok/s") {
			continue
		}
		if got := nameOf(m.Name, "").Places; got != ratePlaces {
			t.Errorf("compare prints %s with %d places, replay with %d", m.Name, got, ratePlaces)
		}
	}
}
