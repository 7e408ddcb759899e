package capture_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/energy"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/simulator"
)

// TestGPUMetricsAreScrapedAroundEveryPoint: every measured point × repeat
// has a before and an after scrape of every endpoint, each stored with
// its digest, and the devices listed are those the first one measured.
func TestGPUMetricsAreScrapedAroundEveryPoint(t *testing.T) {
	ts := gpuSimulator(t, 3)
	o := baseOptions(t, ts.URL)
	o.Plan.Points = []schema.Point{{Concurrency: 1, Requests: 4}, {Concurrency: 2, Requests: 4}}
	o.GPUMetrics = []string{ts.URL + simulator.GPUMetricsPath, ts.URL + simulator.GPUMetricsPath}
	if _, err := capture.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	g := readRun(t, o.OutDir).m.GPUMetrics
	if g == nil || len(g.Endpoints) != 2 || len(g.Endpoints[1].Devices) != 3 || g.Endpoints[0].Devices[0].Serving != schema.ServingDeclared {
		t.Fatalf("gpu_metrics %+v", g)
	}
	seen := map[string]int{}
	for _, s := range g.Scrapes {
		if s.Error != "" {
			t.Fatalf("scrape failed: %+v", s)
		}
		seen[s.Point+" "+s.When]++
		if _, err := os.Stat(o.OutDir + "/" + schema.AttachmentsDir + "/" + s.File); err != nil {
			t.Errorf("%s: %v", s.File, err)
		}
	}
	for _, pt := range []string{"c1", "c2"} {
		if seen[pt+" before"] != 2 || seen[pt+" after"] != 2 {
			t.Errorf("point %s: %d before and %d after scrapes, want one per endpoint", pt, seen[pt+" before"], seen[pt+" after"])
		}
	}
}

func TestGPUMetricsThatDoNotAnswerStopTheRun(t *testing.T) {
	sim, err := simulator.New(simulator.DefaultConfig()) // no accelerators: /gpu-metrics is 404
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(sim)
	defer ts.Close()
	o := baseOptions(t, ts.URL)
	o.GPUMetrics = []string{ts.URL + simulator.GPUMetricsPath}
	if _, err := capture.Run(context.Background(), o); !errors.Is(err, capture.ErrNoGPUMetrics) || !strings.Contains(err.Error(), "404") {
		t.Errorf("err %v", err)
	}
	if _, err := os.Stat(o.OutDir); !os.IsNotExist(err) {
		t.Errorf("run directory written for a refused run: %v", err)
	}
	// The engine's /metrics holds no accelerator counter or gauge.
	o = baseOptions(t, ts.URL)
	o.GPUMetrics = []string{ts.URL + "/metrics"}
	if _, err := capture.Run(context.Background(), o); !errors.Is(err, capture.ErrNoGPUMetrics) || !strings.Contains(err.Error(), "no accelerator energy counter") {
		t.Errorf("err %v", err)
	}
	o.GPUCustom = energy.Custom{EnergyCounter: "x", EnergyUnit: "cal"}
	if _, err := capture.Run(context.Background(), o); !errors.Is(err, energy.ErrBadUnit) {
		t.Errorf("err %v", err)
	}
}

// TestShortWindowWarningNamesTheMeasuredWindow: the warning that a
// window is too short for its energy bounds to close names each point ×
// repeat's measured window (first send to last answer, as replay's table
// prints it), not the cell's wall time, which the engine's /metrics
// scrapes and their wait after the point lengthen.
func TestShortWindowWarningNamesTheMeasuredWindow(t *testing.T) {
	ts := gpuSimulator(t, 1)
	o := baseOptions(t, ts.URL)
	o.Plan.Points = []schema.Point{{Concurrency: 2, Requests: 8}}
	o.GPUMetrics = []string{ts.URL + simulator.GPUMetricsPath}
	o.ServerMetrics = capture.ServerMetricsAuto
	res, err := capture.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	rf := readRun(t, o.OutDir)
	if rf.m.ServerMetrics == nil || len(rf.m.ServerMetrics.Scrapes) == 0 {
		t.Fatal("no engine scrapes: the test needs them around the point")
	}
	first, last := int64(math.MaxInt64), int64(0)
	for _, r := range rf.recs {
		if r.Phase == schema.PhaseMeasure {
			first, last = min(first, r.SentNS), max(last, r.EndNS)
		}
	}
	want := fmt.Sprintf("c2/0 (%.2f s)", float64(last-first)/1e9)
	if !strings.Contains(res.EnergyWarning, want) {
		t.Errorf("warning %q, want the measured window %s", res.EnergyWarning, want)
	}
}

// gpuSimulator serves a simulator with n accelerators at time scale 0.01
// for the test's duration.
func gpuSimulator(t *testing.T, n int) *httptest.Server {
	t.Helper()
	cfg := simulator.DefaultConfig()
	cfg.TimeScale, cfg.GPUs = 0.01, n
	sim, err := simulator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(sim)
	t.Cleanup(ts.Close)
	return ts
}
