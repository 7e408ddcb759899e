package report

import (
	"math/big"
	"testing"

	"github.com/benchseal/benchseal/compare"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

// TestChangeTextShowsTheChangeWhenNotSignificant: a doubling the test
// cannot show is printed "~ +100.00%", not a bare "~" (docs/compare.md).
func TestChangeTextShowsTheChangeWhenNotSignificant(t *testing.T) {
	double := replay.Exact(big.NewRat(1, 1))
	for _, c := range []struct {
		c    compare.Comparison
		want string
	}{
		{compare.Comparison{Tested: true, Change: double}, "~ +100.00%"},
		{compare.Comparison{Tested: true, Significant: true, Change: double}, "+100.00%"},
		{compare.Comparison{Tested: true, Change: replay.Null}, "~ ?"},
		{compare.Comparison{}, "null"},
	} {
		if got := changeText(c.c); got != c.want {
			t.Errorf("%+v: %q, want %q", c.c, got, c.want)
		}
	}
}

// TestCapacityUnitNamesTheLoadMode: decide's capacity column says what it
// counts.
func TestCapacityUnitNamesTheLoadMode(t *testing.T) {
	in := func(mode string) *compare.Input {
		m := &schema.Manifest{}
		m.Load.Mode = mode
		return &compare.Input{Manifest: m}
	}
	for _, c := range []struct {
		ins  []*compare.Input
		want string
	}{
		{[]*compare.Input{in(schema.ModeConcurrency), in(schema.ModeConcurrency)}, "concurrency, requests in flight"},
		{[]*compare.Input{in(schema.ModeRate)}, "offered req/s"},
		{[]*compare.Input{in(schema.ModeRate), in(schema.ModeConcurrency)}, "offered load"},
	} {
		if got := capacityUnit(c.ins); got != c.want {
			t.Errorf("%q, want %q", got, c.want)
		}
	}
}

// TestMLPerfLineUnitsBesideTheirNumbers: the unit of the p99s follows
// them, never the reason list, and a p99 that is a
// failed query reads +∞.
func TestMLPerfLineUnitsBesideTheirNumbers(t *testing.T) {
	m := &replay.MLPerfCheck{Valid: true, TTFTP99NS: replay.Int(100e6), TPOTP99NS: replay.Int(10e6), Queries: 600}
	if got, want := mlperfLine(m), "VALID: ttft p99 100.000 ms, tpot p99 10.000 ms, over 0/0, queries 600"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	m = &replay.MLPerfCheck{TTFTP99NS: replay.Null, TTFTP99Failed: true, TPOTP99NS: replay.Int(10e6), TTFTOver: 10, TPOTOver: 10, Queries: 600, Failed: 10,
		Reasons: []string{"fewer queries than the minimum"}}
	if got, want := mlperfLine(m), "INVALID: ttft p99 +∞ (a failed query), tpot p99 10.000 ms, over 10/10, queries 600 (10 failed); fewer queries than the minimum"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}
