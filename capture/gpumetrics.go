// Scraping accelerator exporters (DCGM, AMD device-metrics-exporter)
// around every point × repeat, for the energy of each.

package capture

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/benchseal/benchseal/energy"
	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/schema"
)

// DefaultGPUMetricsInterval is the period of the accelerator scrapes
// during a point: 1 s, five times finer than the engine's. The energy of a
// point is bounded by the counter's rise between the scrapes around its
// window: with fresh readings the bounds are apart by about two intervals
// of full power (a 700 W board scraped every 1 s: up to 1.4 kJ on a point
// of any length, 2.3 % of a one-minute point at full power). An exporter
// that collects less often (DefaultGPUMetricsMaxAge) widens them by its
// own interval; scraping faster than it collects adds scrapes, not
// information.
const DefaultGPUMetricsInterval = time.Second

// DefaultGPUMetricsMaxAge is how old an exporter's readings are taken to
// be at most when nothing else is said: the DCGM exporter collects its
// fields every --collect-interval (-c, DCGM_EXPORTER_INTERVAL), 30000 ms
// by default (NVIDIA/dcgm-exporter's command-line flags), and a scrape
// returns the last collected values ("a scrape does not force DCGM to
// query the hardware": NVIDIA's "Configure Prometheus for DCGM Exporter").
// A reading is then known only to lie in the 30 s before its scrape.
const DefaultGPUMetricsMaxAge = 30 * time.Second

// gpuScraper scrapes every accelerator endpoint of Options.GPUMetrics.
type gpuScraper struct {
	r        *runner
	urls     []string
	interval time.Duration
	maxAge   time.Duration
	custom   []energy.Name
	dir      string
	serving  string
	mu       sync.Mutex
	list     []schema.GPUScrape
	// files writes the answers of list (attachWriter).
	files attachWriter
	seq   int
	// short lists the point × repeat windows shorter than
	// shortWindowIntervals scrape intervals.
	short []string
}

// shortWindowIntervals: a window shorter than two scrape intervals may
// hold fewer than two scrapes, and its energy's lower bound (the rise
// between scrapes inside it) is then 0: the bounds cannot close.
const shortWindowIntervals = 2

// newGPUScraper checks that every endpoint of Options.GPUMetrics answers
// with accelerator energy or power metrics before the run (nil when none
// is named); one that does not stops the run before anything is sent.
func (r *runner) newGPUScraper(ctx context.Context, m *schema.Manifest) (*gpuScraper, error) {
	o := r.o
	if len(o.GPUMetrics) == 0 {
		return nil, nil
	}
	custom, err := o.GPUCustom.Names()
	if err != nil {
		return nil, fmt.Errorf("capture failed: %w", err)
	}
	g := &gpuScraper{r: r, urls: o.GPUMetrics, interval: o.GPUMetricsInterval, custom: custom,
		dir: filepath.Join(o.OutDir, schema.AttachmentsDir), serving: o.GPUServing}
	if g.interval <= 0 {
		g.interval = DefaultGPUMetricsInterval
	}
	if g.serving == "" {
		g.serving = schema.ServingDeclared
	}
	if g.serving != schema.ServingSimulator {
		g.maxAge = max(o.GPUMetricsMaxAge, 0)
	}
	gm := &schema.GPUMetrics{Interval: schema.Duration(g.interval), MaxAge: schema.Duration(g.maxAge), Scrapes: []schema.GPUScrape{}}
	for _, u := range g.urls {
		b, err := g.get(ctx, u)
		var sc *energy.Scrape
		if err == nil {
			sc, err = energy.Parse(bytes.NewReader(b), custom)
			switch {
			case err != nil:
			case len(sc.Absent) > 0:
				err = fmt.Errorf("no metric %s (named by --energy-counter/--power-gauge) in the answer", strings.Join(sc.Absent, ", "))
			case len(sc.Measuring()) == 0:
				err = fmt.Errorf("no accelerator energy counter or power gauge (DCGM, AMD device-metrics-exporter or --energy-counter/--power-gauge names) in the answer")
			}
		}
		if err != nil {
			return nil, errcond.Errorf(ErrNoGPUMetrics, "capture failed: gpu metrics %s: no accelerator metrics: %w", u, err)
		}
		gm.Endpoints = append(gm.Endpoints, schema.GPUEndpoint{URL: u, Devices: []schema.GPUDevice{}})
	}
	c := o.GPUCustom
	if c.EnergyCounter != "" {
		gm.EnergyCounter = &schema.GPUMetricName{Name: c.EnergyCounter, Unit: custom[0].Unit}
	}
	if c.PowerGauge != "" {
		gm.PowerGauge = &schema.GPUMetricName{Name: c.PowerGauge, Unit: custom[len(custom)-1].Unit}
	}
	m.GPUMetrics = gm
	return g, nil
}

func (g *gpuScraper) get(ctx context.Context, url string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, scrapeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", "text/plain; version=0.0.4")
	resp, err := g.r.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("HTTP %s", resp.Status)
	}
	b, err := io.ReadAll(io.LimitReader(resp.Body, energy.MaxScrapeBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) > energy.MaxScrapeBytes {
		return nil, fmt.Errorf("answer larger than %d bytes", energy.MaxScrapeBytes)
	}
	return b, nil
}

