// The energy column's values as claim paths (energy.KEY).

package replay

import (
	"slices"

	"github.com/benchseal/benchseal/energy"
	"github.com/benchseal/benchseal/schema"
)

// EnergyKeys are the keys of energy.KEY claim paths (schema.ClaimEnergyKeys).
var EnergyKeys = schema.ClaimEnergyKeys

// Field returns the energy.KEY value of the column (the interpolated
// value, or a bound for joules_lo and joules_hi) and why it is null;
// ok is false for a key that is not one of EnergyKeys.
func (c *EnergyColumn) Field(key string) (v Value, reason string, ok bool) {
	var b energy.Bounded
	pick := func(x energy.Bounded) float64 { return x.Value }
	switch key {
	case "energy_j":
		b = c.Energy
	case "energy_j_lo":
		b, pick = c.Energy, func(x energy.Bounded) float64 { return x.Lo }
	case "energy_j_hi":
		b, pick = c.Energy, func(x energy.Bounded) float64 { return x.Hi }
	case "mean_power_w":
		b = c.MeanPower
	case "j_per_output_token":
		b = c.PerOutputToken
	case "j_per_good_token":
		b = c.PerGoodToken
	case "j_per_good_request":
		b = c.PerGoodRequest
	case "energy_cost":
		b = c.Cost
	default:
		return Null, "", false
	}
	switch {
	case c.Reason != "":
		return Null, c.Reason, true
	case b.Reason != "":
		return Null, b.Reason, true
	}
	return Float(pick(b)), "", true
}

// energyLookup resolves energy.KEY on p: null with the reason when the
// run stored no accelerator scrapes.
func (p *PointResult) energyLookup(key string) (Value, string, bool) {
	if p.Energy == nil {
		if !slices.Contains(EnergyKeys, key) {
			return Null, "", false
		}
		return Null, "no accelerator scrapes: the run did not measure energy (capture --gpu-metrics)", true
	}
	return p.Energy.Field(key)
}
