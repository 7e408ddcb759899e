package replay

import (
	"math/big"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

func TestTimelineBoundsWindowAndRates(t *testing.T) {
	u := int64(100_000_000) // 100 ms
	sh := &schema.Shards{Count: 2, TimelineUncertaintyNS: &u}
	pr := &PointResult{Scalars: map[string]Value{
		"window_ns":          Int(1_000_000_000),
		"request_throughput": Frac(90, 1), // 90 requests in 1 s
		"goodput":            Null,
	}}
	tl := timelineOf(sh, pr)
	check := func(name string, v Value, want *big.Rat) {
		t.Helper()
		if want == nil {
			if !v.IsNull() {
				t.Errorf("%s = %v, want null", name, v.Rat())
			}
			return
		}
		if v.Rat() == nil || v.Rat().Cmp(want) != 0 {
			t.Errorf("%s = %v, want %v", name, v.Rat(), want)
		}
	}
	check("window low", tl.WindowNS.Low, big.NewRat(900_000_000, 1))
	check("window high", tl.WindowNS.High, big.NewRat(1_100_000_000, 1))
	check("throughput low", tl.RequestThroughput.Low, big.NewRat(900, 11)) // 90 / 1.1 s
	check("throughput high", tl.RequestThroughput.High, big.NewRat(100, 1))
	check("goodput low", tl.Goodput.Low, nil)

	if timelineOf(nil, pr) != nil {
		t.Error("a run not merged from shards has a timeline")
	}
	unknown := timelineOf(&schema.Shards{Count: 2, UncertaintyReason: "shard 1 unsynchronised"}, pr)
	if !unknown.UncertaintyNS.IsNull() || !unknown.WindowNS.High.IsNull() || unknown.Reason != "shard 1 unsynchronised" {
		t.Errorf("unknown uncertainty: %+v", unknown)
	}
}

func TestShardRunOwesOnlyItsShare(t *testing.T) {
	m := &schema.Manifest{Shard: &schema.Shard{Index: 1, Count: 3}}
	m.Load.Mode = schema.ModeRate
	m.Load.Repeats = 1
	m.Load.Points = []schema.Point{{Name: "p", Rate: 10, Requests: 10}}
	def, err := LookupDefinition("benchseal")
	if err != nil {
		t.Fatal(err)
	}
	cfg := &config{def: def}
	g := newGroup(cfg)
	g.counts.Sent = 3 // requests 1, 4, 7 of 10
	groups := map[groupKey]*group{{"p", 0}: g}
	if miss := countMissing(m, groups, cfg); miss != 0 {
		t.Errorf("a complete shard run misses %d (the other shards' requests counted)", miss)
	}
	g.counts.Sent = 2
	if miss := countMissing(m, groups, cfg); miss != 1 {
		t.Errorf("a shard run one short misses %d, want 1", miss)
	}
}