// take scrapes every endpoint once, at once, and keeps the answers byte
// for byte as attachments.
func (g *gpuScraper) take(ctx context.Context, c *cell, when string) {
	var wg sync.WaitGroup
	for i, u := range g.urls {
		wg.Add(1)
		go func() {
			defer wg.Done()
			g.takeOne(ctx, c, when, i, u)
		}()
	}
	wg.Wait()
}

func (g *gpuScraper) takeOne(ctx context.Context, c *cell, when string, i int, url string) {
	from := g.r.now()
	b, err := g.get(ctx, url)
	sc := schema.GPUScrape{Endpoint: i, Point: c.pt.Name, Repeat: c.repeat, When: when, FromNS: from, AtNS: g.r.now()}
	g.mu.Lock()
	defer g.mu.Unlock()
	if err == nil {
		g.seq++
		name := fmt.Sprintf("%s/%06d.prom", schema.GPUMetricsDir, g.seq)
		h := sha256.Sum256(b)
		sc.File, sc.SHA256 = name, hex.EncodeToString(h[:])
		g.files.write(len(g.list), filepath.Join(g.dir, filepath.FromSlash(name)), b)
	} else {
		sc.Error = schema.EscapeText(strings.TrimSpace(err.Error()), false)
	}
	g.list = append(g.list, sc)
}

// around scrapes every endpoint before cell c, every interval during it,
// and at once after it: the scrapes just outside the point's window
// bound its energy from above, the ones inside from below.
func (g *gpuScraper) around(ctx context.Context, c *cell, run func()) {
	if g == nil || c.phase != schema.PhaseMeasure {
		run()
		return
	}
	sctx := context.WithoutCancel(ctx)
	g.take(sctx, c, schema.ScrapeBefore)
	stop := periodically(g.interval, func() { g.take(sctx, c, schema.ScrapeDuring) })
	start := g.r.now()
	run()
	// The measured window (first send to last answer), as the run's
	// table prints it; the cell's wall time, which the engine's /metrics
	// scrapes around it lengthen, only when no request was counted.
	d := time.Duration(g.r.now() - start)
	if c.stats != nil {
		if w := c.stats.window(); w > 0 {
			d = w
		}
	}
	if d < shortWindowIntervals*g.interval {
		g.mu.Lock()
		g.short = append(g.short, fmt.Sprintf("%s/%d (%s s)", c.pt.Name, c.repeat, digits.Places(d.Seconds(), 2)))
		g.mu.Unlock()
	}
	if g.maxAge > 0 {
		// The readings of a scrape taken now may predate the point's end
		// by up to maxAge: the scrapes go on until they cannot.
		select {
		case <-time.After(g.maxAge):
		case <-ctx.Done():
		}
	}
	stop()
	g.take(sctx, c, schema.ScrapeAfter)
}

// record copies the scrapes and each endpoint's devices (those its first
// stored scrape measures) into the manifest, once their files are
// written, and returns the warning for the windows too short for their
// energy bounds to close ("" when none).
func (g *gpuScraper) record(m *schema.Manifest) string {
	if g == nil {
		return ""
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	for i, why := range g.files.done() {
		g.list[i].File, g.list[i].SHA256, g.list[i].Error = "", "", why
	}
	gm := m.GPUMetrics
	gm.Scrapes = append(gm.Scrapes[:0], g.list...)
	for i := range gm.Endpoints {
		devs := []schema.GPUDevice{}
		if s := g.firstStored(i); s != nil {
			for _, id := range s.Measuring() {
				d := s.Devices[id]
				devs = append(devs, schema.GPUDevice{ID: id, IDFrom: d.IDFrom, Model: schema.EscapeText(d.Model, false), Host: schema.EscapeText(d.Host, false), Serving: g.serving})
			}
		}
		slices.SortFunc(devs, func(a, b schema.GPUDevice) int { return strings.Compare(a.ID, b.ID) })
		gm.Endpoints[i].Devices = devs
	}
	if len(g.short) == 0 {
		return ""
	}
	return fmt.Sprintf("the measured window of %d point × repeat(s) (%s) is shorter than two accelerator scrape intervals (%s): fewer than two scrapes fall inside it, so its energy lower bound is 0 and the bounds cannot close; give --gpu-metrics-interval a shorter period or the points more requests",
		len(g.short), strings.Join(g.short, ", "), g.interval)
}

// firstStored parses endpoint i's first stored scrape (nil when it has
// none): its measuring devices are the ones the manifest lists. It parsed
// before the run, so it parses; one that no longer does lists no device,
// and validate says why.
func (g *gpuScraper) firstStored(i int) *energy.Scrape {
	for _, sc := range g.list {
		if sc.Endpoint != i || sc.File == "" {
			continue
		}
		s := &energy.Scrape{}
		if b, err := os.ReadFile(filepath.Join(g.dir, filepath.FromSlash(sc.File))); err == nil {
			if p, err := energy.Parse(bytes.NewReader(b), g.custom); err == nil {
				s = p
			}
		}
		return s
	}
	return nil
}
