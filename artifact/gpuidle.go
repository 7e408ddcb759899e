// Accelerator energy while the run had no request in flight.

package artifact

import (
	"fmt"
	"math"
	"slices"
	"sort"

	"github.com/benchseal/benchseal/energy"
	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/schema"
)

// gpuIdleSlack is the relative slack of the idle-energy comparison: the
// counter and the gauges are floats, and a bound equal to the rise must
// not fail on the last bit. gpuIdleStepJ is two steps of DCGM's integer
// mJ counter, which each reading may have been rounded down by.
const (
	gpuIdleSlack = 1e-9
	gpuIdleStepJ = 0.002
)

// CheckGPUIdle checks the accelerator scrapes of manifest m against when
// the run had a request in flight (busy: schema.RunSummary.Busy, the
// records' [sent_ns, end_ns]). Between two consecutive scrapes of one
// endpoint with nothing in flight from the first's request to the
// second's answer, each device's energy counter may rise by at most its
// idle power times that time, plus the counter's rounding, plus, for the
// part of that time within schema.CounterLagNS after a request's end (an
// engine may still be finishing it after the client saw its last byte),
// the device's peak power above idle, or its idle power again when that is
// more (the scrapes of a short point may all be taken while idle, so the
// peak read need not be the peak drawn). The idle power is the highest
// power-gauge reading the device showed in any scrape of the run taken
// with nothing in flight and no request ended within CounterLagNS
// before: the device's own idle readings; the peak its highest reading. A counter that rose by more contradicts the
// run (energy from another workload, or moved out of the measured
// windows) and is a problem naming the scrapes, the rise and the bound.
// A device without an idle power reading cannot be checked: the notes
// say so (once per endpoint). Scrapes that cannot be read are
// CheckGPUEvidence's problems and are skipped here. Pairs with requests
// of the run in flight throughout are held to their own gauges instead
// (checkBusyPair).
func CheckGPUIdle(m *schema.Manifest, file string, read func(name string) ([]byte, error), busy []schema.Span) (problems []schema.Problem, notes []string) {
	problems, notes, _ = CheckGPUIdleGaps(m, file, read, busy)
	return problems, notes
}

