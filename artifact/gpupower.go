// Accelerator power readings against the device's other readings, and a
// simulator run's readings against the simulator's power model.

package artifact

import (
	"fmt"
	"slices"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/schema"
)

// GPUPowerOutlierRatio is how far below the median of a device's idle
// readings (taken with nothing of the run in flight, as CheckGPUIdle's
// idle power) one of its power readings may lie before it is an outlier
// the checks do not trust. The counter-against-gauge floor
// (gpuGauge.check) integrates the device's lowest reading over every
// scrape pair, so one forged low reading would otherwise lower the floor
// of the whole run; with the median, lowering it takes half the idle
// readings. Half leaves room for a real device that drops to a deeper
// power state while idle (nvidia-smi -q's "Performance State"); the
// simulator's idle readings are all its idle power (simulator/gpus.go),
// measured ratio 1.
const GPUPowerOutlierRatio = 0.5

// gpuPowerMaxProblems bounds the problems each of these checks lists per
// endpoint; the rest are counted.
const gpuPowerMaxProblems = 10

// problemList collects problems up to gpuPowerMaxProblems and counts the
// rest.
type problemList struct {
	file string
	out  []schema.Problem
	more int
}

func (l *problemList) add(field, format string, a ...any) {
	if len(l.out) < gpuPowerMaxProblems {
		l.out = append(l.out, schema.Problem{File: l.file, Field: field, Message: fmt.Sprintf(format, a...)})
	} else {
		l.more++
	}
}

func (l *problemList) done(what string) []schema.Problem {
	if l.more > 0 {
		l.out = append(l.out, schema.Problem{File: l.file, Field: "gpu_metrics.scrapes", Message: fmt.Sprintf("and %d more %s", l.more, what)})
	}
	return l.out
}

// checkPowerOutliers holds each device's power readings in rs (one
// endpoint's parsed scrapes in time order) to its others: a reading of 0 W
// from a device that reads power above 0 elsewhere is no reading of a
// powered accelerator, and a reading below GPUPowerOutlierRatio times the
// median of the device's idle readings (scrapes with nothing of lagged in
// flight) is an outlier; each is a problem naming the scrape.
func checkPowerOutliers(file string, rs []read1, lagged []schema.Span) []schema.Problem {
	l := problemList{file: file}
	idle := map[string][]float64{}
	positive := map[string]bool{}
	for _, r := range rs {
		isIdle := schema.IdleBetween(lagged, r.s.FromNS, r.s.AtNS)
		for id, d := range r.sc.Devices {
			if d.PowerW == nil {
				continue
			}
			if *d.PowerW > 0 {
				positive[id] = true
				if isIdle {
					idle[id] = append(idle[id], *d.PowerW)
				}
			}
		}
	}
	median := map[string]float64{}
	for id, ws := range idle {
		slices.Sort(ws)
		median[id] = ws[len(ws)/2]
	}
	for _, r := range rs {
		ids := make([]string, 0, len(r.sc.Devices))
		for id := range r.sc.Devices {
			ids = append(ids, id)
		}
		slices.Sort(ids)
		for _, id := range ids {
			d := r.sc.Devices[id]
			if d.PowerW == nil {
				continue
			}
			w, field := *d.PowerW, fmt.Sprintf("gpu_metrics.scrapes[%d]", r.i)
			switch {
			case w <= 0 && positive[id]:
				l.add(field, "device %s's power reading in %s/%s is %s W, while it reads above 0 W elsewhere: no reading of a powered accelerator", id, schema.AttachmentsDir, r.s.File, digits.Shortest(w))
			case median[id] > 0 && w < GPUPowerOutlierRatio*median[id]:
				l.add(field, "device %s's power reading in %s/%s, %s W, is below %s %% of the median of its readings with nothing in flight, %s W: an outlier the energy checks do not trust", id, schema.AttachmentsDir, r.s.File, digits.Places(w, 3), digits.Places(GPUPowerOutlierRatio*100, 0), digits.Places(median[id], 3))
			}
		}
	}
	return l.done("power reading(s) of a device far below its others")
}

// checkSimulatorReadings holds one endpoint's parsed scrapes rs (in time
// order) of an in-process simulator run (schema.SimulatorScrapes) to the
// simulator's power model, which is known (schema.SimGPUIdleW): every
// device the endpoint lists has a power reading and a valid energy
// counter in every scrape (the simulator serves all of them on every
// scrape), each power reading lies in [schema.SimGPUIdleW, ceilW]
// (schema.SimGPUCeilingW), and each counter rise between two consecutive
// scrapes is at least the idle power times the least time between the
// readings and at most ceilW times the most, give or take the counter's
// rounding and two steps of its integer mJ. Nothing here is the signer's
// word: the model is the simulator's.
func checkSimulatorReadings(file string, listed []string, rs []read1, ceilW float64) []schema.Problem {
	l := problemList{file: file}
	idle := schema.SimGPUIdleW
	for k, r := range rs {
		field := fmt.Sprintf("gpu_metrics.scrapes[%d]", r.i)
		for _, id := range listed {
			d := r.sc.Devices[id]
			switch {
			case d == nil || d.EnergyJ == nil || d.PowerW == nil:
				l.add(field, "the scrape %s/%s lacks device %s's energy counter or power reading, which the in-process simulator serves for every device on every scrape", schema.AttachmentsDir, r.s.File, id)
				continue
			case *d.PowerW < idle*(1-gpuIdleSlack) || *d.PowerW > ceilW*(1+gpuIdleSlack):
				l.add(field, "device %s's power reading in %s/%s, %s W, lies outside the simulator's model, %s W idle to %s W with the run's most requests in flight", id, schema.AttachmentsDir, r.s.File, digits.Places(*d.PowerW, 3), digits.Places(idle, 0), digits.Places(ceilW, 0))
			}
			if k == 0 {
				continue
			}
			a := rs[k-1]
			da := a.sc.Devices[id]
			if da == nil || da.EnergyJ == nil {
				continue // named at its own scrape
			}
			rise, round := d.EnergySince(da)
			least := float64(max(0, r.s.FromNS-a.s.AtNS)) / 1e9
			most := float64(max(0, r.s.AtNS-a.s.FromNS)) / 1e9
			lo := float64(idle*least) - round - gpuIdleStepJ
			hi := float64(ceilW*most) + round + gpuIdleStepJ
			if rise < lo || rise > hi*(1+gpuIdleSlack) {
				l.add(field, "device %s's energy counter rose %s J between %s/%s and %s/%s (%s to %s s apart), outside the simulator's model (%s to %s J at %s to %s W)", id, digits.Places(rise, 3), schema.AttachmentsDir, a.s.File, schema.AttachmentsDir, r.s.File, digits.Places(least, 3), digits.Places(most, 3), digits.Places(lo, 3), digits.Places(hi, 3), digits.Places(idle, 0), digits.Places(ceilW, 0))
			}
		}
	}
	return l.done("reading(s) outside the simulator's power model")
}
