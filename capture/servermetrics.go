// Scraping the engine's Prometheus /metrics around every point × repeat.

package capture

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/servermetrics"
)

// ServerMetricsAuto, as Options.ServerMetrics, scrapes the endpoint's
// /metrics when it answers with an engine's metrics, and nothing
// otherwise (said in the manifest's notes).
const ServerMetricsAuto = "auto"

// DefaultServerMetricsInterval is the period of the scrapes during a
// point.
const DefaultServerMetricsInterval = 5 * time.Second

// scrapeTimeout bounds one scrape (validate relies on it).
const scrapeTimeout = time.Duration(schema.ScrapeTimeoutNS)

type scraper struct {
	r        *runner
	url      string
	interval time.Duration
	dir      string
	mu       sync.Mutex
	list     []schema.Scrape
	// files writes the answers of list (attachWriter).
	files attachWriter
	seq   int
	// engine is the engine the first scrape showed; first is that
	// scrape, taken before any request, and firstWall when it arrived.
	engine    string
	first     []byte
	firstWall time.Time
}

// newScraper resolves Options.ServerMetrics against the endpoint: ""
// is off, ServerMetricsAuto uses base/metrics when it answers with known
// engine metrics (nil and a note otherwise), and an explicit URL must
// answer so, or the run does not start.
func (r *runner) newScraper(ctx context.Context, base string, m *schema.Manifest) (*scraper, error) {
	want := r.o.ServerMetrics
	if want == "" {
		return nil, nil
	}
	url := want
	if want == ServerMetricsAuto {
		url = base + "/metrics"
	}
	s := &scraper{r: r, url: url, interval: r.o.ServerMetricsInterval, dir: filepath.Join(r.o.OutDir, schema.AttachmentsDir)}
	if s.interval <= 0 {
		s.interval = DefaultServerMetricsInterval
	}
	b, err := s.get(ctx)
	s.firstWall = time.Now()
	if err == nil {
		var snap *servermetrics.Snapshot
		if snap, err = servermetrics.Parse(bytes.NewReader(b)); err == nil {
			if s.engine = servermetrics.DetectEngine(snap); s.engine == "" {
				err = fmt.Errorf("no vLLM, SGLang, TGI or llama.cpp metric names in the answer")
			}
		}
	}
	s.first = b
	if err != nil {
		if want == ServerMetricsAuto {
			setNote(m, "server_metrics", fmt.Sprintf("not scraped: %s did not answer with engine metrics (%v)", url, err))
			return nil, nil
		}
		return nil, errcond.Errorf(ErrNoServerMetrics, "capture failed: server metrics %s: no engine metrics: %w", url, err)
	}
	m.ServerMetrics = &schema.ServerMetrics{URL: url, Interval: schema.Duration(s.interval), Scrapes: []schema.Scrape{}}
	return s, nil
}

func (s *scraper) get(ctx context.Context) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, s.url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	if s.r.o.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+s.r.o.APIKey)
	}
	resp, err := s.r.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, servermetrics.MaxScrapeBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > servermetrics.MaxScrapeBytes {
		return nil, fmt.Errorf("answer larger than %d bytes", servermetrics.MaxScrapeBytes)
	}
	return b, nil
}

// take scrapes once and keeps the answer byte for byte as an attachment
// (written by s.files, not in the scrape loop).
func (s *scraper) take(ctx context.Context, c *cell, when string) {
	from := s.r.now()
	b, err := s.get(ctx)
	sc := schema.Scrape{Point: c.pt.Name, Repeat: c.repeat, When: when, AtNS: s.r.now(), FromNS: &from}
	s.mu.Lock()
	defer s.mu.Unlock()
	if err == nil {
		s.seq++
		name := fmt.Sprintf("%s/%06d.prom", schema.ServerMetricsDir, s.seq)
		h := sha256.Sum256(b)
		sc.File, sc.SHA256 = name, hex.EncodeToString(h[:])
		s.files.write(len(s.list), filepath.Join(s.dir, filepath.FromSlash(name)), b)
	} else {
		sc.Error = schema.EscapeText(strings.TrimSpace(err.Error()), false) // a manifest string: no control characters
	}
	s.list = append(s.list, sc)
}

// periodically calls f every interval until the returned stop is called;
// stop returns once no call of f is running. Server and accelerator
// scrapes during a point both use it.
func periodically(interval time.Duration, f func()) (stop func()) {
	quit := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(interval)
		defer t.Stop()
		for {
			select {
			case <-t.C:
				f()
			case <-quit:
				return
			}
		}
	}()
	return func() { close(quit); <-done }
}

// around scrapes before cell c, every interval during it, and after it.
func (s *scraper) around(ctx context.Context, c *cell, run func()) {
	if s == nil || c.phase != schema.PhaseMeasure {
		run()
		return
	}
	// Scrapes are not stopped by ctx: the after scrape of an interrupted
	// point is still worth having.
	sctx := context.WithoutCancel(ctx)
	s.take(sctx, c, schema.ScrapeBefore)
	stop := periodically(s.interval, func() { s.take(sctx, c, schema.ScrapeDuring) })
	run()
	stop()
	// An engine adds a finished request to its counters just after
	// writing its last bytes (schema.CounterLagNS): after that long its
	// counters show every request of the point, so the after scrape must
	// hold the records' counts in full, with no allowance for requests
	// not yet counted (which a key holder could fill with invented
	// tokens).
	time.Sleep(time.Duration(schema.CounterLagNS))
	s.take(sctx, c, schema.ScrapeAfter)
}

// record copies the scrapes into the manifest once their files are
// written.
func (s *scraper) record(m *schema.Manifest) {
	if s == nil {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, why := range s.files.done() {
		s.list[i].File, s.list[i].SHA256, s.list[i].Error = "", "", why
	}
	m.ServerMetrics.Scrapes = append(m.ServerMetrics.Scrapes[:0], s.list...)
}
