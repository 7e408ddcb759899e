package artifact_test

import (
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/schema"
)

// TestGPUPowerReadingFarBelowTheOthersIsRejected: the counter-against-gauge
// floor integrates a device's lowest reading, so one reading set to 0 W
// (or to a fraction of the device's idle power) would lower the floor of
// every scrape pair and let a counter scaled down pass; each is named.
// Readings a little under the idle median (a real device's idle power
// wanders) are not.
func TestGPUPowerReadingFarBelowTheOthersIsRejected(t *testing.T) {
	for _, c := range []struct {
		name string
		w    float64
		want string
	}{
		{"zero", 0, "device GPU-a's power reading in attachments/gpu-metrics/000001.prom is 0 W, while it reads above 0 W elsewhere"},
		{"outlier", 40, "device GPU-a's power reading in attachments/gpu-metrics/000001.prom, 40.000 W, is below 50 % of the median of its readings with nothing in flight, 90.000 W: an outlier"},
		{"near", 60, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, files := idleRun(func(i int, _, w []float64) {
				if i == 0 {
					w[0] = c.w
				}
			})
			probs, _ := artifact.CheckGPUIdle(m, "manifest.json", reader(files), idleBusy)
			switch {
			case c.want == "" && len(probs) > 0:
				t.Fatalf("problems %v", probs)
			case c.want != "" && (len(probs) != 1 || probs[0].Field != "gpu_metrics.scrapes[0]" || !strings.Contains(probs[0].Message, c.want)):
				t.Fatalf("problems %v, want %q", probs, c.want)
			}
		})
	}
}

// simRun is idleRun as the in-process simulator's scrapes: capture
// --simulate --sim-gpus 2 at concurrency 8, its readings the simulator's
// model (90 W idle, 300 W with the request in flight, within 90 + 8 × 30 W).
func simRun(edit func(i int, mJ []float64, w []float64)) (*schema.Manifest, map[string][]byte) {
	m, files := idleRun(edit)
	m.Evidence = schema.EvidenceSynthetic
	m.Client = schema.Client{Name: schema.CaptureClientName, CommandLine: []string{"benchseal", "capture", "--simulate", "--sim-gpus", "2"}}
	m.Load = schema.Load{Mode: schema.ModeConcurrency, Points: []schema.Point{{Name: "c1", Concurrency: 8}}, Repeats: 1}
	for i := range m.GPUMetrics.Endpoints[0].Devices {
		m.GPUMetrics.Endpoints[0].Devices[i].Serving = schema.ServingSimulator
	}
	return m, files
}

// TestSimulatorReadingsOutsideItsModelAreRejected: the simulator's power
// model is known (schema.SimGPUIdleW), so a simulator run's counters and
// gauges scaled together, a gauge above what the run's requests can draw,
// or a device's counter reset, not a number or gone from one scrape, are
// rejected, where a real exporter's consistent readings are the signer's
// word.
func TestSimulatorReadingsOutsideItsModelAreRejected(t *testing.T) {
	if m, files := simRun(nil); len(check(t, m, files)) > 0 {
		t.Fatalf("honest simulator run: %v", check(t, m, files))
	}
	for _, c := range []struct {
		name string
		edit func(i int, mJ, w []float64)
		want string
	}{
		{"halved", func(_ int, mJ, w []float64) { mJ[0] /= 2; w[0] /= 2 }, "device GPU-a's power reading in attachments/gpu-metrics/000001.prom, 45.000 W, lies outside the simulator's model, 90 W idle to 330 W"},
		{"above", func(i int, _, w []float64) {
			if i == 4 {
				w[1] = 400
			}
		}, "device GPU-b's power reading in attachments/gpu-metrics/000005.prom, 400.000 W, lies outside the simulator's model"},
		{"reset", func(i int, mJ, _ []float64) {
			if i >= 6 {
				mJ[0] -= 5e6
			}
		}, "device GPU-a's energy counter rose -4910.000 J between attachments/gpu-metrics/000006.prom and attachments/gpu-metrics/000007.prom"},
		{"slow", func(i int, mJ, _ []float64) { mJ[1] = 7e6 + float64(i)*45e3 }, "device GPU-b's energy counter rose 45.000 J between attachments/gpu-metrics/000001.prom and attachments/gpu-metrics/000002.prom (0.999 to 1.000 s apart), outside the simulator's model"},
		{"vanished", func(i int, mJ, _ []float64) {
			if i == 7 {
				mJ[0] = -1
			}
		}, "the scrape attachments/gpu-metrics/000008.prom lacks device GPU-a's energy counter or power reading"},
	} {
		t.Run(c.name, func(t *testing.T) {
			m, files := simRun(c.edit)
			probs := check(t, m, files)
			found := false
			for _, p := range probs {
				found = found || strings.Contains(p.Message, c.want)
			}
			if !found {
				t.Fatalf("problems %v, want %q", probs, c.want)
			}
		})
	}
}

// check is every problem CheckGPUEvidence and CheckGPUIdle find in m.
func check(t *testing.T, m *schema.Manifest, files map[string][]byte) []schema.Problem {
	t.Helper()
	probs := artifact.CheckGPUEvidence(m, "manifest.json", reader(files))
	idle, _ := artifact.CheckGPUIdle(m, "manifest.json", reader(files), idleBusy)
	return append(probs, idle...)
}
