package report

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/benchseal/benchseal/energy"
	"github.com/benchseal/benchseal/replay"
)

// energyRows prints a point's accelerator energy column (nil: the run
// stored no accelerator scrapes) as rows of their own, each number with
// its bounds and the boundary it is of.
func energyRows(p *replay.PointResult) []row {
	c := p.Energy
	if c == nil {
		return nil
	}
	if c.Reason != "" {
		return []row{{"energy", NullText(c.Reason), ""}}
	}
	est := ""
	if c.Estimate {
		est = "ESTIMATE "
	}
	// A null prints its reason and no unit; every energy is in J, as
	// the summary across repeats prints it.
	num := func(name string, b energy.Bounded, u string) row {
		if b.Reason != "" {
			return row{name, NullText(b.Reason), ""}
		}
		return row{name, est + boundedText(b, 1), u + " (" + c.Boundary + ")"}
	}
	out := []row{
		{"energy boundary", fmt.Sprintf("%s; %d devices counted (%s); %s; %s", c.Boundary, len(c.Devices), deviceList(c.Devices), c.Method, energy.Interpolation), ""},
		num("energy", c.Energy, "J"),
		num("mean power", c.MeanPower, "W"),
		num("energy per output token", c.PerOutputToken, "J"),
		num("energy per good token", c.PerGoodToken, "J"),
		num("energy per good request", c.PerGoodRequest, "J"),
	}
	if c.Cost.Reason == "" {
		out = append(out, row{"energy cost", est + moneyText(c.Cost), energyCurrency(c.Currency) + ", " + replay.EnergyPriceLabel + " (" + c.Boundary + ")"})
	}
	peak := func(name string, v *float64, scale float64, u string) row {
		if v == nil {
			return row{name, NullText("not scraped inside the window"), ""}
		}
		return row{name, sig(*v * scale), u + " (busiest device, scrapes inside the window)"}
	}
	return append(out, peak("peak utilization", c.PeakUtilPct, 1, "%"), peak("peak memory", c.PeakMemBytes, 1.0/(1<<20), "MiB"))
}

// moneyPlaces are the decimals an energy cost prints with: a
// point's energy costs fractions of a cent.
const moneyPlaces = 6

// moneyText prints a bounded cost in fixed decimals, "v [lo, hi]".
func moneyText(b energy.Bounded) string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'f', moneyPlaces, 64) }
	return fmt.Sprintf("%s [%s, %s]", f(b.Value), f(b.Lo), f(b.Hi))
}

func energyCurrency(c string) string {
	if c == "" {
		return "currency not stated"
	}
	return c
}

func deviceList(ids []string) string {
	const most = 4
	if len(ids) <= most {
		return joinComma(ids)
	}
	return joinComma(ids[:most]) + fmt.Sprintf(", … %d more", len(ids)-most)
}

func joinComma(s []string) string {
	out := ""
	for i, v := range s {
		if i > 0 {
			out += ", "
		}
		out += v
	}
	return out
}

// boundedText prints a bounded number times scale: "v [lo, hi]", or
// NullText.
func boundedText(b energy.Bounded, scale float64) string {
	if b.Reason != "" {
		return NullText(b.Reason)
	}
	return fmt.Sprintf("%s [%s, %s]", sig(b.Value*scale), sig(b.Lo*scale), sig(b.Hi*scale))
}

// sig prints v with five significant digits.
func sig(v float64) string { return strconv.FormatFloat(v, 'g', 5, 64) }

// energyBoundedJSON is a bounded number as JSON: value, lo, hi (null with
// the reason when not measured).
type energyBoundedJSON struct {
	Value  *float64 `json:"value"`
	Lo     *float64 `json:"lo"`
	Hi     *float64 `json:"hi"`
	Reason string   `json:"reason,omitempty"`
}

func boundedJSON(b energy.Bounded) energyBoundedJSON {
	if b.Reason != "" {
		return energyBoundedJSON{Reason: b.Reason}
	}
	return energyBoundedJSON{Value: &b.Value, Lo: &b.Lo, Hi: &b.Hi}
}

