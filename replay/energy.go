// The accelerator energy of each point × repeat over its measurement
// window, from the stored accelerator scrapes (manifest.gpu_metrics).

package replay

import (
	"cmp"
	"math/big"
	"slices"

	"github.com/benchseal/benchseal/energy"
	"github.com/benchseal/benchseal/schema"
)

// EnergyColumn is the accelerator energy of one point × repeat over the
// same window as its throughput (first send to last end), from the
// exporters' scrapes around it (package energy: bounds, interpolation,
// null reasons). Every number is of Boundary, never wall power.
type EnergyColumn struct {
	// Boundary says what the energy covers (energy.Boundary).
	Boundary string
	// Method is energy.MethodCounter, or energy.MethodPowerEstimate when
	// no counter was scraped (Estimate).
	Method   string
	Estimate bool
	// Devices are the accelerators counted ("endpoint:id").
	Devices []string
	// WindowStartNS is the window's start on the run's clock, WindowNS
	// its length.
	WindowStartNS, WindowNS int64
	// Energy (J), MeanPower (W), and the energy per output token, per
	// output token of requests the SLO judge passed, and per such
	// request (J); each with its bounds, or null with the reason.
	Energy, MeanPower                            energy.Bounded
	PerOutputToken, PerGoodToken, PerGoodRequest energy.Bounded
	// Cost is the energy priced at the manifest's cost.price_per_kwh
	// (in Currency); null without a price.
	Cost     energy.Bounded
	Currency string
	// PeakUtilPct and PeakMemBytes are the busiest device's utilization
	// and memory in use over the scrapes inside the window; nil when not
	// scraped.
	PeakUtilPct, PeakMemBytes *float64
	// Power is the total power of each endpoint's devices at each stored
	// scrape of the point (the chart of power over time).
	Power []PowerAt
	// Reason, when set, says why there is no column at all.
	Reason string
}

// PowerAt is one endpoint's total scraped power at one scrape.
type PowerAt struct {
	Endpoint int
	// AtNS is the scrape's midpoint on the run's clock.
	AtNS int64
	W    float64
}

// EnergyPriceLabel says what the energy cost is.
const EnergyPriceLabel = "the measured accelerator energy of the window at the declared cost.price_per_kwh: not the machine's, the cooling's or the facility's energy"

// addEnergyColumns sets PointResult.Energy for every result of a run
// whose manifest indexes accelerator scrapes.
func addEnergyColumns(run schema.Run, m *schema.Manifest, results []*PointResult) error {
	g := m.GPUMetrics
	if g == nil {
		return nil
	}
	var price *big.Rat
	if m.Cost != nil && m.Cost.PricePerKWh != "" {
		p, ok := new(big.Rat).SetString(m.Cost.PricePerKWh)
		if !ok || p.Sign() < 0 {
			return badInput("replay: manifest cost.price_per_kwh %q is not a non-negative decimal", m.Cost.PricePerKWh)
		}
		price = p
	}
	op, _ := run.(AttachmentOpener)
	for _, p := range results {
		p.Energy = energyColumn(op, g, p, price)
		if p.Energy.Reason == "" && m.Cost != nil {
			p.Energy.Currency = m.Cost.Currency
		}
	}
	return nil
}

