package artifact_test

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/schema"
)

// idleRun is a run of one endpoint with two devices scraped every second
// from 0 to 10 s, a request in flight from 3 s to 5 s: the counters rise
// by the power shown (90 W idle, 300 W busy) over each second; edit may
// change a scrape's readings (mJ, W) before it is hashed.
func idleRun(edit func(i int, mJ []float64, w []float64)) (*schema.Manifest, map[string][]byte) {
	g := &schema.GPUMetrics{Endpoints: []schema.GPUEndpoint{{URL: "http://127.0.0.1:9400/metrics",
		Devices: []schema.GPUDevice{{ID: "GPU-a", IDFrom: "UUID", Serving: schema.ServingDeclared}, {ID: "GPU-b", IDFrom: "UUID", Serving: schema.ServingDeclared}}}}}
	files := map[string][]byte{}
	mJ := []float64{5e6, 7e6}
	for i := 0; i <= 10; i++ {
		busy := i > 3 && i <= 5 // the second ending at this scrape was busy
		w := []float64{90, 90}
		if busy {
			w = []float64{300, 300}
		}
		if i > 0 {
			for d := range mJ {
				mJ[d] += w[d] * 1000
			}
		}
		cm, cw := append([]float64(nil), mJ...), append([]float64(nil), w...)
		if edit != nil {
			edit(i, cm, cw)
		}
		var b strings.Builder
		for d, id := range []string{"GPU-a", "GPU-b"} {
			fmt.Fprintf(&b, "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"%d\",UUID=%q} %.0f\nDCGM_FI_DEV_POWER_USAGE{gpu=\"%d\",UUID=%q} %g\n", d, id, cm[d], d, id, cw[d])
		}
		name := fmt.Sprintf("gpu-metrics/%06d.prom", i+1)
		h := sha256.Sum256([]byte(b.String()))
		files[name] = []byte(b.String())
		at := int64(i) * 1e9
		g.Scrapes = append(g.Scrapes, schema.GPUScrape{Point: "c1", When: schema.ScrapeDuring, FromNS: at - 1e6, AtNS: at, File: name, SHA256: hex.EncodeToString(h[:])})
	}
	g.Scrapes[0].FromNS = 0
	return &schema.Manifest{Evidence: schema.EvidenceSelfRun, GPUMetrics: g}, files
}

var idleBusy = []schema.Span{{StartNS: 3e9, EndNS: 5e9}}

func TestGPUIdleEnergyWithinIdlePowerPasses(t *testing.T) {
	m, files := idleRun(nil)
	probs, notes := artifact.CheckGPUIdle(m, "manifest.json", reader(files), idleBusy)
	if len(probs) > 0 || len(notes) > 0 {
		t.Fatalf("problems %v, notes %v", probs, notes)
	}
}

// TestGPUIdleEnergyAboveIdlePowerIsRejected: a publisher who moves 500 J
// of device b's energy into the idle second from 7 s to 8 s (every later
// reading raised, re-hashed: the stored-file check passes) is caught; so
// is one who keeps the counter but shows a lower idle gauge than the
// counter's rise.
func TestGPUIdleEnergyAboveIdlePowerIsRejected(t *testing.T) {
	m, files := idleRun(func(i int, mJ, _ []float64) {
		if i >= 8 {
			mJ[1] += 500e3
		}
	})
	probs, _ := artifact.CheckGPUIdle(m, "manifest.json", reader(files), idleBusy)
	if len(probs) != 1 || probs[0].Field != "gpu_metrics.scrapes[8]" ||
		!strings.Contains(probs[0].Message, "device GPU-b's energy counter rose 590.000 J between attachments/gpu-metrics/000008.prom and attachments/gpu-metrics/000009.prom (1.001 s) with no request of the run in flight, more than its idle power 90.000 W") {
		t.Fatalf("problems %v", probs)
	}
	// Readings moved while the request ran are not idle energy.
	m, files = idleRun(func(i int, mJ, _ []float64) {
		if i >= 5 {
			mJ[1] += 500e3
		}
	})
	if probs, _ := artifact.CheckGPUIdle(m, "manifest.json", reader(files), idleBusy); len(probs) != 0 {
		t.Fatalf("energy moved within the busy span flagged: %v", probs)
	}
	// Without busy spans every scrape is an idle reading, 300 W ones too:
	// the bound is the device's own highest idle reading, which then
	// explains the busy seconds' rise.
	m, files = idleRun(nil)
	if probs, _ := artifact.CheckGPUIdle(m, "manifest.json", reader(files), nil); len(probs) != 0 {
		t.Fatalf("with no busy span the scrapes at 300 W are idle readings too, so 300 W bounds: %v", probs)
	}
}

