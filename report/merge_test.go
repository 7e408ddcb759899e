package report

import (
	"strings"
	"testing"

	"github.com/benchseal/benchseal/merge"
	"github.com/benchseal/benchseal/schema"
)

// TestMergeTextInMilliseconds: merge's summary gives each shard's offset,
// late start and clock bound and the timeline uncertainty in ms to three
// places, rounded once from the exact ns, half to even (2500 ns is 0.002
// ms), as every other ms figure of report.
func TestMergeTextInMilliseconds(t *testing.T) {
	u := int64(1_234_567)
	res := &merge.Result{Dir: "merged", Records: 21, Missing: []int{1}, Manifest: &schema.Manifest{Shards: &schema.Shards{
		Count: 3, TimelineUncertaintyNS: &u, Members: []schema.ShardMember{
			{Index: 0, Records: 10, OffsetNS: -1_500_000, LateNS: 2500, Clock: &schema.Clock{Source: "adjtimex", Synced: true, MaxErrorNS: 16_000_000}},
			{Index: 1, Missing: true},
			{Index: 2, Records: 11, OffsetNS: 999_999_999, Incomplete: true, IncompleteReason: "stopped"},
		}}}}
	var b strings.Builder
	if err := MergeText(&b, res); err != nil {
		t.Fatal(err)
	}
	want := `merged 2 shard run(s) of 3 into merged: 21 records
  shard 0: 10 records, offset -1.500 ms, 0.002 ms after the common start, clock: ±16.000 ms (kernel maxerror)
  shard 1: MISSING (its requests count as not sent)
  shard 2: 11 records, offset 1000.000 ms, clock: no bound, INCOMPLETE: stopped
timeline uncertainty between shards: ±1.235 ms
`
	if got := b.String(); got != want {
		t.Errorf("got\n%s\nwant\n%s", got, want)
	}
}
