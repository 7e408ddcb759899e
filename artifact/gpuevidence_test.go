package artifact_test

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/schema"
)

const gpuScrape = "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu=\"0\",UUID=\"GPU-a\",modelName=\"H100\"} 1000\nDCGM_FI_DEV_POWER_USAGE{gpu=\"0\",UUID=\"GPU-a\",modelName=\"H100\"} 100\n"

func gpuManifest(body string) (*schema.Manifest, map[string][]byte) {
	h := sha256.Sum256([]byte(body))
	m := &schema.Manifest{Evidence: schema.EvidenceSelfRun, GPUMetrics: &schema.GPUMetrics{
		Endpoints: []schema.GPUEndpoint{{URL: "http://127.0.0.1:9400/metrics", Devices: []schema.GPUDevice{{ID: "GPU-a", IDFrom: "UUID", Serving: schema.ServingDeclared}}}},
		Scrapes:   []schema.GPUScrape{{Endpoint: 0, Point: "c1", When: schema.ScrapeBefore, FromNS: 1, AtNS: 2, File: "gpu-metrics/000001.prom", SHA256: hex.EncodeToString(h[:])}},
	}}
	return m, map[string][]byte{"gpu-metrics/000001.prom": []byte(body)}
}

func reader(files map[string][]byte) func(string) ([]byte, error) {
	return func(name string) ([]byte, error) {
		b, ok := files[name]
		if !ok {
			return nil, errors.New("not in the run directory")
		}
		return b, nil
	}
}

func TestGPUScrapesAreCheckedAgainstTheManifest(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(m *schema.Manifest, files map[string][]byte)
		want string // "" no problem
	}{
		{"as captured", func(*schema.Manifest, map[string][]byte) {}, ""},
		{"tampered", func(_ *schema.Manifest, f map[string][]byte) {
			f["gpu-metrics/000001.prom"] = []byte(strings.Replace(gpuScrape, "1000", "9000", 1))
		}, "sha256"},
		{"missing", func(_ *schema.Manifest, f map[string][]byte) { delete(f, "gpu-metrics/000001.prom") }, "not in the run directory"},
		{"a device added to the list", func(m *schema.Manifest, _ map[string][]byte) {
			e := &m.GPUMetrics.Endpoints[0]
			e.Devices = append(e.Devices, schema.GPUDevice{ID: "GPU-b", IDFrom: "UUID", Serving: schema.ServingDeclared})
		}, "lists [GPU-a, GPU-b], but its first scrape"},
		{"an unknown unit", func(m *schema.Manifest, _ map[string][]byte) {
			m.GPUMetrics.EnergyCounter = &schema.GPUMetricName{Name: "x", Unit: "cal"}
		}, "unit \"cal\""},
		{"a simulator scrape in a measured run", func(m *schema.Manifest, f map[string][]byte) {
			b := strings.ReplaceAll(gpuScrape, "H100", schema.SimulatorModel)
			h := sha256.Sum256([]byte(b))
			f["gpu-metrics/000001.prom"] = []byte(b)
			m.GPUMetrics.Scrapes[0].SHA256 = hex.EncodeToString(h[:])
		}, "the simulator's"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, files := gpuManifest(gpuScrape)
			tc.edit(m, files)
			probs := artifact.CheckServerEvidence(m, "manifest.json", reader(files), nil)
			var msgs []string
			for _, p := range probs {
				msgs = append(msgs, p.String())
			}
			all := strings.Join(msgs, "\n")
			switch {
			case tc.want == "" && len(probs) > 0:
				t.Fatalf("problems: %s", all)
			case tc.want != "" && !strings.Contains(all, tc.want):
				t.Fatalf("problems %q, want one saying %q", all, tc.want)
			}
		})
	}
}

// TestGPUCounterBelowItsGaugeIsRejected: every rise of device b's counter
// halved (re-hashed, so the stored-file check passes) while its gauge still
// reads 90 W idle and 300 W busy: the counter implies 45 W idle, less than
// the device's own lowest reading allows. The honest run, and one whose
// counter is 5 % low (within the gauge's sampling), pass.
func TestGPUCounterBelowItsGaugeIsRejected(t *testing.T) {
	check := func(scale float64) []schema.Problem {
		m, files := idleRun(func(_ int, mJ, _ []float64) { mJ[1] = 7e6 + (mJ[1]-7e6)*scale })
		return artifact.CheckServerEvidence(m, "manifest.json", reader(files), nil)
	}
	if probs := check(1); len(probs) != 0 {
		t.Fatalf("honest run: %v", probs)
	}
	if probs := check(0.95); len(probs) != 0 {
		t.Fatalf("counter 5 %% low, within the gauge's tolerance: %v", probs)
	}
	probs := check(0.5)
	// The two busy seconds' halved rise, 150 J, is still above the 90 W
	// floor: the other 8 pairs are caught.
	if len(probs) != 8 {
		t.Fatalf("halved counter: %d problems, want one per idle scrape pair (8): %v", len(probs), probs)
	}
	want := "device GPU-b's energy counter rose 45.000 J between attachments/gpu-metrics/000001.prom and attachments/gpu-metrics/000002.prom (at least 0.999 s apart), less than its lowest power reading of the run, 90.000 W, implies (at least 80.917 J with 10 % tolerance): the counter contradicts the device's own power gauge"
	if probs[0].Field != "gpu_metrics.scrapes[1]" || probs[0].Message != want {
		t.Fatalf("first problem %s: %s\nwant %s", probs[0].Field, probs[0].Message, want)
	}
	// Both devices halved: 16 pairs contradict; 10 are named, the rest
	// counted.
	m, files := idleRun(func(_ int, mJ, _ []float64) {
		mJ[0], mJ[1] = 5e6+(mJ[0]-5e6)/2, 7e6+(mJ[1]-7e6)/2
	})
	probs = artifact.CheckServerEvidence(m, "manifest.json", reader(files), nil)
	if len(probs) != 11 || probs[10].Message != "and 6 more scrape pair(s) whose energy counter contradicts the device's own power gauge" {
		t.Fatalf("%d problems: %v", len(probs), probs)
	}
}

// TestGPUCounterAboveItsGaugeIsRejected: a counter tripled while the gauge
// reads at most 300 W rises 900 J in a busy second, more than 300 W × 1.001
// s × 1.1 + 1 s at 300 W allows.
func TestGPUCounterAboveItsGaugeIsRejected(t *testing.T) {
	m, files := idleRun(func(_ int, mJ, _ []float64) { mJ[0] = 5e6 + (mJ[0]-5e6)*3 })
	probs := artifact.CheckServerEvidence(m, "manifest.json", reader(files), nil)
	var hit bool
	for _, p := range probs {
		if p.Field == "gpu_metrics.scrapes[4]" && strings.Contains(p.Message, "device GPU-a's energy counter rose 900.000 J between attachments/gpu-metrics/000004.prom and attachments/gpu-metrics/000005.prom (at most 1.001 s apart), more than its highest power reading of the run, 300.000 W, explains (at most 630.332 J") {
			hit = true
		}
	}
	if !hit {
		t.Fatalf("problems %v", probs)
	}
}
