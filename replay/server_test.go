package replay_test

import (
	"context"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/servermetrics"
	"github.com/benchseal/benchseal/simulator"
)

func captureWithScrapes(t *testing.T) string {
	t.Helper()
	cfg := simulator.DefaultConfig()
	cfg.TimeScale = 0.05
	sim, err := simulator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(sim)
	t.Cleanup(ts.Close)
	o := capture.Options{
		Endpoint: ts.URL,
		Request:  capture.RequestOptions{Model: "benchseal-sim", API: capture.APIChat, Stream: true, ForceLength: true},
		Plan: capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 2, Requests: 12}},
			Seed: 1, InputTokens: 16, OutputTokens: 8},
		OutDir:                filepath.Join(t.TempDir(), "run"),
		ServerMetrics:         capture.ServerMetricsAuto,
		ServerMetricsInterval: 5 * time.Millisecond,
	}
	if _, err := capture.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	return o.OutDir
}

func replayDir(t *testing.T, dir string) *replay.Result {
	t.Helper()
	rd, err := schema.OpenRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.Replay(context.Background(), rd, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestServerColumnFromStoredScrapesBesideTheClientColumns(t *testing.T) {
	res := replayDir(t, captureWithScrapes(t))
	p := res.Results[0]
	sc := p.Server
	if sc == nil || sc.Column == nil {
		t.Fatalf("no server column: %+v", sc)
	}
	var ttft *servermetrics.HistogramDelta
	for i := range sc.Column.Histograms {
		if sc.Column.Histograms[i].Role == servermetrics.RoleTTFT {
			ttft = &sc.Column.Histograms[i]
		}
	}
	if ttft == nil || ttft.Count != float64(p.Counts.OK) {
		t.Fatalf("server ttft %+v, want one observation per ok request (%d)", ttft, p.Counts.OK)
	}
	// The client's TTFT includes the server's: the difference is the
	// network, client and tokenization time, not negative beyond noise.
	if g := sc.ClientMinusServerTTFTNS; g == nil || *g < -1e6 {
		t.Errorf("client − server ttft mean %v ns", g)
	}
	// The client columns are the client's: the server column changes none
	// of them.
	if p.Dists["ttft_ns"].N != p.Counts.OK {
		t.Errorf("client ttft n %d", p.Dists["ttft_ns"].N)
	}
}

func TestServerColumnAbsentWithReasonForATamperedScrape(t *testing.T) {
	dir := captureWithScrapes(t)
	rd, err := schema.OpenRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	f := rd.Manifest().ServerMetrics.Scrapes[0].File
	p := filepath.Join(dir, schema.AttachmentsDir, filepath.FromSlash(f))
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, append(b, "# edited\n"...), 0o644); err != nil {
		t.Fatal(err)
	}
	sc := replayDir(t, dir).Results[0].Server
	if sc == nil || sc.Column != nil || !strings.Contains(sc.Reason, "sha256 differs") {
		t.Errorf("tampered scrape: %+v", sc)
	}
}

func TestServerColumnFromAPackedBundle(t *testing.T) {
	dir := captureWithScrapes(t)
	out := filepath.Join(t.TempDir(), "run.oci")
	if _, err := artifact.Pack(context.Background(), dir, out, artifact.PackOptions{}); err != nil {
		t.Fatal(err)
	}
	b, err := artifact.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	res, err := replay.Replay(context.Background(), b, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if sc := res.Results[0].Server; sc == nil || sc.Column == nil {
		t.Errorf("bundle server column %+v", sc)
	}
}
