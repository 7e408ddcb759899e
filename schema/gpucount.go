package schema

// validateGPUDeviceCount checks the accelerators manifest.gpu_metrics
// counts against hardware.accelerator_count, when the manifest states
// it: the scraped devices (each endpoint's, listed as its first scrape
// measured them; artifact.CheckGPUEvidence holds the list to the scrape)
// must number what the hardware says. A run whose energy is the sum over
// fewer devices than it claims to run on (or more) contradicts itself.
func validateGPUDeviceCount(ps *problems, m *Manifest) {
	g := m.GPUMetrics
	if g == nil {
		return
	}
	n := 0
	for _, e := range g.Endpoints {
		n += len(e.Devices)
	}
	validateSimulatedGPUCount(ps, m, n)
	validateSimulatedGPUMaxAge(ps, m)
	if m.Hardware.AcceleratorCount == nil {
		return
	}
	if want := *m.Hardware.AcceleratorCount; n != want {
		ps.add("gpu_metrics.endpoints", "list %d device(s), but hardware.accelerator_count is %d: the energy would be that of other accelerators than the run states it ran on", n, want)
	}
}

// legacyHardwareSimulated is what capture stated as a simulated server's
// accelerator before HardwareSimulated (testdata/compat/r1-2a73a39.tar).
const legacyHardwareSimulated = "none (simulated server)"

// validateSimulatedHardware holds the hardware a capture against the
// in-process simulator (InProcessSimulator) states to the simulator's:
// its records and scrapes are the simulator's, whatever the publisher
// assigns, so hardware.accelerator is HardwareSimulated (capture writes
// it; empty reads the same), and without --sim-gpus on the command line
// (no simulated accelerator) hardware.accelerator_count is absent or 0.
// With --sim-gpus, validateSimulatedGPUCount and validateGPUDeviceCount
// hold the count to N. capture.CheckSimulatedHardware refuses the same
// before a run starts.
func validateSimulatedHardware(ps *problems, m *Manifest) {
	if !InProcessSimulator(m) {
		return
	}
	if a := m.Hardware.Accelerator; a != "" && a != HardwareSimulated && a != legacyHardwareSimulated {
		ps.add("hardware.accelerator", "is %q, but the run is against the in-process simulator (--simulate on client.command_line): its records are the simulator's, whose hardware is %q", a, HardwareSimulated)
	}
	if n, ok := commandInt(m.Client.CommandLine, "sim-gpus"); ok && n > 0 {
		return
	}
	if c, ok := m.Hardware.Accelerators(); ok && c != 0 {
		ps.add("hardware.accelerator_count", "is %d, but the run is against the in-process simulator without --sim-gpus (client.command_line): it simulated no accelerator", c)
	}
}

// validateSimulatedGPUCount checks the n devices gpu_metrics lists in a
// capture against the in-process simulator: capture --sim-gpus N scrapes
// the simulator's N accelerators, and the simulator serves every one on
// every scrape, so a run listing another number (a device dropped from
// every scrape and from the list, re-hashed and signed) contradicts its
// own command line; a device serving "simulator" needs --sim-gpus there.
func validateSimulatedGPUCount(ps *problems, m *Manifest, n int) {
	if !InProcessSimulator(m) {
		return
	}
	want, ok := commandInt(m.Client.CommandLine, "sim-gpus")
	ok = ok && want > 0
	switch {
	case ok && n != want:
		ps.add("gpu_metrics.endpoints", "list %d device(s), but the command line's --sim-gpus=%d scraped that many simulated accelerators, all of which the simulator serves on every scrape", n, want)
	case !ok && simulatorServing(m.GPUMetrics):
		ps.add("gpu_metrics.endpoints", "list devices serving %q, but the command line has no --sim-gpus: only the simulator's accelerators serve so", ServingSimulator)
	}
}

