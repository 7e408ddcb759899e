package report

import (
	"fmt"
	"io"
	"math/big"
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
// also sets against).
func CaptureSummary(out io.Writer, r *replay.Result, offered string, chunks func(point string, repeat int) int64) error {
	tw := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	open := false
	for _, p := range r.Results {
		open = open || (p.Overload != nil && p.Overload.Loop == replay.LoopOpen)
	}
	head := "point\trepeat\tsent\tok\tnot ok\tchunks\trequest_throughput (req/s)\twindow (ms)"
	if open {
		head += "\tarrival rate achieved / " + offered + " (req/s)\tsend_lag p99 (ms)"
	}
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
			val(p, "request_throughput", p.Scalars["request_throughput"], one, 3), val(p, "window_ns", p.Scalars["window_ns"], nsToMS, 3))
		if open {
			rate, lag := "-", "-"
			if o := p.Overload; o != nil && o.Loop == replay.LoopOpen {
				rate = val(p, "", o.ArrivalRate, one, 3) + " / " + val(p, "", o.OfferedRate, one, 3)
				v, _ := p.Dists["send_lag_ns"].Field("p99")
				lag = val(p, "send_lag_ns", v, nsToMS, 3)
			}
			line += "\t" + rate + "\t" + lag
		}
		fmt.Fprintln(tw, line)
	}
	return tw.Flush()
}
