package report

import (
	"fmt"

	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

type timelineInterval struct {
	key  string
	v    replay.Interval
	unit string
}

// timelineIntervals lists a point's clock-uncertainty intervals in output
// order.
func timelineIntervals(t *replay.Timeline) []timelineInterval {
	return []timelineInterval{
		{schema.MetricWindow, t.WindowNS, "ms"},
		{schema.MetricRequestThroughput, t.RequestThroughput, schema.MetricUnit(schema.MetricRequestThroughput)},
		{schema.MetricGoodput, t.Goodput, schema.MetricUnit(schema.MetricGoodput)},
	}
}

// ClocksDeclared says where the shards' clock bounds and epochs come from:
// each shard's own manifest, checked only for consistency.
const ClocksDeclared = "declared by the shards (unverified)"

// timelineRow is the text line of a run merged from shards: the window
// and the rates with the range the shards' clocks leave them.
func timelineRow(t *replay.Timeline) row {
	if t.UncertaintyNS.IsNull() {
		return row{"shard clocks", fmt.Sprintf("%s; %d shards; window, throughput and goodput uncertain by an unknown amount: %s", ClocksDeclared, t.Shards, t.Reason), ""}
	}
	iv := func(i replay.Interval, scale string) string {
		if scale == "ms" {
			return Decimal(i.Low, nsToMS, 3) + " .. " + Decimal(i.High, nsToMS, 3)
		}
		return Decimal(i.Low, one, 3) + " .. " + Decimal(i.High, one, 3)
	}
	s := fmt.Sprintf("%s; %d shards, timelines placed to ± %s ms (clock bounds %s ms + drift %s ms at %d ppm): window %s ms, %s %s %s, %s %s %s",
		ClocksDeclared, t.Shards, Decimal(t.UncertaintyNS, nsToMS, 3), Decimal(t.AnchorNS, nsToMS, 3), Decimal(t.DriftNS, nsToMS, 3), replay.DriftPPM,
		iv(t.WindowNS, "ms"), schema.MetricRequestThroughput, iv(t.RequestThroughput, ""), schema.MetricUnit(schema.MetricRequestThroughput),
		schema.MetricGoodput, iv(t.Goodput, ""), schema.MetricUnit(schema.MetricGoodput))
	if t.Reason != "" {
		s += "; " + t.Reason
	}
	return row{"shard clocks", s, ""}
}

func timelineCSV(t *replay.Timeline) [][2]string {
	out := [][2]string{{"timeline.uncertainty_ns", Number(t.UncertaintyNS)}, {"timeline.anchor_ns", Number(t.AnchorNS)}, {"timeline.drift_ns", Number(t.DriftNS)}}
	for _, iv := range timelineIntervals(t) {
		out = append(out, [2]string{"timeline." + iv.key + ".low", Number(iv.v.Low)}, [2]string{"timeline." + iv.key + ".high", Number(iv.v.High)})
	}
	if t.Reason != "" {
		out = append(out, [2]string{"timeline.reason", t.Reason})
	}
	return out
}
