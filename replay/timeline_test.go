package replay

import (
	"errors"
	"math/big"
	"strings"
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
	tl := timelineOf(sh, pr, 0)
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

	if timelineOf(nil, pr, 0) != nil {
		t.Error("a run not merged from shards has a timeline")
	}
	unknown := timelineOf(&schema.Shards{Count: 2, UncertaintyReason: "shard 1 unsynchronised"}, pr, 0)
	if !unknown.UncertaintyNS.IsNull() || !unknown.WindowNS.High.IsNull() || unknown.Reason != "shard 1 unsynchronised" {
		t.Errorf("unknown uncertainty: %+v", unknown)
	}
}

// TestTimelineAddsClockDrift: the shards' clocks may part by 2 × 500 ppm
// of the time elapsed since the run's epoch, on top of their declared
// bounds: 100 s in, 100 ms more.
func TestTimelineAddsClockDrift(t *testing.T) {
	u := int64(100_000_000)
	sh := &schema.Shards{Count: 2, TimelineUncertaintyNS: &u}
	pr := &PointResult{Scalars: map[string]Value{"window_ns": Int(1_000_000_000), "request_throughput": Frac(90, 1), "goodput": Null}}
	tl := timelineOf(sh, pr, 100_000_000_000)
	for name, c := range map[string]struct {
		v    Value
		want int64
	}{"anchor": {tl.AnchorNS, 100_000_000}, "drift": {tl.DriftNS, 100_000_000}, "uncertainty": {tl.UncertaintyNS, 200_000_000},
		"window low": {tl.WindowNS.Low, 800_000_000}, "window high": {tl.WindowNS.High, 1_200_000_000}} {
		if c.v.Rat() == nil || c.v.Rat().Cmp(big.NewRat(c.want, 1)) != 0 {
			t.Errorf("%s = %v, want %d", name, c.v.Rat(), c.want)
		}
	}
	if d := timelineOf(sh, pr, 1).DriftNS; d.Rat().Cmp(big.NewRat(1, 1)) != 0 {
		t.Errorf("drift after 1 ns = %v, want 1 (rounded up)", d.Rat())
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
	if miss, err := countMissing(m, groups, cfg); miss != 0 || err != nil {
		t.Errorf("a complete shard run misses %d, %v (the other shards' requests counted)", miss, err)
	}
	g.counts.Sent = 2
	if _, err := countMissing(m, groups, cfg); !errors.Is(err, schema.ErrInvalid) || !strings.Contains(err.Error(), "in the run of shard 1 of 3 has 2 records, the manifest declares 3") {
		t.Errorf("a shard run one short, not marked incomplete: %v, want its share named invalid", err)
	}
	m.Incomplete = true
	if miss, err := countMissing(m, groups, cfg); miss != 1 || err != nil {
		t.Errorf("an incomplete shard run one short misses %d, %v, want 1", miss, err)
	}
}
