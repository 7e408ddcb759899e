package replay

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/energy"
	"github.com/benchseal/benchseal/schema"
)

type mapOpener map[string][]byte

func (m mapOpener) ReadAttachment(name string) ([]byte, error) {
	b, ok := m[name]
	if !ok {
		return nil, errors.New("no such attachment")
	}
	return b, nil
}

// gpuRun: one device at a steady 200 W scraped every second from 0 to
// 10 s (the counter in mJ), for point p0 repeat 0.
func gpuRun() (*schema.GPUMetrics, mapOpener) {
	g := &schema.GPUMetrics{Endpoints: []schema.GPUEndpoint{{URL: "http://127.0.0.1:9400/metrics"}}}
	files := mapOpener{}
	for i := int64(0); i <= 10; i++ {
		body := fmt.Sprintf("DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{UUID=\"G\"} %d\nDCGM_FI_DEV_POWER_USAGE{UUID=\"G\"} 200\nDCGM_FI_DEV_GPU_UTIL{UUID=\"G\"} 40\n", 5_000_000+i*200_000)
		name := fmt.Sprintf("gpu-metrics/%06d.prom", i+1)
		h := sha256.Sum256([]byte(body))
		files[name] = []byte(body)
		when := schema.ScrapeDuring
		switch i {
		case 0:
			when = schema.ScrapeBefore
		case 10:
			when = schema.ScrapeAfter
		}
		g.Scrapes = append(g.Scrapes, schema.GPUScrape{Point: "p0", When: when, FromNS: i * 1e9, AtNS: i * 1e9, File: name, SHA256: hex.EncodeToString(h[:])})
	}
	return g, files
}

func TestEnergyColumnPerTokenAndCost(t *testing.T) {
	g, files := gpuRun()
	p := &PointResult{Point: "p0", window: &[2]int64{2e9, 6e9}, goodTokens: big.NewInt(400), OutputTokens: Int(800), Counts: Counts{Good: 8}}
	c := energyColumn(files, g, p, big.NewRat(36, 100)) // 0.36 per kWh
	if c.Reason != "" {
		t.Fatal(c.Reason)
	}
	// 4 s at 200 W: 800 J, exactly the counter's delta (scrapes on the edges).
	if c.Energy.Value != 800 || c.Energy.Lo != 800 || c.Energy.Hi != 800 {
		t.Errorf("energy %+v", c.Energy)
	}
	if c.MeanPower.Value != 200 || c.PerOutputToken.Value != 1 || c.PerGoodToken.Value != 2 || c.PerGoodRequest.Value != 100 {
		t.Errorf("power %+v per output %+v per good token %+v per good request %+v", c.MeanPower, c.PerOutputToken, c.PerGoodToken, c.PerGoodRequest)
	}
	// 800 J = 1/4500 kWh, at 0.36: 0.00008.
	if math.Abs(c.Cost.Value-0.00008) > 1e-15 {
		t.Errorf("cost %+v", c.Cost)
	}
	if c.Boundary != energy.Boundary(energy.ExporterDCGM) || len(c.Power) != 11 || c.Power[3].W != 200 || *c.PeakUtilPct != 40 {
		t.Errorf("column %+v", c)
	}
}

func TestEnergyColumnNullReasons(t *testing.T) {
	g, files := gpuRun()
	p := &PointResult{Point: "p0", window: &[2]int64{2e9, 6e9}, OutputTokens: Int(0), Counts: Counts{}}
	c := energyColumn(files, g, p, nil)
	if c.PerGoodToken.Reason != "no SLO set: no request is judged good" || c.PerOutputToken.Reason != "no output tokens in the window" || c.Cost.Reason == "" {
		t.Errorf("%+v", c)
	}
	if c := energyColumn(files, g, &PointResult{Point: "p0"}, nil); !strings.Contains(c.Reason, "not one measured from its records") {
		t.Errorf("no window: %+v", c)
	}
	files["gpu-metrics/000004.prom"] = []byte("edited")
	if c := energyColumn(files, g, p, nil); !strings.Contains(c.Reason, "sha256") {
		t.Errorf("edited scrape: %+v", c)
	}
	if c := energyColumn(nil, g, p, nil); !strings.Contains(c.Reason, "attachments are not available") {
		t.Errorf("no attachments: %+v", c)
	}
}
