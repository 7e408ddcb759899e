package report

import (
	"fmt"
	"io"
	"math/big"
	"strings"
	"text/tabwriter"

	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

// CaptureSummary writes capture's end-of-run table from the replay of the
// run it wrote, so every number in it is the one replay prints for that
// point × repeat (the same key, scale and places): sent and ok counts,
// request_throughput, the achieved and offered arrival rate of an open
// loop (replay's overload "arrival rate"), send_lag p99 and the window.
// chunks gives the content chunks capture counted for a point × repeat,
// a count replay does not print; offered names the offered rate ("offered",
// or "offered to shard I of N", whose share of the point's rate replay
// also sets against). The last column is replay's two load flags
// (overloaded, generator-limited), so a point whose numbers describe a
// load it did not sustain is not shown as plain; a warning line after the
// table counts such points.
func CaptureSummary(out io.Writer, r *replay.Result, offered string, chunks func(point string, repeat int) int64) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	open, flagged := false, 0
	for _, p := range r.Results {
		open = open || (p.Overload != nil && p.Overload.Loop == replay.LoopOpen)
	}
	head := "point\trepeat\tsent\tok\tnot ok\tchunks\t" + schema.MetricRequestThroughput + " (" + schema.MetricUnit(schema.MetricRequestThroughput) + ")\twindow (ms)"
	if open {
		head += "\tarrival rate achieved / " + offered + " (req/s)\tsend_lag p99 (ms)"
	}
	head += "\tload flags (replay)"
	fmt.Fprintln(tw, head)
	val := func(p *replay.PointResult, k string, v replay.Value, scale *big.Rat, places int) string {
		if _, null := p.NullReasons[k]; null || v.IsNull() {
			return "null"
		}
		return Decimal(v, scale, places)
	}
	for _, p := range r.Results {
		c := p.Counts
		line := fmt.Sprintf("%s\t%d\t%d\t%d\t%d\t%d\t%s\t%s", schema.EscapeText(p.Point, false), p.Repeat, c.Sent, c.OK, c.Sent-c.OK, chunks(p.Point, p.Repeat),
			val(p, schema.MetricRequestThroughput, p.Scalars[schema.MetricRequestThroughput], one, 3), val(p, schema.MetricWindow, p.Scalars[schema.MetricWindow], nsToMS, 3))
		if open {
			rate, lag := "-", "-"
			if o := p.Overload; o != nil && o.Loop == replay.LoopOpen {
				rate = val(p, "", o.ArrivalRate, one, 3) + " / " + val(p, "", o.OfferedRate, one, 3)
				v, _ := p.Dists[schema.MetricSendLag].Field("p99")
				lag = val(p, schema.MetricSendLag, v, nsToMS, 3)
			}
			line += "\t" + rate + "\t" + lag
		}
		flags, set := loadFlags(p.Overload)
		if set {
			flagged++
		}
		fmt.Fprintln(tw, line+"\t"+flags)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if flagged > 0 {
		_, err := fmt.Fprintf(out, "WARNING: %d of %d point × repeat rows flagged by replay's overload test (overloaded: arrivals outran completions; generator-limited: the client did not keep its schedule): their numbers describe a load the point did not sustain; replay prints why\n", flagged, len(r.Results))
		return err
	}
	return nil
}

// loadFlags names the set load flags of a point ("-": none), with
// overloadUndecided when the overload test could not decide (as replay's
// summary names it), and whether any flag is set ("overload undecided"
// alone is not a flag).
func loadFlags(o *replay.Overload) (string, bool) {
	if o == nil {
		return overloadUndecided, false
	}
	var set []string
	if o.Overloaded.True() {
		set = append(set, "overloaded")
	}
	if o.GeneratorLimited.True() {
		set = append(set, "generator-limited")
	}
	flagged := len(set) > 0
	if o.Overloaded.Set == nil {
		set = append(set, overloadUndecided)
	}
	if len(set) == 0 {
		return "-", false
	}
	return strings.Join(set, ", "), flagged
}
