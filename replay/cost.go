package replay

import (
	"math/big"

	"github.com/benchseal/benchseal/schema"
)

// Cost keys of a point result: what a million output tokens, and a million
// output tokens of requests meeting the SLO, cost at the manifest's price
// per hour over the measurement window.
const (
	CostPerMillionOutputTokens = schema.MetricCostPerMillionOutput
	CostPerMillionGoodTokens   = schema.MetricCostPerMillionGood
)

// CostSpec is the price a run states (manifest cost), as an exact
// rational per hour.
type CostSpec struct {
	Currency     string
	PricePerHour *big.Rat
	// Text is the price as written in the manifest.
	Text string
}

// costFromManifest returns the run's price per hour, or nil when it states
// none. A price that is not a non-negative decimal is an error.
func costFromManifest(c *schema.Cost) (*CostSpec, error) {
	if c == nil || c.PricePerHour == "" {
		return nil, nil
	}
	p, ok := new(big.Rat).SetString(c.PricePerHour)
	if !ok || p.Sign() < 0 {
		return nil, badInput("replay: manifest cost.price_per_hour %q is not a non-negative decimal", c.PricePerHour)
	}
	return &CostSpec{Currency: c.Currency, PricePerHour: p, Text: c.PricePerHour}, nil
}

// addCost sets the cost keys of pr: price/h × 10⁶ ÷ (3600 × tokens/s),
// which is the price of the window divided by the tokens in it, per
// million. Null without a price, without tokens, or for a throughput that
// is not exact.
func addCost(pr *PointResult, c *CostSpec) {
	per := func(throughput Value) Value {
		if c == nil || !throughput.IsExact() || throughput.Rat().Sign() <= 0 {
			return Null
		}
		v := new(big.Rat).Mul(c.PricePerHour, big.NewRat(1_000_000, 3600))
		return Exact(v.Quo(v, throughput.Rat()))
	}
	pr.Scalars[CostPerMillionOutputTokens] = per(pr.Scalars[schema.MetricOutputTokenThroughput])
	pr.Scalars[CostPerMillionGoodTokens] = per(pr.Scalars[schema.MetricTokenGoodput])
}
