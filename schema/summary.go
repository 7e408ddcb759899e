package schema

import "strconv"

// HardwareSummary says in a few words what the run ran on: "8 × NVIDIA
// H200", "NVIDIA H200 (count unknown)" when the count is not stated, or
// "unknown" when the accelerator is not stated either. A count that is
// not stated is never printed as 0.
func (m *Manifest) HardwareSummary() string {
	h := &m.Hardware
	switch {
	case h.Accelerator == "":
		return "unknown"
	case h.AcceleratorCount != nil:
		return strconv.Itoa(*h.AcceleratorCount) + " × " + h.Accelerator
	}
	return h.Accelerator + " (count unknown)"
}
