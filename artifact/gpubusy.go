// Accelerator energy while the run had requests in flight throughout.

package artifact

import (
	"fmt"
	"slices"
	"sort"

	"github.com/benchseal/benchseal/energy"
	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/schema"
)

// GPUBusyTolerance is the relative tolerance of the busy-pair check
// (checkBusyPair): a device's counter rise between two scrapes taken
// while the run had requests in flight throughout must be at least the
// lower of the pair's two power readings times the least time between
// them, less 20 %. The gauge is a sample (one instant, or NVML's 1 s
// average, see GPUGaugeTolerance), and between two samples the draw can
// dip below both while a batch drains and the next is admitted; 20 %
// leaves room for that where the run-wide check (gpuGauge.check) allows
// 10 % below the run's lowest reading.
const GPUBusyTolerance = 0.20

// GPUBusyMinSeconds is the least time between a pair's readings for the
// busy-pair check to apply. Requests are in flight by the client's clock:
// on a loaded machine the client reads a request's last bytes tens of
// milliseconds after the server finished it, so over a short pair the
// device may have been idle while a request was still "in flight", and
// 20 % does not cover a pair that is mostly such a tail. Over half a
// second, that tail is a small share of the pair.
const GPUBusyMinSeconds = 0.5

// busyThroughout reports whether one span of busy (disjoint, in time
// order, as schema.RunSummary.Busy) covers [fromNS, toNS]: some request of
// the run was in flight at every instant between the two, no idle gap.
func busyThroughout(busy []schema.Span, fromNS, toNS int64) bool {
	i := sort.Search(len(busy), func(i int) bool { return busy[i].EndNS >= toNS })
	return i < len(busy) && busy[i].StartNS <= fromNS
}

// checkBusyPair holds each device's counter rise between scrapes a and b
// (b at manifest index bi; times with ReadingFrom applied), taken with
// requests of the run in flight throughout, to the pair's own gauges: at
// least min(the two power readings) times the least time between the
// readings (b's request sent, less max_age, after a's answer), less
// GPUBusyTolerance, the counter's rounding and two steps of its integer
// mJ. A device without both readings, or whose counter reset, is not
// checked here. A counter forged down towards the run's idle floor while
// its gauges read the device busy passes gpuGauge.check but not this.
func checkBusyPair(file string, bi int, a, b schema.GPUScrape, sa, sb *energy.Scrape) []schema.Problem {
	least := float64(max(0, b.FromNS-a.AtNS)) / 1e9
	if least < GPUBusyMinSeconds {
		return nil
	}
	ids := make([]string, 0, len(sb.Devices))
	for id := range sb.Devices {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	var out []schema.Problem
	for _, id := range ids {
		da, db := sa.Devices[id], sb.Devices[id]
		if da == nil || da.EnergyJ == nil || db.EnergyJ == nil || da.PowerW == nil || db.PowerW == nil {
			continue
		}
		rise, round := db.EnergySince(da)
		if rise+round < 0 {
			continue // a reset: the energy of the window says so
		}
		w := min(*da.PowerW, *db.PowerW)
		floor := float64(w*least*(1-GPUBusyTolerance)) - round - gpuIdleStepJ
		if rise < floor {
			out = append(out, schema.Problem{File: file, Field: fmt.Sprintf("gpu_metrics.scrapes[%d]", bi),
				Message: fmt.Sprintf("device %s's energy counter rose %s J between %s/%s and %s/%s (at least %s s apart, requests of the run in flight throughout), less than the lower of the pair's power readings, %s W, implies (at least %s J with %s %% tolerance): the counter contradicts the device's own power gauge",
					id, digits.Places(rise, 3), schema.AttachmentsDir, a.File, schema.AttachmentsDir, b.File, digits.Places(least, 3), digits.Places(w, 3), digits.Places(floor, 3), digits.Places(GPUBusyTolerance*100, 0))})
		}
	}
	return out
}