// simulatorScrapes reports whether m's accelerator scrapes are of the
// in-process simulator's own accelerators: a capture against it
// (InProcessSimulator) with --sim-gpus N > 0 on its command line, or without a
// --gpu-metrics URL of another exporter, or listing a device serving
// "simulator". (capture refuses --sim-gpus with --gpu-metrics.)
func simulatorScrapes(m *Manifest) bool {
	if m.GPUMetrics == nil || !InProcessSimulator(m) {
		return false
	}
	n, _ := commandInt(m.Client.CommandLine, "sim-gpus")
	_, other := commandFlag(m.Client.CommandLine, "gpu-metrics")
	return n > 0 || !other || simulatorServing(m.GPUMetrics)
}

// validateSimulatedGPUMaxAge rejects a max_age other than 0 on the
// in-process simulator's accelerator scrapes (simulatorScrapes): the
// simulator computes its readings on every request (simulator/gpus.go),
// so they are of an instant inside the scrape, and an age bound widens
// and shifts every energy bound (energy.Sample.MaxAgeNS) for nothing the
// run measured.
func validateSimulatedGPUMaxAge(ps *problems, m *Manifest) {
	if g := m.GPUMetrics; g.MaxAge != 0 && simulatorScrapes(m) {
		ps.add("gpu_metrics.max_age", "is %d ns, but the scrapes are of the in-process simulator's accelerators, read fresh on every scrape: it must be 0 (absent)", int64(g.MaxAge))
	}
}

// simulatorServing reports whether g lists a device serving "simulator".
func simulatorServing(g *GPUMetrics) bool {
	for _, e := range g.Endpoints {
		for _, d := range e.Devices {
			if d.Serving == ServingSimulator {
				return true
			}
		}
	}
	return false
}

// validateGPUDeviceModels rejects simulator-labelled devices
// (SimulatorModel) under a stated accelerator that is not
// HardwareSimulated: the run's own scrapes say the energy is the
// simulator's, not that of the accelerator it states. Other model labels
// are printed beside the stated hardware (HardwareSummary), not matched:
// "H100" and "NVIDIA H100 80GB HBM3" cannot be told apart by a rule.
func validateGPUDeviceModels(ps *problems, m *Manifest) {
	a := m.Hardware.Accelerator
	if a == "" || a == HardwareSimulated {
		return
	}
	if n := m.SimulatedAccelerators(); n > 0 {
		ps.add("gpu_metrics.endpoints", "list %d device(s) labelled model %q (benchseal's simulator), but hardware.accelerator is %q: the energy is the simulator's, not that of the accelerator the run states it ran on", n, SimulatorModel, a)
	}
}

// The in-process simulator's accelerator power model (simulator/gpus.go
// draws it; simulator's identity test keeps the two equal): each device
// draws SimGPUIdleW with nothing running and SimGPUPerRequestW more per
// running request's share on it, at most SimGPUMaxW; its energy counter
// integrates that power, in integer mJ. Every reading of a run's
// simulator scrapes (SimulatorScrapes) is held to it by artifact.
const (
	SimGPUIdleW       = 90.0
	SimGPUPerRequestW = 30.0
	SimGPUMaxW        = 700.0
)

// SimulatorScrapes reports whether m's accelerator scrapes are the
// in-process simulator's own accelerators (capture --simulate
// --sim-gpus), whose readings follow the simulator's power model
// (SimGPUIdleW) rather than the signer's word.
func SimulatorScrapes(m *Manifest) bool { return simulatorScrapes(m) }

// SimGPUCeilingW is the most power a simulated device of m can read: the
// idle power plus SimGPUPerRequestW for every request the run can have in
// flight at once (the largest point's concurrency, which its warmup shares, or
// load.max_outstanding; not divided among the devices, so a request the
// client gave up on that the simulator still runs is covered), at most
// SimGPUMaxW; SimGPUMaxW when the load bounds no count (rate mode).
func SimGPUCeilingW(m *Manifest) float64 {
	most := m.Load.MaxOutstanding
	if m.Load.Mode == ModeConcurrency {
		for _, p := range m.Load.Points {
			most = max(most, p.Concurrency)
		}
	}
	if most <= 0 {
		return SimGPUMaxW
	}
	return min(SimGPUMaxW, SimGPUIdleW+float64(SimGPUPerRequestW*float64(most)))
}
