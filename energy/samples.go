package energy

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/servermetrics"
)

// MaxScrapeBytes bounds one stored scrape read.
const MaxScrapeBytes = servermetrics.MaxScrapeBytes

// CustomOf returns the user-named rows of manifest.gpu_metrics
// (energy_counter, power_gauge), or the error naming an unknown unit.
func CustomOf(g *schema.GPUMetrics) ([]Name, error) {
	var c Custom
	if g.EnergyCounter != nil {
		c.EnergyCounter, c.EnergyUnit = g.EnergyCounter.Name, g.EnergyCounter.Unit
	}
	if g.PowerGauge != nil {
		c.PowerGauge, c.PowerUnit = g.PowerGauge.Name, g.PowerGauge.Unit
	}
	return c.Names()
}

// ReadScrape reads the stored scrape s through read (by attachment name,
// relative to attachments/), checks its size and its sha256 against the
// manifest's and parses it with the rows custom. Every reader of stored
// accelerator scrapes (validate, pack, verify, replay) goes through it.
func ReadScrape(read func(name string) ([]byte, error), s schema.GPUScrape, custom []Name) (*Scrape, []byte, error) {
	b, err := read(s.File)
	if err != nil {
		return nil, nil, fmt.Errorf("the scrape %s/%s: %w", schema.AttachmentsDir, s.File, err)
	}
	if len(b) > MaxScrapeBytes {
		return nil, nil, fmt.Errorf("the scrape %s/%s: larger than %d bytes", schema.AttachmentsDir, s.File, MaxScrapeBytes)
	}
	if h := sha256.Sum256(b); hex.EncodeToString(h[:]) != s.SHA256 {
		return nil, nil, fmt.Errorf("the scrape %s/%s: sha256 %s differs from the manifest's %s", schema.AttachmentsDir, s.File, hex.EncodeToString(h[:]), s.SHA256)
	}
	sc, err := parseBytes(b, custom)
	if err != nil {
		return nil, nil, fmt.Errorf("the scrape %s/%s: %w", schema.AttachmentsDir, s.File, err)
	}
	return sc, b, nil
}

// PointSamples reads the stored scrapes of one point × repeat, per
// endpoint (index of manifest.gpu_metrics.endpoints); a failed scrape is
// a Sample with no Scrape. Any scrape that cannot be read is an error.
func PointSamples(g *schema.GPUMetrics, read func(name string) ([]byte, error), point string, repeat int) ([][]Sample, error) {
	custom, err := CustomOf(g)
	if err != nil {
		return nil, err
	}
	out := make([][]Sample, len(g.Endpoints))
	for _, s := range g.Scrapes {
		if s.Point != point || s.Repeat != repeat {
			continue
		}
		if s.Endpoint < 0 || s.Endpoint >= len(out) {
			return nil, errcond.Errorf(ErrMalformed, "accelerator scrape %s: endpoint %d not listed", s.File, s.Endpoint)
		}
		smp := Sample{FromNS: s.FromNS, AtNS: s.AtNS, MaxAgeNS: int64(max(g.MaxAge, 0))}
		if s.Error == "" {
			if smp.Scrape, _, err = ReadScrape(read, s, custom); err != nil {
				return nil, err
			}
		}
		out[s.Endpoint] = append(out[s.Endpoint], smp)
	}
	return out, nil
}

// PointEnergy is the energy of the window [startNS, endNS] of one point ×
// repeat over every endpoint of g (Compute per endpoint, then Sum); null
// with the reason when a scrape cannot be read.
func PointEnergy(g *schema.GPUMetrics, read func(name string) ([]byte, error), point string, repeat int, startNS, endNS int64) Result {
	per, err := PointSamples(g, read, point, repeat)
	if err != nil {
		return Result{StartNS: startNS, EndNS: endNS, Energy: Null(err.Error())}
	}
	rs := make([]Result, len(per))
	for i, s := range per {
		rs[i] = Compute(s, startNS, endNS)
	}
	return Sum(rs)
}
