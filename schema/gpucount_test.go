package schema_test

import (
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// TestGPUDeviceCountContradictingTheHardwareIsInvalid: a run whose
// accelerator scrapes count other than the accelerators its hardware
// states is invalid; one stating no count, or the same count, is not; an
// imported run's devices may serve "imported", a capture's may not.
func TestGPUDeviceCountContradictingTheHardwareIsInvalid(t *testing.T) {
	dev := func(id, serving string) map[string]any {
		return map[string]any{"id": id, "id_from": "UUID", "serving": serving}
	}
	g := func(devs ...any) map[string]any {
		return map[string]any{"interval": "1s", "endpoints": []any{map[string]any{"url": "http://127.0.0.1:9400/metrics", "devices": devs}}, "scrapes": []any{}}
	}
	for _, tc := range []struct {
		name  string
		count any // nil: not stated
		g     map[string]any
		want  string
	}{
		{"two of two", 2, g(dev("GPU-1", "declared"), dev("GPU-2", "declared")), ""},
		{"count not stated", nil, g(dev("GPU-1", "declared")), ""},
		{"one of eight", 8, g(dev("GPU-1", "declared")), "list 1 device(s), but hardware.accelerator_count is 8"},
		{"three of two", 2, g(dev("GPU-1", "declared"), dev("GPU-2", "declared"), dev("GPU-3", "declared")), "list 3 device(s), but hardware.accelerator_count is 2"},
		{"imported serving in a capture", nil, g(dev("GPU-1", "imported")), `is "imported", but the run is not imported`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := baseRun(t, false)
			editJSON(t, filepath.Join(dir, schema.ManifestFile), func(m map[string]any) {
				m["gpu_metrics"] = tc.g
				if tc.count != nil {
					hw, _ := m["hardware"].(map[string]any)
					if hw == nil {
						hw = map[string]any{}
						m["hardware"] = hw
					}
					hw["accelerator_count"] = tc.count
				}
			})
			err := schema.ValidateRunDocuments(dir, 20)
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("rejected: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("err %v, want a problem saying %q", err, tc.want)
			}
		})
	}
}

// TestSimulatedGPUCountFollowsTheCommandLine: a capture against the
// in-process simulator with --sim-gpus=2 lists both simulated devices; one
// listing a single device (the other dropped from every scrape and the
// list, re-hashed, re-signed: the stored-file check passes) contradicts its
// command line, and devices serving "simulator" need --sim-gpus on it.
func TestSimulatedGPUCountFollowsTheCommandLine(t *testing.T) {
	dev := func(id string) schema.GPUDevice {
		return schema.GPUDevice{ID: id, IDFrom: "UUID", Serving: schema.ServingSimulator}
	}
	for _, tc := range []struct {
		name string
		args []string
		devs []schema.GPUDevice
		want string
	}{
		{"two of two", []string{"benchseal", "capture", "--simulate", "--sim-gpus=2"}, []schema.GPUDevice{dev("GPU-0"), dev("GPU-1")}, ""},
		{"one of two", []string{"benchseal", "capture", "--simulate", "--sim-gpus=2"}, []schema.GPUDevice{dev("GPU-0")}, "list 1 device(s), but the command line's --sim-gpus=2"},
		{"flag removed", []string{"benchseal", "capture", "--simulate"}, []schema.GPUDevice{dev("GPU-0")}, `list devices serving "simulator", but the command line has no --sim-gpus`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &schema.Manifest{Evidence: schema.EvidenceSynthetic, Client: schema.Client{Name: schema.CaptureClientName, CommandLine: tc.args},
				GPUMetrics: &schema.GPUMetrics{Interval: schema.Duration(1e9), Endpoints: []schema.GPUEndpoint{{URL: "http://127.0.0.1:1/gpu-metrics", Devices: tc.devs}}, Scrapes: []schema.GPUScrape{}}}
			var got []string
			for _, p := range schema.ValidateManifest(m, "manifest.json") {
				if p.Field == "gpu_metrics.endpoints" {
					got = append(got, p.Message)
				}
			}
			switch {
			case tc.want == "" && len(got) > 0:
				t.Fatalf("problems %q", got)
			case tc.want != "" && (len(got) != 1 || !strings.Contains(got[0], tc.want)):
				t.Fatalf("problems %q, want one saying %q", got, tc.want)
			}
		})
	}
}

