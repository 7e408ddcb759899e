package simulator_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/benchseal/benchseal/energy"
	"github.com/benchseal/benchseal/simulator"
)

func scrapeGPUs(t *testing.T, base string) *energy.Scrape {
	t.Helper()
	resp, err := http.Get(base + simulator.GPUMetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("GET %s: %s", simulator.GPUMetricsPath, resp.Status)
	}
	s, err := energy.Parse(strings.NewReader(string(b)), nil)
	if err != nil {
		t.Fatalf("parse: %v\n%s", err, b)
	}
	return s
}

func TestSimulatorServesDCGMStyleGPUMetrics(t *testing.T) {
	cfg := simulator.DefaultConfig()
	cfg.GPUs = 2
	base, stop, err := simulator.Start(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	a := scrapeGPUs(t, base)
	time.Sleep(50 * time.Millisecond)
	b := scrapeGPUs(t, base)
	ids := b.Measuring()
	if a.Exporter != energy.ExporterDCGM || len(ids) != 2 || ids[0] != "GPU-benchseal-sim-0000" {
		t.Fatalf("exporter %q devices %v", a.Exporter, ids)
	}
	d0, d1 := a.Devices[ids[0]], b.Devices[ids[0]]
	if d1.Model != "benchseal-sim" || d1.Host != simulator.GPUHostname || *d1.PowerW != simulator.GPUIdleW {
		t.Errorf("device %+v power %v", d1, *d1.PowerW)
	}
	// 50 ms idle at 90 W is 4.5 J; the counter is in whole mJ.
	if got := *d1.EnergyJ - *d0.EnergyJ; got < 4.4 || got > 10 {
		t.Errorf("energy over 50 ms idle: %v J", got)
	}
}

func TestSimulatorWithoutGPUsHasNoGPUMetrics(t *testing.T) {
	base, stop, err := simulator.Start(context.Background(), simulator.DefaultConfig())
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	resp, err := http.Get(base + simulator.GPUMetricsPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Errorf("status %s", resp.Status)
	}
	cfg := simulator.DefaultConfig()
	cfg.GPUs = simulator.MaxGPUs + 1
	if _, err := simulator.New(cfg); !errors.Is(err, simulator.ErrConfig) {
		t.Errorf("gpus %d: %v", cfg.GPUs, err)
	}
}
