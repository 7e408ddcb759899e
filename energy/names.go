package energy

import (
	"github.com/benchseal/benchseal/internal/errcond"
	"slices"
	"strings"
)

// Exporters whose metric names the package knows.
const (
	ExporterDCGM = "dcgm"
	ExporterAMD  = "amd"
	// ExporterCustom is a counter or gauge the user named
	// (capture --energy-counter, --power-gauge).
	ExporterCustom = "custom"
)

// Roles: what a metric measures, whatever the exporter calls it.
const (
	// RoleEnergy is a cumulative energy counter (it only grows while the
	// device runs; a decrease is a reset or a wrap).
	RoleEnergy = "energy"
	// RolePower is an instantaneous power gauge.
	RolePower = "power"
	// RoleUtil is the device's busy share, in percent.
	RoleUtil = "util"
	// RoleMemory is the device memory in use.
	RoleMemory = "memory"
	// RoleClock is the compute clock.
	RoleClock = "clock"
)

// The units values are converted to: joules, watts, percent, bytes,
// megahertz.
const (
	UnitJ     = "J"
	UnitW     = "W"
	UnitPct   = "%"
	UnitBytes = "B"
	UnitMHz   = "MHz"
)

// Name maps one role of one exporter to the exporter's metric name.
type Name struct {
	Exporter string
	Role     string
	// Metric is the family name as exposed.
	Metric string
	// Unit is the unit the exporter states; Scale converts a value in it
	// to the role's unit (UnitJ, UnitW, UnitPct, UnitBytes, UnitMHz).
	Unit  string
	Scale float64
	// Label and Value, when set, keep only the series whose Label is
	// Value (AMD's gpu_clock carries every clock, told apart by
	// clock_type).
	Label, Value string
}

// Names is the one table of accelerator metric names benchseal reads
// (docs/format.md prints it). Sources: NVIDIA dcgm-exporter
// etc/default-counters.csv (repository NVIDIA/dcgm-exporter, commit
// 00d6d344ea4a39112b211b9ff5af3d97e0bb51c2: TOTAL_ENERGY_CONSUMPTION a
// counter "since boot (in mJ)", POWER_USAGE a gauge "(in W)", GPU_UTIL
// "(in %)", FB_USED "(in MiB)", SM_CLOCK "(in MHz)"); AMD
// device-metrics-exporter docs/configuration/metricslist.md (repository
// ROCm/device-metrics-exporter, commit
// 0778d3ab4d66fce90f0ca846e114be1d976f3e35: GPU_ENERGY_CONSUMED
// "accumulated energy consumed by the GPU in Micro Jules (uJ)",
// GPU_POWER_USAGE and GPU_PACKAGE_POWER in Watts, GPU_GFX_ACTIVITY a
// percentage, GPU_USED_VRAM "in MB", GPU_CLOCK in MHz with a clock_type
// label; the exposition uses the lower-case names). Within a role the
// first name a device has is the one read.
var Names = []Name{
	{Exporter: ExporterDCGM, Role: RoleEnergy, Metric: "DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", Unit: "mJ", Scale: 1e-3},
	{Exporter: ExporterDCGM, Role: RolePower, Metric: "DCGM_FI_DEV_POWER_USAGE", Unit: "W", Scale: 1},
	{Exporter: ExporterDCGM, Role: RoleUtil, Metric: "DCGM_FI_DEV_GPU_UTIL", Unit: "%", Scale: 1},
	{Exporter: ExporterDCGM, Role: RoleMemory, Metric: "DCGM_FI_DEV_FB_USED", Unit: "MiB", Scale: 1 << 20},
	{Exporter: ExporterDCGM, Role: RoleClock, Metric: "DCGM_FI_DEV_SM_CLOCK", Unit: "MHz", Scale: 1},
	{Exporter: ExporterAMD, Role: RoleEnergy, Metric: "gpu_energy_consumed", Unit: "uJ", Scale: 1e-6},
	{Exporter: ExporterAMD, Role: RolePower, Metric: "gpu_power_usage", Unit: "W", Scale: 1},
	{Exporter: ExporterAMD, Role: RolePower, Metric: "gpu_package_power", Unit: "W", Scale: 1},
	{Exporter: ExporterAMD, Role: RoleUtil, Metric: "gpu_gfx_activity", Unit: "%", Scale: 1},
	// "MB" as the exporter's table says it; read as 10^6 bytes.
	{Exporter: ExporterAMD, Role: RoleMemory, Metric: "gpu_used_vram", Unit: "MB", Scale: 1e6},
	{Exporter: ExporterAMD, Role: RoleClock, Metric: "gpu_clock", Unit: "MHz", Scale: 1, Label: "clock_type", Value: "system"},
}

// EnergyUnits and PowerUnits are the units a user-named counter or gauge
// may be stated in, with their factor to joules and watts.
var (
	EnergyUnits = map[string]float64{"J": 1, "mJ": 1e-3, "uJ": 1e-6, "Wh": 3600, "kWh": 3.6e6}
	PowerUnits  = map[string]float64{"W": 1, "mW": 1e-3, "kW": 1e3}
)

// Custom is a counter and a gauge the user names for an exporter the
// table does not know (a node exporter, Redfish or IPMI): either may be
// empty.
type Custom struct {
	EnergyCounter, EnergyUnit string
	PowerGauge, PowerUnit     string
}

// Names returns c as table rows, read before the built-in ones; an
// unknown unit is an error naming the units known.
func (c Custom) Names() ([]Name, error) {
	var out []Name
	if c.EnergyCounter != "" {
		u := c.EnergyUnit
		if u == "" {
			u = "J"
		}
		k, ok := EnergyUnits[u]
		if !ok {
			return nil, errcond.Errorf(ErrBadUnit, "energy counter %s: unit %q is not one of %s", c.EnergyCounter, u, unitList(EnergyUnits))
		}
		out = append(out, Name{Exporter: ExporterCustom, Role: RoleEnergy, Metric: c.EnergyCounter, Unit: u, Scale: k})
	}
	if c.PowerGauge != "" {
		u := c.PowerUnit
		if u == "" {
			u = "W"
		}
		k, ok := PowerUnits[u]
		if !ok {
			return nil, errcond.Errorf(ErrBadUnit, "power gauge %s: unit %q is not one of %s", c.PowerGauge, u, unitList(PowerUnits))
		}
		out = append(out, Name{Exporter: ExporterCustom, Role: RolePower, Metric: c.PowerGauge, Unit: u, Scale: k})
	}
	return out, nil
}

func unitList(m map[string]float64) string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return strings.Join(ks, ", ")
}

// Boundary is what the energy of a device counter covers, printed with
// every energy number.
func Boundary(exporter string) string {
	switch exporter {
	case ExporterDCGM:
		return "accelerator board energy (DCGM), not wall power"
	case ExporterAMD:
		return "accelerator energy (AMD device-metrics-exporter), not wall power"
	case ExporterCustom:
		return "the energy the named counter measures (user-named; its boundary is the exporter's)"
	}
	return "accelerator energy (exporter unknown), not wall power"
}
