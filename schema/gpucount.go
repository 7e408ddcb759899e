package schema

// validateGPUDeviceCount checks the accelerators manifest.gpu_metrics
// counts against hardware.accelerator_count, when the manifest states
// it: the scraped devices (each endpoint's, listed as its first scrape
// measured them; artifact.CheckGPUEvidence holds the list to the scrape)
// must number what the hardware says. A run whose energy is the sum over
// fewer devices than it claims to run on (or more) contradicts itself.
func validateGPUDeviceCount(ps *problems, m *Manifest) {
	g := m.GPUMetrics
	if g == nil || m.Hardware.AcceleratorCount == nil {
		return
	}
	n := 0
	for _, e := range g.Endpoints {
		n += len(e.Devices)
	}
	if want := *m.Hardware.AcceleratorCount; n != want {
		ps.add("gpu_metrics.endpoints", "list %d device(s), but hardware.accelerator_count is %d: the energy would be that of other accelerators than the run states it ran on", n, want)
	}
}
