// Accelerator energy counters against the same scrapes' power gauges.

package artifact

import (
	"fmt"
	"slices"
	"sort"

	"github.com/benchseal/benchseal/energy"
	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/schema"
)

// GPUGaugeTolerance is the relative tolerance of the counter-against-gauge
// check, and GPUGaugeSlackS its slack in seconds at the device's highest
// power reading. The energy counter integrates everything the device drew
// (DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION, NVML's total energy since the
// driver loaded), while the power gauge (DCGM_FI_DEV_POWER_USAGE) is a
// sample: one instant's reading, or on recent NVIDIA parts an average over
// NVML's 1 s power window (nvidia-smi --help-query-gpu: power.draw.average
// "averaged over a 1 sec interval"). Between two samples the draw may go
// below the lowest reading seen or above the highest, for a fraction of
// the time, so the check allows 10 % of the power on either side and, on
// the upper side, one averaging window at the highest reading; a counter
// outside that is not the readings of one device. 10 % keeps the check
// able to catch a counter scaled by 0.85 or less against a constant idle
// floor (the simulator's 90 W idle, 150 W at two requests per device, pass
// with their counters exact). The tolerance is energy.CounterTolerancePercent,
// which decide and compare share: an energy difference within it is the
// signer's word.
const (
	GPUGaugeTolerance = energy.CounterTolerancePercent / 100.0
	GPUGaugeSlackS    = 1.0
)

// gpuScrapeReadings is what the counter-against-gauge check keeps of one
// parsed scrape: its index in the manifest, its times (FromNS the reading
// may be as old as, schema.GPUMetrics.ReadingFrom) and each device's
// counter.
type gpuScrapeReadings struct {
	i        int
	s        schema.GPUScrape
	counters map[string]*energy.Device
}

// gpuGauge collects, per endpoint, the scrapes' counters in time order
// and each device's lowest and highest power reading of the run.
type gpuGauge struct {
	per        [][]gpuScrapeReadings
	minW, maxW []map[string]float64
}

func newGPUGauge(endpoints int) *gpuGauge {
	g := &gpuGauge{per: make([][]gpuScrapeReadings, endpoints), minW: make([]map[string]float64, endpoints), maxW: make([]map[string]float64, endpoints)}
	for e := range endpoints {
		g.minW[e], g.maxW[e] = map[string]float64{}, map[string]float64{}
	}
	return g
}

// add records one parsed scrape (taken in time order per endpoint).
func (g *gpuGauge) add(i int, s schema.GPUScrape, sc *energy.Scrape) {
	r := gpuScrapeReadings{i: i, s: s, counters: map[string]*energy.Device{}}
	for id, d := range sc.Devices {
		if d.EnergyJ != nil {
			r.counters[id] = d
		}
		if d.PowerW != nil {
			w := *d.PowerW
			if lo, ok := g.minW[s.Endpoint][id]; !ok || w < lo {
				g.minW[s.Endpoint][id] = w
			}
			g.maxW[s.Endpoint][id] = max(g.maxW[s.Endpoint][id], w)
		}
	}
	g.per[s.Endpoint] = append(g.per[s.Endpoint], r)
}

// gpuGaugeMaxProblems bounds the problems check lists: a counter scaled
// for the whole run contradicts every scrape pair of every device, and the
// first few name it; the rest are counted.
const gpuGaugeMaxProblems = 10

// check holds every device's counter rise between two consecutive scrapes
// of its endpoint to the power its own gauge read over the run: at least
// the lowest reading times the least time that can lie between the two
// readings (the second's request sent, less max_age, after the first's
// answer), less GPUGaugeTolerance; at most the highest reading times the
// most time (the first's request sent, less max_age, to the second's
// answer), plus GPUGaugeTolerance and GPUGaugeSlackS; the counter's
// rounding (energy.Device.EnergySince) and two steps of its integer mJ
// widen both. A device without a power reading, or a counter that reset
// or vanished between the two (the window's energy says so), is not
// checked. A rise outside the bounds is a problem naming the device, the
// scrapes and the numbers: a counter scaled down (or up) after the run
// while the gauges kept their values is caught here.
func (g *gpuGauge) check(file string) []schema.Problem {
	var out []schema.Problem
	more := 0
	add := func(p schema.Problem) {
		if len(out) < gpuGaugeMaxProblems {
			out = append(out, p)
		} else {
			more++
		}
	}
	for e, rs := range g.per {
		for k := 1; k < len(rs); k++ {
			a, b := rs[k-1], rs[k]
			least := float64(max(0, b.s.FromNS-a.s.AtNS)) / 1e9
			most := float64(max(0, b.s.AtNS-a.s.FromNS)) / 1e9
			ids := make([]string, 0, len(b.counters))
			for id := range b.counters {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			for _, id := range ids {
				ra, ok := a.counters[id]
				rb := b.counters[id]
				lo, hasW := g.minW[e][id]
				if !ok || !hasW {
					continue
				}
				rise, round := rb.EnergySince(ra)
				if rise+round < 0 {
					continue
				}
				slack := round + gpuIdleStepJ
				hi := g.maxW[e][id]
				floor := float64(lo*least*(1-GPUGaugeTolerance)) - slack
				ceil := float64(hi*most*(1+GPUGaugeTolerance)) + float64(hi*GPUGaugeSlackS) + slack
				switch {
				case rise < floor:
					add(schema.Problem{File: file, Field: fmt.Sprintf("gpu_metrics.scrapes[%d]", b.i),
						Message: fmt.Sprintf("device %s's energy counter rose %s J between %s/%s and %s/%s (at least %s s apart), less than its lowest power reading of the run, %s W, implies (at least %s J with %s %% tolerance): the counter contradicts the device's own power gauge",
							id, digits.Places(rise, 3), schema.AttachmentsDir, a.s.File, schema.AttachmentsDir, b.s.File, digits.Places(least, 3), digits.Places(lo, 3), digits.Places(floor, 3), digits.Places(GPUGaugeTolerance*100, 0))})
				case rise > ceil:
					add(schema.Problem{File: file, Field: fmt.Sprintf("gpu_metrics.scrapes[%d]", b.i),
						Message: fmt.Sprintf("device %s's energy counter rose %s J between %s/%s and %s/%s (at most %s s apart), more than its highest power reading of the run, %s W, explains (at most %s J with %s %% tolerance and %s s at that power): the counter contradicts the device's own power gauge",
							id, digits.Places(rise, 3), schema.AttachmentsDir, a.s.File, schema.AttachmentsDir, b.s.File, digits.Places(most, 3), digits.Places(hi, 3), digits.Places(ceil, 3), digits.Places(GPUGaugeTolerance*100, 0), digits.Places(GPUGaugeSlackS, 0))})
				}
			}
		}
	}
	if more > 0 {
		out = append(out, schema.Problem{File: file, Field: "gpu_metrics.scrapes",
			Message: fmt.Sprintf("and %d more scrape pair(s) whose energy counter contradicts the device's own power gauge", more)})
	}
	return out
}

// sortScrapesByTime returns the indexes of scrapes in the order of their
// answers.
func sortScrapesByTime(scrapes []schema.GPUScrape) []int {
	idx := make([]int, 0, len(scrapes))
	for i := range scrapes {
		idx = append(idx, i)
	}
	sort.SliceStable(idx, func(a, b int) bool { return scrapes[idx[a]].AtNS < scrapes[idx[b]].AtNS })
	return idx
}
