package capture_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/schema"
)

func TestServerMetricsScrapedAroundEveryPointAndKeptByteForByte(t *testing.T) {
	ts := fastSim(t, nil)
	o := baseOptions(t, ts.URL)
	o.ServerMetrics = capture.ServerMetricsAuto
	o.ServerMetricsInterval = time.Millisecond
	o.Plan.Points = []schema.Point{{Concurrency: 2, Requests: 20}, {Concurrency: 4, Requests: 20}}
	o.Plan.Warmup.Requests = 2
	if _, err := capture.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	if err := schema.ValidateRunDocuments(o.OutDir, 10); err != nil {
		t.Fatalf("run with scrapes does not validate: %v", err)
	}
	m := readRun(t, o.OutDir).m
	sm := m.ServerMetrics
	if sm == nil || sm.URL != ts.URL+"/metrics" {
		t.Fatalf("server_metrics %+v", sm)
	}
	whens := map[string][]string{}
	for _, s := range sm.Scrapes {
		if s.Error != "" {
			t.Errorf("scrape failed: %+v", s)
			continue
		}
		whens[s.Point] = append(whens[s.Point], s.When)
		b, err := os.ReadFile(filepath.Join(o.OutDir, schema.AttachmentsDir, filepath.FromSlash(s.File)))
		if err != nil {
			t.Fatal(err)
		}
		if h := sha256.Sum256(b); hex.EncodeToString(h[:]) != s.SHA256 || !strings.Contains(string(b), "vllm:time_to_first_token_seconds_bucket") {
			t.Errorf("%s: digest or content wrong", s.File)
		}
	}
	for _, pt := range m.Load.Points {
		w := whens[pt.Name]
		if len(w) < 2 || w[0] != schema.ScrapeBefore || w[len(w)-1] != schema.ScrapeAfter {
			t.Errorf("point %s scrapes %v, want before ... after", pt.Name, w)
		}
	}
}

func TestServerMetricsAutoWithoutMetricsSaysSoAndExplicitURLMustAnswer(t *testing.T) {
	sim := fastSim(t, nil)
	// A proxy without /metrics.
	proxy := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/metrics" {
			http.NotFound(w, r)
			return
		}
		req, _ := http.NewRequestWithContext(r.Context(), r.Method, sim.URL+r.URL.Path, r.Body)
		req.Header = r.Header
		resp, err := http.DefaultTransport.RoundTrip(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		defer resp.Body.Close()
		for k, v := range resp.Header {
			w.Header()[k] = v
		}
		w.WriteHeader(resp.StatusCode)
		buf := make([]byte, 4096)
		for {
			n, err := resp.Body.Read(buf)
			w.Write(buf[:n])
			w.(http.Flusher).Flush()
			if err != nil {
				return
			}
		}
	}))
	defer proxy.Close()
	o := baseOptions(t, proxy.URL)
	o.ServerMetrics = capture.ServerMetricsAuto
	if _, err := capture.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	m := readRun(t, o.OutDir).m
	if m.ServerMetrics != nil || !strings.Contains(m.Notes["server_metrics"], "not scraped") {
		t.Errorf("auto without /metrics: server_metrics %+v, note %q", m.ServerMetrics, m.Notes["server_metrics"])
	}
	o = baseOptions(t, proxy.URL)
	o.ServerMetrics = proxy.URL + "/metrics"
	if _, err := capture.Run(context.Background(), o); !errors.Is(err, capture.ErrNoServerMetrics) {
		t.Errorf("explicit URL that does not answer: err %v", err)
	}
	if _, err := os.Stat(o.OutDir); !os.IsNotExist(err) {
		t.Errorf("run directory written for a refused run: %v", err)
	}
}
