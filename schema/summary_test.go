package schema

import "testing"

// The stated hardware is printed beside the devices the scrapes list: a
// real name is not matched (the signer's word against the exporter's),
// and a simulated server with the simulator's accelerators says so.
func TestHardwareSummaryBesideScrapedDevices(t *testing.T) {
	dev := func(models ...string) *GPUMetrics {
		e := GPUEndpoint{}
		for _, m := range models {
			e.Devices = append(e.Devices, GPUDevice{ID: m, Model: m})
		}
		return &GPUMetrics{Endpoints: []GPUEndpoint{e}}
	}
	for _, c := range []struct {
		m    Manifest
		want string
	}{
		{Manifest{Hardware: Hardware{Accelerator: "H100", AcceleratorCount: Count(2)}, GPUMetrics: dev("NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3")},
			"2 × H100 (the signer's word; scraped: 2 × NVIDIA H100 80GB HBM3, the exporter's labels)"},
		{Manifest{Hardware: Hardware{Accelerator: HardwareSimulated}, GPUMetrics: dev(SimulatorModel, SimulatorModel)},
			"simulated server with 2 simulated accelerator(s)"},
		{Manifest{Hardware: Hardware{Accelerator: HardwareSimulated}}, HardwareSimulated + " (count unknown)"},
		{Manifest{Hardware: Hardware{Accelerator: "H100", AcceleratorCount: Count(8)}}, "8 × H100"},
		{Manifest{Hardware: Hardware{Accelerator: "A"}, GPUMetrics: dev("x", "")}, "A (count unknown) (the signer's word; scraped: 1 × x, 1 × model not labelled, the exporter's labels)"},
	} {
		if got := c.m.HardwareSummary(); got != c.want {
			t.Errorf("got %q, want %q", got, c.want)
		}
	}
	var ps problems
	m := Manifest{Hardware: Hardware{Accelerator: "H100"}, GPUMetrics: dev(SimulatorModel)}
	validateGPUDeviceModels(&ps, &m)
	if len(ps.list) != 1 {
		t.Errorf("H100 over the simulator's device: %d problem(s), want 1", len(ps.list))
	}
}
