package report

import (
	"math/big"
	"slices"

	"github.com/benchseal/benchseal/replay"
)

// energyCharts are the charts of a run with accelerator scrapes: energy
// per good token by load point, and each point × repeat's power over
// time (none for a run without them).
func energyCharts(r *replay.Result) []chartView {
	if !slices.ContainsFunc(r.Results, func(p *replay.PointResult) bool { return p.Energy != nil }) {
		return nil
	}
	boundary := ""
	for _, p := range r.Results {
		if p.Energy != nil && p.Energy.Boundary != "" {
			boundary = p.Energy.Boundary
			break
		}
	}
	points, reps := byPoint(r)
	x0, x1, ticks := pointTicks(points)
	per := plot{title: "Energy per good token by load point", yLabel: "energy per good token (J)", xLabel: "load point (run order)",
		x0: x0, x1: x1, xTicks: ticks, categorical: true, empty: "no defined energy per good token (no SLO, or no energy measured)",
		caption: "Energy per output token of the requests meeting the SLO: " + boundary + ". The central value of each repeat; its bounds are in the point's energy table. " + repeatsCaption}
	j := big.NewRat(1, 1) // J, as every other energy number prints
	s := plotSeries{name: "Energy per good token", class: seriesClass(0, false)}
	meds := map[string]replay.Summary{}
	for _, ps := range r.Summary {
		meds[ps.Point] = ps.Energy["j_per_good_token"]
	}
	for i, pt := range points {
		x := rat(int64(i))
		med := meds[pt]
		s.line = append(s.line, plotPt{x: x, y: scaled(med.Median, j), xl: pt, val: Decimal(med.Median, j, 4),
			tip: pt + ": " + Decimal(med.Median, j, 4) + " J per good token (median of " + Number(replay.Int(int64(med.N))) + " repeats)"})
		for _, p := range reps[pt] {
			v := replay.EnergyValue(p.Energy, "j_per_good_token")
			rep := pt + " repeat " + Number(replay.Int(int64(p.Repeat))) + ": energy per good token "
			if v.IsNull() {
				why := "not measured"
				if p.Energy != nil {
					why = p.Energy.Reason
					if why == "" {
						why = p.Energy.PerGoodToken.Reason
					}
				}
				s.reps = append(s.reps, plotPt{x: x, null: true, tip: rep + NullText(why), val: "repeat " + Number(replay.Int(int64(p.Repeat))) + " " + NullText(why)})
				continue
			}
			s.reps = append(s.reps, plotPt{x: x, y: scaled(v, j), tip: rep + Decimal(v, j, 4) + " J"})
		}
	}
	per.series = []plotSeries{s}
	return []chartView{per.layout(), powerChart(r, boundary)}
}

// powerChart is each point × repeat's total scraped power against the
// time since its window started, one line each.
func powerChart(r *replay.Result, boundary string) chartView {
	p := plot{title: "Accelerator power over each point's window", yLabel: "power (W)", xLabel: "time since the point's first request (s)",
		empty: "no power gauge scraped", caption: "Total power of the counted devices at each stored scrape (the gauge, an instant's reading): " + boundary + ". One line per point and repeat; the energy numbers come from the counter, not from these readings."}
	sec := big.NewRat(1, 1_000_000_000)
	lo, hi := new(big.Rat), new(big.Rat)
	i := 0
	for _, pr := range r.Results {
		c := pr.Energy
		if c == nil || c.Reason != "" || len(c.Power) == 0 {
			continue
		}
		start := c.WindowStartNS
		s := plotSeries{name: pr.Point + " repeat " + Number(replay.Int(int64(pr.Repeat))), class: seriesClass(i, false)}
		i++
		for _, pw := range c.Power {
			x := new(big.Rat).Mul(rat(pw.AtNS-start), sec)
			y := new(big.Rat).SetFloat64(pw.W)
			if x.Cmp(lo) < 0 {
				lo = x
			}
			if x.Cmp(hi) > 0 {
				hi = x
			}
			v := Decimal(replay.Exact(y), one, 1)
			s.line = append(s.line, plotPt{x: x, y: y, xl: Decimal(replay.Exact(x), one, 3), val: v, tip: s.name + " at " + Decimal(replay.Exact(x), one, 3) + " s: " + v + " W"})
		}
		p.series = append(p.series, s)
	}
	p.numericX(lo, hi, "s")
	return p.layout()
}