// CheckGPUIdleGaps is CheckGPUIdle, with the number of idle gaps it
// checked: pairs of consecutive scrapes of an endpoint with no request
// in flight between them and at least one device with an idle power
// reading. 0 means the check proves nothing about the run (every pair of
// scrapes has a warmup or a point between them).
func CheckGPUIdleGaps(m *schema.Manifest, file string, read func(name string) ([]byte, error), busy []schema.Span) (problems []schema.Problem, notes []string, gaps int) {
	if m == nil || m.GPUMetrics == nil {
		return nil, nil, 0
	}
	g := m.GPUMetrics
	custom, err := energy.CustomOf(g)
	if err != nil {
		return nil, nil, 0 // CheckGPUEvidence reports it
	}
	lagged := make([]schema.Span, len(busy))
	for i, s := range busy {
		lagged[i] = schema.Span{StartNS: s.StartNS, EndNS: satAdd(s.EndNS, schema.CounterLagNS)}
	}
	per := make([][]read1, len(g.Endpoints))
	for i, s := range g.Scrapes {
		if s.Error != "" || !schema.IsGPUScrapeFile(s.File) || s.Endpoint < 0 || s.Endpoint >= len(g.Endpoints) {
			continue
		}
		sc, _, err := energy.ReadScrape(read, s, custom)
		if err != nil {
			continue
		}
		s.FromNS = g.ReadingFrom(s) // a reading may be up to max_age old
		per[s.Endpoint] = append(per[s.Endpoint], read1{i, s, sc})
	}
	for e, rs := range per {
		sort.SliceStable(rs, func(a, b int) bool { return rs[a].s.AtNS < rs[b].s.AtNS })
		problems = append(problems, checkReadings(m, file, e, rs, lagged)...)
		idleW, peakW := idlePeakW(rs, lagged)
		unchecked := map[string]bool{}
		for k := 1; k < len(rs); k++ {
			a, b := rs[k-1], rs[k]
			if busyThroughout(busy, a.s.FromNS, b.s.AtNS) {
				if GPUGaugeNotApplied(g) != "" {
					continue
				}
				problems = append(problems, checkBusyPair(file, b.i, a.s, b.s, a.sc, b.sc)...)
				continue
			}
			if !schema.IdleBetween(busy, a.s.FromNS, b.s.AtNS) {
				continue
			}
			secs := float64(b.s.AtNS-a.s.FromNS) / 1e9
			lagSecs := float64(lagOverlap(busy, a.s.FromNS, b.s.AtNS)) / 1e9
			ids := make([]string, 0, len(b.sc.Devices))
			for id := range b.sc.Devices {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			counted := false
			for _, id := range ids {
				da, db := a.sc.Devices[id], b.sc.Devices[id]
				if da == nil || da.EnergyJ == nil || db.EnergyJ == nil {
					continue // no reading: the energy of the window says so
				}
				rise, round := db.EnergySince(da)
				if rise+round < 0 {
					continue // a reset: the energy of the window says so
				}
				w, ok := idleW[id]
				if !ok {
					unchecked[id] = true
					continue
				}
				if !counted {
					gaps, counted = gaps+1, true
				}
				lagW := max(peakW[id]-w, w)
				bound := float64(w*secs) + float64(lagW*lagSecs) + round + gpuIdleStepJ
				if rise > bound*(1+gpuIdleSlack) {
					problems = append(problems, schema.Problem{File: file, Field: fmt.Sprintf("gpu_metrics.scrapes[%d]", b.i),
						Message: fmt.Sprintf("device %s's energy counter rose %s J between %s/%s and %s/%s (%s s) with no request of the run in flight, more than its idle power %s W (the highest power it read with nothing in flight) explains (at most %s J, with %s s at up to %s W more just after a request's end): the readings contradict the run",
							id, digits.Places(rise, 3), schema.AttachmentsDir, a.s.File, schema.AttachmentsDir, b.s.File, digits.Places(secs, 3), digits.Places(w, 3), digits.Places(bound, 3), digits.Places(lagSecs, 3), digits.Places(lagW, 3))})
				}
			}
		}
		if len(unchecked) > 0 {
			ids := make([]string, 0, len(unchecked))
			for id := range unchecked {
				ids = append(ids, id)
			}
			slices.Sort(ids)
			notes = append(notes, fmt.Sprintf("idle energy of gpu_metrics.endpoints[%d] (%v): not checked, no power reading with nothing in flight", e, ids))
		}
	}
	return problems, notes, gaps
}

// read1 is one parsed scrape: its manifest index, its times (ReadingFrom
// applied) and readings.
type read1 struct {
	i  int
	s  schema.GPUScrape
	sc *energy.Scrape
}

// idlePeakW is each device's idle power over rs (the highest reading of a
// scrape with nothing of lagged in flight) and its peak (highest) reading.
func idlePeakW(rs []read1, lagged []schema.Span) (idleW, peakW map[string]float64) {
	idleW, peakW = map[string]float64{}, map[string]float64{}
	for _, r := range rs {
		idle := schema.IdleBetween(lagged, r.s.FromNS, r.s.AtNS)
		for id, d := range r.sc.Devices {
			if d.PowerW != nil {
				peakW[id] = max(peakW[id], *d.PowerW)
				if idle {
					idleW[id] = max(idleW[id], *d.PowerW)
				}
			}
		}
	}
	return idleW, peakW
}

// lagOverlap is how much of [from, to] lies within schema.CounterLagNS
// after the end of the last span of busy (disjoint, in time order) that
// ends at or before from.
func lagOverlap(busy []schema.Span, from, to int64) int64 {
	i := sort.Search(len(busy), func(i int) bool { return busy[i].EndNS > from })
	if i == 0 {
		return 0
	}
	end := satAdd(busy[i-1].EndNS, schema.CounterLagNS)
	return max(0, min(end, to)-from)
}

// satAdd is a + b, at most math.MaxInt64 (b ≥ 0).
func satAdd(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// checkReadings applies to endpoint e's parsed scrapes rs (in time
// order) the checks of single readings: power outliers
// (checkPowerOutliers) unless the readings are of unknown age
// (GPUGaugeNotApplied), and for the in-process simulator's scrapes
// (schema.SimulatorScrapes) its power model (checkSimulatorReadings).
func checkReadings(m *schema.Manifest, file string, e int, rs []read1, lagged []schema.Span) []schema.Problem {
	var out []schema.Problem
	if GPUGaugeNotApplied(m.GPUMetrics) == "" {
		out = append(out, checkPowerOutliers(file, rs, lagged)...)
	}
	if schema.SimulatorScrapes(m) {
		var listed []string
		for _, d := range m.GPUMetrics.Endpoints[e].Devices {
			listed = append(listed, d.ID)
		}
		out = append(out, checkSimulatorReadings(file, listed, rs, schema.SimGPUCeilingW(m))...)
	}
	return out
}
