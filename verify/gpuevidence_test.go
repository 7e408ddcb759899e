package verify_test

import (
	"context"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/simulator"
)

// captureGPUs captures plan against a simulator with two accelerators,
// their /gpu-metrics scraped around every point.
func captureGPUs(t *testing.T, plan capture.Plan) *forgeRun {
	t.Helper()
	cfg := simulator.DefaultConfig()
	cfg.Seed, cfg.TimeScale, cfg.GPUs = 7, 0.01, 2
	sim, err := simulator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(sim)
	defer ts.Close()
	o := capture.Options{
		Endpoint:      ts.URL,
		Request:       capture.RequestOptions{Model: "benchseal-sim", API: capture.APIChat, Stream: true, ForceLength: true},
		Plan:          plan,
		OutDir:        filepath.Join(t.TempDir(), "run"),
		SkipPreflight: true,
		Simulator:     true,
		GPUMetrics:    []string{ts.URL + simulator.GPUMetricsPath},
	}
	if _, err := capture.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	return readForgeRun(t, o.OutDir)
}

// TestEditedGPUScrapeIndexIsRejected: a publisher who edits a stored
// accelerator scrape must edit its sha256 in the manifest too; one who
// edits either alone, or drops a device from the list of those counted,
// is rejected by validate (so pack) and by verify.
func TestEditedGPUScrapeIndexIsRejected(t *testing.T) {
	plan := capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 2, Requests: 8}}, Seed: 7, InputTokens: 16, OutputTokens: 16}
	fr := captureGPUs(t, plan)
	g := fr.m.GPUMetrics
	if g == nil || len(g.Scrapes) < 2 || len(g.Endpoints[0].Devices) != 2 || g.Endpoints[0].Devices[0].Serving != schema.ServingDeclared {
		t.Fatalf("gpu metrics %+v", g)
	}
	wantVerified(t, fr)
	bundle := fr.pack(t)
	g.Scrapes[0].SHA256 = strings.Repeat("0", 64)
	verr, res, err := fr.forge(t, bundle)
	wantRejected(t, verr, res, err, "differs from the manifest's")

	fr = captureGPUs(t, plan)
	bundle = fr.pack(t)
	fr.m.GPUMetrics.Endpoints[0].Devices = fr.m.GPUMetrics.Endpoints[0].Devices[:1]
	verr, res, err = fr.forge(t, bundle)
	wantRejected(t, verr, res, err, "but its first scrape")
}