func TestGPUIdleWithoutPowerGaugeIsNotChecked(t *testing.T) {
	m, files := idleRun(nil)
	for name, b := range files {
		var keep []string
		for _, l := range strings.SplitAfter(string(b), "\n") {
			if !strings.HasPrefix(l, "DCGM_FI_DEV_POWER_USAGE") {
				keep = append(keep, l)
			}
		}
		files[name] = []byte(strings.Join(keep, ""))
		h := sha256.Sum256(files[name])
		for i := range m.GPUMetrics.Scrapes {
			if m.GPUMetrics.Scrapes[i].File == name {
				m.GPUMetrics.Scrapes[i].SHA256 = hex.EncodeToString(h[:])
			}
		}
	}
	probs, notes := artifact.CheckGPUIdle(m, "manifest.json", reader(files), idleBusy)
	if len(probs) != 0 || len(notes) != 1 || !strings.Contains(notes[0], "not checked, no power reading with nothing in flight") {
		t.Fatalf("problems %v notes %v", probs, notes)
	}
}

// TestStaleReadingsAreNotIdleEnergyWithinMaxAge: an exporter answers with
// the values it last collected (the DCGM exporter every 30 s unless told
// otherwise), so a scrape taken after the busy span may still report the
// counter rising from that span. Readings two seconds stale make an
// honest run's idle seconds show busy energy: with max_age 0 that is
// flagged, with the exporter's max_age stated (gpu_metrics.max_age) the
// readings may lie that far back and nothing is flagged.
func TestStaleReadingsAreNotIdleEnergyWithinMaxAge(t *testing.T) {
	var hist [][]float64
	m, files := idleRun(func(i int, mJ, w []float64) {
		hist = append(hist, append([]float64(nil), mJ...))
		if i >= 2 {
			copy(mJ, hist[i-2]) // the counter as collected two seconds earlier
		} else {
			copy(mJ, hist[0])
		}
	})
	if probs, _ := artifact.CheckGPUIdle(m, "manifest.json", reader(files), idleBusy); len(probs) == 0 {
		t.Fatal("stale readings read as fresh: want the busy energy flagged in the idle seconds after the span")
	}
	m.GPUMetrics.MaxAge = schema.Duration(2 * 1e9)
	if probs, _ := artifact.CheckGPUIdle(m, "manifest.json", reader(files), idleBusy); len(probs) != 0 {
		t.Fatalf("readings up to max_age old flagged: %v", probs)
	}
}

// floorForged is idleRun with GPU-a's counter rising by only rise J over
// the busy second ending at scrape 5 (gauges 300 W at both ends), every
// later reading shifted down with it.
func floorForged(rise float64) (*schema.Manifest, map[string][]byte) {
	return idleRun(func(i int, mJ, _ []float64) {
		if i >= 5 {
			mJ[0] -= (300 - rise) * 1000
		}
	})
}

func TestGPUCounterAtIdleFloorWhileBusyIsRejected(t *testing.T) {
	// 82 J over a pair at least 0.999 s apart: above the run's lowest
	// reading, 90 W × 0.999 s less 10 %, so the run-wide check passes it;
	// below 300 W × 0.999 s less 20 %, the pair's own gauges.
	m, files := floorForged(82)
	if probs := artifact.CheckGPUEvidence(m, "manifest.json", reader(files)); len(probs) != 0 {
		t.Fatalf("the run-wide check should pass the idle-floor counter: %v", probs)
	}
	probs, _ := artifact.CheckGPUIdle(m, "manifest.json", reader(files), idleBusy)
	if len(probs) != 1 {
		t.Fatalf("problems %v, want one", probs)
	}
	for _, want := range []string{`gpu_metrics.scrapes[5]`, "GPU-a", "82.000 J", "000005.prom", "000006.prom", "0.999 s", "in flight throughout", "300.000 W", "at least 239.758 J"} {
		if !strings.Contains(probs[0].Field+" "+probs[0].Message, want) {
			t.Errorf("problem %q lacks %q", probs[0], want)
		}
	}
	// The same rise across a pair with an idle gap in it keeps the idle
	// floor: without the busy span the pair is idle, and checked as such.
	if probs, _ := artifact.CheckGPUIdle(m, "manifest.json", reader(files), []schema.Span{{StartNS: 3e9, EndNS: 4.5e9}}); len(probs) != 0 {
		t.Fatalf("a pair with an idle gap got the busy bound: %v", probs)
	}
}

func TestGPUCounterDippingBelowBusyGaugesWithinToleranceIsAccepted(t *testing.T) {
	// 85 % of the gauges: power dipping between two samples while batches
	// drain is within GPUBusyTolerance.
	m, files := floorForged(255)
	if probs, _ := artifact.CheckGPUIdle(m, "manifest.json", reader(files), idleBusy); len(probs) != 0 {
		t.Fatalf("problems %v", probs)
	}
}

func TestImportedReadingsAreNotHeldToTheirBusyGauges(t *testing.T) {
	// Imported telemetry of unknown age: two collections may carry one
	// exporter reading, so a busy pair may show no rise at 300 W.
	m, files := floorForged(0)
	for i := range m.GPUMetrics.Endpoints[0].Devices {
		m.GPUMetrics.Endpoints[0].Devices[i].Serving = schema.ServingImported
	}
	if probs, _ := artifact.CheckGPUIdle(m, "manifest.json", reader(files), idleBusy); len(probs) != 0 {
		t.Fatalf("problems %v", probs)
	}
	if got := artifact.GPUGaugeNotApplied(m.GPUMetrics); !strings.Contains(got, "imported telemetry: the import's word") {
		t.Fatalf("GPUGaugeNotApplied = %q", got)
	}
}
