package servermetrics

import (
	"fmt"
	"testing"
)

// A gauge's peak and slope come only from scrapes inside the point's
// load (first send to last end): the idle scrapes bracketing a short
// point give no peak (they printed "running peak 0, slope 0/s" for a
// c8 point), and a slope needs MinFitScrapes scrapes inside.
func TestGaugePeakOnlyFromScrapesInsideTheLoad(t *testing.T) {
	running := func(v float64, at int64) *Snapshot {
		return parse(t, fmt.Sprintf("# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running %v\n", v), at)
	}
	gauge := func(snaps []*Snapshot, load Load) GaugePeak {
		t.Helper()
		c, err := Delta(EngineVLLM, snaps, load)
		if err != nil {
			t.Fatal(err)
		}
		for _, g := range c.Gauges {
			if g.Role == RoleRunning {
				return g
			}
		}
		t.Fatalf("no running gauge in %+v", c)
		return GaugePeak{}
	}
	load := Load{FromNS: 1e8, ToNS: 9e8, IntervalNS: 5e9}
	for _, tc := range []struct {
		name                 string
		snaps                []*Snapshot
		peak, slope          *float64
		peakReason, slopeWhy string
	}{
		{"idle brackets only", []*Snapshot{running(0, 0), running(0, 1e9)}, nil, nil,
			"no scrape inside the point's load (scrapes every 5s; the point lasted 0.8s)",
			"no scrape inside the point's load (scrapes every 5s; the point lasted 0.8s)"},
		{"two inside", []*Snapshot{running(0, 0), running(8, 2e8), running(6, 8e8), running(0, 1e9)}, ptr(8), nil,
			"", "2 scrape(s) inside the point's load, need 3"},
		{"three inside", []*Snapshot{running(0, 0), running(2, 2e8), running(4, 4e8), running(6, 6e8), running(0, 1e9)}, ptr(6), ptr(10),
			"", ""},
		{"no load", []*Snapshot{running(0, 0), running(8, 5e8), running(0, 1e9)}, nil, nil,
			"the point has no measured request times: no span of load to read the gauge in",
			"the point has no measured request times: no span of load to read the gauge in"},
	} {
		l := load
		if tc.name == "no load" {
			l = NoLoad
		}
		g := gauge(tc.snaps, l)
		if !sameFloat(g.Peak, tc.peak) || g.PeakReason != tc.peakReason {
			t.Errorf("%s: peak %v (%q), want %v (%q)", tc.name, valueOf(g.Peak), g.PeakReason, valueOf(tc.peak), tc.peakReason)
		}
		if !sameFloat(g.Slope, tc.slope) || g.SlopeReason != tc.slopeWhy {
			t.Errorf("%s: slope %v (%q), want %v (%q)", tc.name, valueOf(g.Slope), g.SlopeReason, valueOf(tc.slope), tc.slopeWhy)
		}
	}
}

func ptr(f float64) *float64 { return &f }

func sameFloat(a, b *float64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	d := *a - *b
	return d < 1e-9 && d > -1e-9
}

func valueOf(p *float64) any {
	if p == nil {
		return nil
	}
	return *p
}