// TestSimulatedGPUMaxAgeIsZero: the in-process simulator computes its
// accelerators' readings on every scrape, so a capture scraping them
// (--sim-gpus) with a max_age other than 0 (which would widen and shift
// every energy bound) contradicts its run; a --simulate run scraping
// another exporter (--gpu-metrics URL) may state one.
func TestSimulatedGPUMaxAgeIsZero(t *testing.T) {
	for _, tc := range []struct {
		name   string
		args   []string
		maxAge int64
		want   bool
	}{
		{"sim-gpus, fresh", []string{"benchseal", "capture", "--simulate", "--sim-gpus=2"}, 0, false},
		{"sim-gpus, forged age", []string{"benchseal", "capture", "--simulate", "--sim-gpus=2"}, 30e9, true},
		{"no gpu flag, forged age", []string{"benchseal", "capture", "--simulate"}, 1, true},
		{"another exporter", []string{"benchseal", "capture", "--simulate", "--gpu-metrics=http://10.0.0.1:9400/metrics"}, 30e9, false},
		{"not the simulator", []string{"benchseal", "capture", "--gpu-metrics=http://10.0.0.1:9400/metrics"}, 30e9, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			devs := []schema.GPUDevice{{ID: "GPU-0", IDFrom: "UUID", Serving: schema.ServingDeclared}, {ID: "GPU-1", IDFrom: "UUID", Serving: schema.ServingDeclared}}
			if tc.args[len(tc.args)-1] == "--sim-gpus=2" {
				for i := range devs {
					devs[i].Serving = schema.ServingSimulator
				}
			}
			m := &schema.Manifest{Evidence: schema.EvidenceSynthetic, Client: schema.Client{Name: schema.CaptureClientName, CommandLine: tc.args},
				GPUMetrics: &schema.GPUMetrics{Interval: schema.Duration(1e9), MaxAge: schema.Duration(tc.maxAge), Endpoints: []schema.GPUEndpoint{{URL: "http://127.0.0.1:1/gpu-metrics", Devices: devs}}, Scrapes: []schema.GPUScrape{}}}
			var got []string
			for _, p := range schema.ValidateManifest(m, "manifest.json") {
				if p.Field == "gpu_metrics.max_age" {
					got = append(got, p.Message)
				}
			}
			switch {
			case !tc.want && len(got) > 0:
				t.Fatalf("problems %q", got)
			case tc.want && (len(got) != 1 || !strings.Contains(got[0], "in-process simulator's accelerators")):
				t.Fatalf("problems %q, want one naming the simulator's accelerators", got)
			}
		})
	}
}

// TestInProcessSimulatorStatesOnlyTheSimulatorsHardware: a capture
// against the in-process simulator (--simulate) whose manifest states a
// real accelerator ("8 × NVIDIA H200") validated and printed as such,
// while every record is the simulator's. Its accelerator must be the
// simulated server's, and without --sim-gpus its count absent or 0; a
// run against another server may state what it ran on.
func TestInProcessSimulatorStatesOnlyTheSimulatorsHardware(t *testing.T) {
	sim := []string{"benchseal", "capture", "--simulate"}
	for _, tc := range []struct {
		name  string
		args  []string
		accel string
		count *int
		want  string // the field of the one problem; "" for none
	}{
		{"simulated server", sim, schema.HardwareSimulated, nil, ""},
		{"nothing stated", sim, "", nil, ""},
		{"no accelerator", sim, schema.HardwareSimulated, schema.Count(0), ""},
		{"H200", sim, "NVIDIA H200", nil, "hardware.accelerator"},
		{"eight", sim, schema.HardwareSimulated, schema.Count(8), "hardware.accelerator_count"},
		{"real server", []string{"benchseal", "capture", "--endpoint=http://10.0.0.1:8000"}, "NVIDIA H200", schema.Count(8), ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &schema.Manifest{Evidence: schema.EvidenceSynthetic, Client: schema.Client{Name: schema.CaptureClientName, CommandLine: tc.args},
				Hardware: schema.Hardware{Accelerator: tc.accel, AcceleratorCount: tc.count}}
			var got []string
			for _, p := range schema.ValidateManifest(m, "manifest.json") {
				if strings.HasPrefix(p.Field, "hardware.accelerator") && !strings.Contains(p.Message, "must be stated") {
					got = append(got, p.Field+": "+p.Message)
				}
			}
			switch {
			case tc.want == "" && len(got) > 0:
				t.Fatalf("problems %q", got)
			case tc.want != "" && (len(got) != 1 || !strings.HasPrefix(got[0], tc.want+": ") || !strings.Contains(got[0], "in-process simulator")):
				t.Fatalf("problems %q, want one on %s naming the in-process simulator", got, tc.want)
			}
		})
	}
}

// TestSimulatedHardwareCountsEveryScrapedDevice: a run stating the
// simulated server (capture against a separate simulate --gpus 2, which
// states no accelerator_count) whose scrapes list 2 simulator devices and
// 6 "NVIDIA H200" ones read "simulated server with 2 simulated
// accelerator(s)" while its energy summed all 8; it now prints every
// scraped device by its label, and an all-simulator list still reads as
// the simulator's.
func TestSimulatedHardwareCountsEveryScrapedDevice(t *testing.T) {
	dev := func(id, model string) schema.GPUDevice {
		return schema.GPUDevice{ID: id, IDFrom: "UUID", Model: model, Serving: schema.ServingDeclared}
	}
	sim := []schema.GPUDevice{dev("S0", schema.SimulatorModel), dev("S1", schema.SimulatorModel)}
	var real []schema.GPUDevice
	for i := range 6 {
		real = append(real, dev(fmt.Sprint("H", i), "NVIDIA H200"))
	}
	m := &schema.Manifest{Hardware: schema.Hardware{Accelerator: schema.HardwareSimulated},
		GPUMetrics: &schema.GPUMetrics{Endpoints: []schema.GPUEndpoint{{URL: "http://127.0.0.1:1/gpu-metrics", Devices: sim}}}}
	if got := m.HardwareSummary(); got != "simulated server with 2 simulated accelerator(s)" {
		t.Errorf("all simulated: %q", got)
	}
	m.GPUMetrics.Endpoints = append(m.GPUMetrics.Endpoints, schema.GPUEndpoint{URL: "http://10.0.0.1:9400/metrics", Devices: real})
	got := m.HardwareSummary()
	if !strings.Contains(got, "2 × benchseal-sim, 6 × NVIDIA H200") || strings.Contains(got, "with 2 simulated accelerator(s)") {
		t.Errorf("mixed: %q", got)
	}
}
