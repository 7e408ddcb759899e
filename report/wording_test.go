package report

import (
	"math/big"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/compare"
	"github.com/benchseal/benchseal/replay"
)

// TestCostMarginReadsTheRightWay: the cheaper configuration's margin
// says it costs less, by how much, and how much more the other pays; a
// price without a currency says so.
func TestCostMarginReadsTheRightWay(t *testing.T) {
	d := &compare.Decision{Objective: compare.MinCostPerGoodToken, Best: 1, RunnerUp: 0, Margin: replay.Exact(big.NewRat(6097, 10000))}
	if got, want := costMargin(d, "costs"), "margin: B costs 37.88 % less per good token than A (A costs 60.97 % more)"; got != want {
		t.Errorf("costMargin = %q, want %q", got, want)
	}
	if got := priceText(&replay.CostSpec{Text: "10.5"}); got != "10.5 (currency not stated)" {
		t.Errorf("priceText without currency = %q", got)
	}
	if got := priceText(&replay.CostSpec{Text: "10.5", Currency: "USD"}); got != "10.5 USD" {
		t.Errorf("priceText = %q", got)
	}
	if u := nameOf(replay.CostPerMillionGoodTokens, "").Header(); !strings.Contains(u, "currency not stated") {
		t.Errorf("cost header without currency: %q", u)
	}
	// The cost header names what it is, the currency, and that the price
	// is the publisher's declared one; a single value carries its unit.
	usd := nameOf(replay.CostPerMillionGoodTokens, "USD")
	if got, want := usd.Header(), "Cost per 1M good tokens (USD, at the declared price)"; got != want {
		t.Errorf("cost header = %q, want %q", got, want)
	}
	if got, want := usd.valueUnit(), "USD per 1M good tokens"; got != want {
		t.Errorf("cost value unit = %q, want %q", got, want)
	}
}

// TestNegativeBacklogText: the completions row explains a negative
// backlog and says nothing more of a positive one.
func TestNegativeBacklogText(t *testing.T) {
	if s := negativeBacklog(&replay.Overload{Arrivals: 39, Completions: 41}); !strings.Contains(s, "negative: 2 more ends than arrivals") {
		t.Errorf("negative backlog: %q", s)
	}
	if s := negativeBacklog(&replay.Overload{Arrivals: 39, Completions: 39}); s != "" {
		t.Errorf("zero backlog: %q", s)
	}
}
