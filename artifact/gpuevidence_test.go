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