// energyJSON is a point's energy column as JSON.
func energyJSON(c *replay.EnergyColumn) string {
	type powerAt struct {
		Endpoint int     `json:"endpoint"`
		AtNS     int64   `json:"at_ns"`
		W        float64 `json:"w"`
	}
	var pw []powerAt
	for _, p := range c.Power {
		pw = append(pw, powerAt{p.Endpoint, p.AtNS, p.W})
	}
	v := struct {
		Reason         string             `json:"reason,omitempty"`
		Boundary       string             `json:"boundary,omitempty"`
		Method         string             `json:"method,omitempty"`
		Estimate       bool               `json:"estimate"`
		Interpolation  string             `json:"interpolation,omitempty"`
		Devices        []string           `json:"devices"`
		WindowNS       int64              `json:"window_ns"`
		EnergyJ        *energyBoundedJSON `json:"energy_j,omitempty"`
		MeanPowerW     *energyBoundedJSON `json:"mean_power_w,omitempty"`
		PerOutputToken *energyBoundedJSON `json:"j_per_output_token,omitempty"`
		PerGoodToken   *energyBoundedJSON `json:"j_per_good_token,omitempty"`
		PerGoodRequest *energyBoundedJSON `json:"j_per_good_request,omitempty"`
		Cost           *energyBoundedJSON `json:"energy_cost,omitempty"`
		Currency       string             `json:"currency,omitempty"`
		PeakUtilPct    *float64           `json:"peak_util_pct"`
		PeakMemBytes   *float64           `json:"peak_memory_bytes"`
		Power          []powerAt          `json:"power_w,omitempty"`
	}{Reason: c.Reason, Devices: c.Devices, PeakUtilPct: c.PeakUtilPct, PeakMemBytes: c.PeakMemBytes}
	if v.Devices == nil {
		v.Devices = []string{}
	}
	if c.Reason == "" {
		b := func(x energy.Bounded) *energyBoundedJSON { j := boundedJSON(x); return &j }
		v.Boundary, v.Method, v.Estimate, v.Interpolation, v.WindowNS = c.Boundary, c.Method, c.Estimate, energy.Interpolation, c.WindowNS
		v.EnergyJ, v.MeanPowerW, v.PerOutputToken, v.PerGoodToken, v.PerGoodRequest, v.Cost = b(c.Energy), b(c.MeanPower), b(c.PerOutputToken), b(c.PerGoodToken), b(c.PerGoodRequest), b(c.Cost)
		v.Currency, v.Power = c.Currency, pw
	}
	out, err := json.Marshal(v)
	if err != nil {
		// Only a NaN or an infinity fails; energy admits neither.
		return `{"reason":"not representable in JSON"}`
	}
	return string(out)
}

// energyCSV lists a point's energy column as CSV metric/value pairs, and
// the reason of each null one: each key is "energy." and the number's
// JSON name (energyJSON).
func energyCSV(c *replay.EnergyColumn) [][2]string {
	if c == nil {
		return nil
	}
	if c.Reason != "" {
		return [][2]string{{"null_reason.energy", c.Reason}}
	}
	out := [][2]string{{"energy.boundary", c.Boundary}, {"energy.method", c.Method}, {"energy.devices", strconv.Itoa(len(c.Devices))}}
	num := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	for _, f := range []struct {
		k string
		b energy.Bounded
	}{{"energy.energy_j", c.Energy}, {"energy.mean_power_w", c.MeanPower}, {"energy.j_per_output_token", c.PerOutputToken},
		{"energy.j_per_good_token", c.PerGoodToken}, {"energy.j_per_good_request", c.PerGoodRequest}, {"energy.energy_cost", c.Cost}} {
		if f.b.Reason != "" {
			out = append(out, [2]string{"null_reason." + f.k, f.b.Reason})
			continue
		}
		n := num
		if f.k == "energy.energy_cost" {
			n = func(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) } // money: never an exponent
		}
		out = append(out, [2]string{f.k, n(f.b.Value)}, [2]string{f.k + ".lo", n(f.b.Lo)}, [2]string{f.k + ".hi", n(f.b.Hi)})
	}
	for _, f := range []struct {
		k string
		v *float64
	}{{"energy.peak_util_pct", c.PeakUtilPct}, {"energy.peak_memory_bytes", c.PeakMemBytes}} {
		if f.v == nil {
			out = append(out, [2]string{"null_reason." + f.k, "not scraped inside the window"})
		} else {
			out = append(out, [2]string{f.k, num(*f.v)})
		}
	}
	return out
}

// energySummaryKeys are the energy keys summarised for ps (none when the
// run stored no accelerator scrapes).
func energySummaryKeys(ps replay.PointSummary) []string {
	if ps.Energy == nil {
		return nil
	}
	return replay.EnergySummaryKeys
}

func energySummaryName(k string) string {
	switch k {
	case "energy_j":
		return "energy"
	case "mean_power_w":
		return "mean power"
	case "j_per_output_token":
		return "energy per output token"
	case "j_per_good_token":
		return "energy per good token"
	}
	return "energy per good request"
}

// energySummaryUnit is the unit of an energy summary with the boundary of
// the point's first repeat that has one.
func energySummaryUnit(r *replay.Result, point, k string) string {
	u := "J"
	if k == "mean_power_w" {
		u = "W"
	}
	for _, p := range r.Results {
		if p.Point == point && p.Energy != nil && p.Energy.Boundary != "" {
			return u + " (" + p.Energy.Boundary + "; median of the repeats' central values)"
		}
	}
	return u
}

// sigValue prints a summary value with five significant digits, or null.
func sigValue(v replay.Value) string {
	f, ok := v.Float64()
	if !ok || v.IsNull() {
		return "-" // as Decimal prints a null summary
	}
	return sig(f)
}