func energyColumn(op AttachmentOpener, g *schema.GPUMetrics, p *PointResult, price *big.Rat) *EnergyColumn {
	switch {
	case op == nil:
		return &EnergyColumn{Reason: "the run's attachments are not available to replay"}
	case p.window == nil:
		return &EnergyColumn{Reason: "the point's window is not one measured from its records on the run's clock"}
	}
	from, to := p.window[0], p.window[1]
	per, err := energy.PointSamples(g, op.ReadAttachment, p.Point, p.Repeat)
	if err != nil {
		return &EnergyColumn{Reason: err.Error()}
	}
	rs := make([]energy.Result, len(per))
	var power []PowerAt
	for i, s := range per {
		rs[i] = energy.Compute(s, from, to)
		power = append(power, powerSeries(i, s)...)
	}
	r := energy.Sum(rs)
	c := &EnergyColumn{Boundary: energy.Boundary(r.Exporter), Method: r.Method, Estimate: r.Estimate, Devices: r.Devices,
		WindowStartNS: from, WindowNS: to - from, Energy: r.Energy, MeanPower: r.MeanPower(), PeakUtilPct: r.PeakUtilPct, PeakMemBytes: r.PeakMemBytes, Power: power}
	if g.AgeUnknown() {
		c.Method += "; " + schema.AgeUnknownNote
	}
	out, _ := p.OutputTokens.Float64()
	if !p.OutputTokens.IsExact() {
		c.PerOutputToken = energy.Null("output tokens not measured: " + p.OutputTokensNullReason)
	} else {
		c.PerOutputToken = r.Energy.Per(out, "output tokens")
	}
	if p.goodTokens == nil {
		c.PerGoodToken = energy.Null("no SLO set: no request is judged good")
		c.PerGoodRequest = c.PerGoodToken
	} else {
		gt, _ := new(big.Float).SetInt(p.goodTokens).Float64()
		c.PerGoodToken = r.Energy.Per(gt, "good tokens")
		c.PerGoodRequest = r.Energy.Per(float64(p.Counts.Good), "good requests")
	}
	if price == nil {
		c.Cost = energy.Null("no cost.price_per_kwh declared")
	} else {
		k, _ := new(big.Rat).Quo(price, big.NewRat(3_600_000, 1)).Float64()
		c.Cost = r.Energy.Scale(k)
	}
	return c
}

// powerSeries is endpoint i's total scraped power at each of its samples
// that holds every device's power.
func powerSeries(i int, samples []energy.Sample) []PowerAt {
	var out []PowerAt
	for _, s := range samples {
		if s.Scrape == nil {
			continue
		}
		w, ok := 0.0, true
		ids := s.Scrape.Measuring()
		for _, id := range ids {
			d := s.Scrape.Devices[id]
			if d.PowerW == nil {
				ok = false
				break
			}
			w += *d.PowerW
		}
		if ok && len(ids) > 0 {
			out = append(out, PowerAt{Endpoint: i, AtNS: s.FromNS + (s.AtNS-s.FromNS)/2, W: w})
		}
	}
	slices.SortStableFunc(out, func(a, b PowerAt) int { return cmp.Compare(a.AtNS, b.AtNS) })
	return out
}

// EnergySummaryKeys are the energy numbers summarised across repeats, in
// output order (the JSON keys of the energy column).
var EnergySummaryKeys = []string{"energy_j", "mean_power_w", "j_per_output_token", "j_per_good_token", "j_per_good_request"}

// EnergyValue returns the central value of one of EnergySummaryKeys of
// c, as a Value (Null when not measured).
func EnergyValue(c *EnergyColumn, key string) Value {
	if c == nil || c.Reason != "" {
		return Null
	}
	var b energy.Bounded
	switch key {
	case "energy_j":
		b = c.Energy
	case "mean_power_w":
		b = c.MeanPower
	case "j_per_output_token":
		b = c.PerOutputToken
	case "j_per_good_token":
		b = c.PerGoodToken
	case "j_per_good_request":
		b = c.PerGoodRequest
	default:
		return Null
	}
	if b.Reason != "" {
		return Null
	}
	return Float(b.Value)
}

// summariseEnergy sets PointSummary.Energy: the median and its interval
// across repeats of each key's central value, by SummarizeValues (a
// repeat without the number, or never run, makes it null, as for every
// other summary).
func summariseEnergy(sums []PointSummary, results []*PointResult, repeats int) {
	for i := range sums {
		ps := &sums[i]
		ps.Energy = map[string]Summary{}
		var of []*PointResult
		n := 0
		for _, r := range results {
			if r.Point == ps.Point {
				n++
				of = append(of, r)
			}
		}
		for _, k := range EnergySummaryKeys {
			var vals []Value
			for _, r := range Independent(of) {
				vals = append(vals, EnergyValue(r.Energy, k))
			}
			for range repeats - n {
				vals = append(vals, Null)
			}
			ps.Energy[k] = SummarizeValues(vals, CIConfidence)
		}
	}
}
