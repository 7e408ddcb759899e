package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/benchseal/benchseal/merge"
)

// MergeText writes what a merge of shard runs wrote: the shards merged
// of those planned, each shard's records, clock offset, late start and
// clock error bound (or that it is missing), the timeline uncertainty
// between shards, and whether the merged run is incomplete.
func MergeText(out io.Writer, res *merge.Result) error {
	var b strings.Builder
	m := res.Manifest
	fmt.Fprintf(&b, "merged %d shard run(s) of %d into %s: %d records\n", m.Shards.Count-len(res.Missing), m.Shards.Count, res.Dir, res.Records)
	for _, mb := range m.Shards.Members {
		if mb.Missing {
			fmt.Fprintf(&b, "  shard %d: MISSING (its requests count as not sent)\n", mb.Index)
			continue
		}
		clk := "clock: no bound"
		if e, ok := mb.Clock.Bound(); ok {
			clk = "clock: ±" + ms(e) + " ms (kernel maxerror)"
		}
		late := ""
		if mb.LateNS != 0 {
			late = ", " + ms(mb.LateNS) + " ms after the common start"
		}
		fmt.Fprintf(&b, "  shard %d: %d records, offset %s ms%s, %s", mb.Index, mb.Records, ms(mb.OffsetNS), late, clk)
		if mb.Incomplete {
			fmt.Fprintf(&b, ", INCOMPLETE: %s", mb.IncompleteReason)
		}
		fmt.Fprintln(&b)
	}
	if u := m.Shards.TimelineUncertaintyNS; u != nil {
		fmt.Fprintf(&b, "timeline uncertainty between shards: ±%s ms\n", ms(*u))
	} else {
		fmt.Fprintf(&b, "timeline uncertainty between shards: unknown (%s)\n", m.Shards.UncertaintyReason)
	}
	if m.Incomplete {
		fmt.Fprintf(&b, "INCOMPLETE: %s\n", m.IncompleteReason)
	}
	_, err := io.WriteString(out, b.String())
	return err
}
