package schema

import (
	"fmt"
	"strconv"
	"strings"
)

// HardwareSummary says in a few words what the run ran on: "8 × NVIDIA
// H200", "NVIDIA H200 (count unknown)" when the count is not stated, or
// "unknown" when the accelerator is not stated either. A count that is
// not stated is never printed as 0. A run with accelerator scrapes adds
// the devices they list (ScrapedDevices) beside the stated hardware; a
// simulated server's reads as SimulatedHardware.
func (m *Manifest) HardwareSummary() string {
	h := &m.Hardware
	if s := m.SimulatedHardware(); s != "" && m.SimulatedAccelerators() > 0 && m.SimulatedAccelerators() == m.listedDevices() {
		return s
	}
	var stated string
	switch {
	case h.Accelerator == "":
		stated = "unknown"
	case h.AcceleratorCount != nil:
		stated = strconv.Itoa(*h.AcceleratorCount) + " × " + h.Accelerator
	default:
		stated = h.Accelerator + " (count unknown)"
	}
	if sc := m.ScrapedDevices(); sc != "" {
		// Model labels are matched by nobody: "H100" and "NVIDIA H100 80GB
		// HBM3" may or may not be one accelerator, so both are printed.
		return stated + " (the signer's word; scraped: " + sc + ", the exporter's labels)"
	}
	return stated
}

// ScrapedDevices is the accelerators manifest.gpu_metrics lists, by the
// model label the exporter gave them: "2 × benchseal-sim", "1 × A, 1 × B"
// (in order of first listing; "model not labelled" for a device without
// one); "" when the run has no accelerator scrapes.
func (m *Manifest) ScrapedDevices() string {
	if m.GPUMetrics == nil {
		return ""
	}
	var order []string
	n := map[string]int{}
	for _, e := range m.GPUMetrics.Endpoints {
		for _, d := range e.Devices {
			k := d.Model
			if k == "" {
				k = "model not labelled"
			}
			if n[k] == 0 {
				order = append(order, k)
			}
			n[k]++
		}
	}
	parts := make([]string, len(order))
	for i, k := range order {
		parts[i] = strconv.Itoa(n[k]) + " × " + k
	}
	return strings.Join(parts, ", ")
}

// SimulatedAccelerators is the number of devices manifest.gpu_metrics
// lists with the simulator's model label (SimulatorModel).
func (m *Manifest) SimulatedAccelerators() int {
	c := 0
	if m.GPUMetrics != nil {
		for _, e := range m.GPUMetrics.Endpoints {
			for _, d := range e.Devices {
				if d.Model == SimulatorModel {
					c++
				}
			}
		}
	}
	return c
}

// listedDevices is the number of devices manifest.gpu_metrics lists.
func (m *Manifest) listedDevices() int {
	c := 0
	if m.GPUMetrics != nil {
		for _, e := range m.GPUMetrics.Endpoints {
			c += len(e.Devices)
		}
	}
	return c
}

// SimulatedHardware is what a simulated server's hardware reads as: the
// stated HardwareSimulated, or "simulated server with N simulated
// accelerators" when the run scraped N of the simulator's accelerators;
// "" when the hardware stated is not HardwareSimulated.
func (m *Manifest) SimulatedHardware() string {
	if m.Hardware.Accelerator != HardwareSimulated {
		return ""
	}
	// Only when every listed device is the simulator's: the energy is
	// summed over all of them, so a list that also holds another
	// exporter's devices reads as the stated hardware beside every
	// scraped device (HardwareSummary), never as N simulated ones.
	if n := m.SimulatedAccelerators(); n > 0 && n == m.listedDevices() {
		return SimulatedHardwareOf(n)
	}
	return HardwareSimulated
}

// SimulatedHardwareOf is what the hardware of a run against the simulator
// with n > 0 simulated accelerators scraped reads as (SimulatedHardware);
// with none, HardwareSimulated.
func SimulatedHardwareOf(n int) string {
	if n <= 0 {
		return HardwareSimulated
	}
	return fmt.Sprintf("simulated server with %d simulated accelerator(s)", n)
}
