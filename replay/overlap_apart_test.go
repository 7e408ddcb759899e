package replay

import (
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// TestShardsApart: a point is apart when no instant lies inside every
// shard's measured phase; warmup phases and a single shard never are.
func TestShardsApart(t *testing.T) {
	type r struct {
		shard     int64
		phase     string
		sent, end int64
	}
	for _, c := range []struct {
		name string
		recs []r
		want int // lines; 0: not apart
	}{
		{"overlapping", []r{{0, schema.PhaseMeasure, 0, 100}, {1, schema.PhaseMeasure, 50, 150}}, 0},
		{"in turn", []r{{0, schema.PhaseMeasure, 0, 100}, {1, schema.PhaseMeasure, 120, 200}}, 2},
		{"touching", []r{{0, schema.PhaseMeasure, 0, 100}, {1, schema.PhaseMeasure, 100, 200}}, 2},
		{"pairwise but not all", []r{{0, schema.PhaseMeasure, 0, 100}, {1, schema.PhaseMeasure, 90, 200}, {2, schema.PhaseMeasure, 150, 300}}, 3},
		{"one shard", []r{{0, schema.PhaseMeasure, 0, 100}, {0, schema.PhaseMeasure, 200, 300}}, 0},
		{"warmup apart, measure together", []r{{0, schema.PhaseWarmup, 0, 10}, {1, schema.PhaseWarmup, 50, 60}, {0, schema.PhaseMeasure, 70, 100}, {1, schema.PhaseMeasure, 80, 90}}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			var ps phaseSpans
			for _, x := range c.recs {
				s := x.shard
				ps.add(&schema.Record{Point: "p", Phase: x.phase, Shard: &s, SentNS: x.sent, EndNS: x.end})
			}
			got := ps.apart("p", 0)
			if len(got) != c.want {
				t.Fatalf("apart = %q, want %d lines", got, c.want)
			}
			if c.want > 0 && !strings.Contains(apartNote("p", 0, got), "never offered at once") {
				t.Errorf("note %q", apartNote("p", 0, got))
			}
		})
	}
}
