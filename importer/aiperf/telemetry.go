package aiperf

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"slices"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/schema"
)

// TelemetryFile is the name AIPerf gives its GPU telemetry export
// (ai-dynamo/aiperf, src/aiperf/common/environment.py,
// PROFILE_EXPORT_GPU_TELEMETRY_JSONL_FILE): one JSON object a line, one
// line per device per collection cycle.
const TelemetryFile = "gpu_telemetry_export.jsonl"

// AIPerf writes energy_consumption in megajoules: DCGM's
// DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION (mJ since boot) times 1e-9
// (ai-dynamo/aiperf, src/aiperf/gpu_telemetry/constants.py,
// SCALING_FACTORS), and amd_energy_consumption likewise in MJ
// (telemetry_models.py). Joules are megajoules times jPerMJ.
const jPerMJ = 1_000_000

// Telemetry is a parsed gpu_telemetry_export.jsonl: every device it
// names, each with its samples in time order.
type Telemetry struct {
	// File is the export's name as given.
	File    string
	Devices []TelemetryDevice
}

// TelemetryDevice is one accelerator of the export, keyed by the source
// that reported it (dcgm_url) and its gpu_uuid.
type TelemetryDevice struct {
	// Source is the record's dcgm_url: a DCGM exporter's address, or
	// AIPerf's "pynvml://localhost" or "amdsmi://localhost".
	Source   string
	UUID     string
	Index    int
	Model    string
	Hostname string
	// Vendor is "nvidia" (DCGM or pynvml fields), "amd" (amdsmi fields)
	// or "" (neither energy nor power on any line), from which energy and
	// power fields the samples carry.
	Vendor  string
	Samples []TelemetrySample
}

// TelemetrySample is one line of the export: a device at one instant. A
// nil field is one the line did not carry (AIPerf writes null, or leaves
// out, what the collector did not measure); it is never filled in.
type TelemetrySample struct {
	// Line is the 1-based line of the export.
	Line int
	// TimestampNS is AIPerf's wall-clock collection time (time_ns).
	TimestampNS int64
	// EnergyJ is the device's cumulative energy counter in joules.
	EnergyJ *float64
	// PowerW is the power gauge in watts.
	PowerW *float64
	// UtilPct is the utilization gauge in percent.
	UtilPct *float64
	// MemoryUsedGB is the device memory in use, in AIPerf's GB.
	MemoryUsedGB *float64
	// raw holds the numbers as the line wrote them (rawEnergy in MJ,
	// rawPower, rawUtil, rawMemory in GB; "" when absent), for the exact
	// conversion into exporter units (gpuEvidence).
	raw [4]json.Number
}

// Indexes of TelemetrySample.raw.
const (
	rawEnergy = iota
	rawPower
	rawUtil
	rawMemory
)

// telemetryLine is the JSON shape of one line (TelemetryRecord in
// ai-dynamo/aiperf, src/aiperf/common/models/telemetry_models.py).
type telemetryLine struct {
	TimestampNS   *telNum          `json:"timestamp_ns"`
	DCGMURL       *string          `json:"dcgm_url"`
	GPUUUID       *string          `json:"gpu_uuid"`
	GPUIndex      *telNum          `json:"gpu_index"`
	GPUModelName  string           `json:"gpu_model_name"`
	Hostname      *string          `json:"hostname"`
	TelemetryData *json.RawMessage `json:"telemetry_data"`
}

// telemetryData is the telemetry_data object: the fields benchseal uses,
// NVIDIA's and AMD's.
type telemetryData struct {
	GPUPowerUsage        *telNum `json:"gpu_power_usage"`
	EnergyConsumption    *telNum `json:"energy_consumption"`
	GPUUtilization       *telNum `json:"gpu_utilization"`
	GPUMemoryUsed        *telNum `json:"gpu_memory_used"`
	AMDPower             *telNum `json:"amd_power"`
	AMDEnergyConsumption *telNum `json:"amd_energy_consumption"`
	AMDGFXActivity       *telNum `json:"amd_gfx_activity"`
	AMDMemoryUsed        *telNum `json:"amd_memory_used"`
}

// telNum is a JSON number of the export, kept as written. A string is
// not a number here (encoding/json would take "98" for json.Number):
// AIPerf writes numbers.
type telNum json.Number

// UnmarshalJSON takes a JSON number only.
func (n *telNum) UnmarshalJSON(b []byte) error {
	var v any
	d := json.NewDecoder(bytes.NewReader(b))
	d.UseNumber()
	if err := d.Decode(&v); err != nil {
		return err
	}
	num, ok := v.(json.Number)
	if !ok {
		// encoding/json adds the field to an UnmarshalTypeError.
		return &json.UnmarshalTypeError{Value: fmt.Sprintf("%T", v), Type: reflect.TypeFor[json.Number]()}
	}
	*n = telNum(num)
	return nil
}

// IsTelemetry reports whether data looks like a GPU telemetry export: its
// first line is an object with dcgm_url and telemetry_data.
func IsTelemetry(data []byte) bool {
	return firstLineHas(data, "dcgm_url") && firstLineHas(data, "telemetry_data")
}

// ParseTelemetry parses a gpu_telemetry_export.jsonl named name. Every
// line must be a record with timestamp_ns (a positive whole number),
// dcgm_url, gpu_uuid and telemetry_data; values must be non-negative
// numbers; a device's gpu_index, model and host must not change between
// lines; and a line may carry NVIDIA's or AMD's energy and power fields,
// not both. Errors name the file, line and field. Samples are returned
// per device in time order (AIPerf writes them as collectors report, not
// necessarily in order); devices in order of first appearance.
func ParseTelemetry(name string, data []byte) (*Telemetry, error) {
	if len(data) > ingest.MaxFileSize {
		return nil, ingest.Errorf(name, "larger than %d bytes", ingest.MaxFileSize)
	}
	t := &Telemetry{File: name}
	byKey := map[[2]string]int{}
	err := ingest.EachLine(data, func(lineNo, _ int, b []byte) error {
		if len(b) == 0 {
			return nil
		}
		var l telemetryLine
		if err := ingest.DecodeJSONLine(name, lineNo, b, &l); err != nil {
			return err
		}
		dev, s, err := telemetrySample(name, lineNo, &l)
		if err != nil {
			return err
		}
		key := [2]string{dev.Source, dev.UUID}
		i, ok := byKey[key]
		if !ok {
			i = len(t.Devices)
			byKey[key] = i
			t.Devices = append(t.Devices, dev)
		}
		d := &t.Devices[i]
		if err := sameDevice(name, lineNo, d, &dev); err != nil {
			return err
		}
		d.Samples = append(d.Samples, s)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(t.Devices) == 0 {
		return nil, ingest.Errorf(name, "no telemetry record")
	}
	for i := range t.Devices {
		d := &t.Devices[i]
		slices.SortStableFunc(d.Samples, func(a, b TelemetrySample) int {
			switch {
			case a.TimestampNS < b.TimestampNS:
				return -1
			case a.TimestampNS > b.TimestampNS:
				return 1
			}
			return 0
		})
		for j := 1; j < len(d.Samples); j++ {
			if a, b := d.Samples[j-1], d.Samples[j]; a.TimestampNS == b.TimestampNS {
				l := max(a.Line, b.Line)
				return nil, ingest.RecordErrorf(name, l, l-1, "timestamp_ns", "device %s of %s has lines %d and %d at the same instant %d: one reading an instant", d.UUID, d.Source, min(a.Line, b.Line), l, a.TimestampNS)
			}
		}
	}
	return t, nil
}

// telemetrySample checks one decoded line and returns its device (without
// samples) and its sample.
func telemetrySample(name string, lineNo int, l *telemetryLine) (TelemetryDevice, TelemetrySample, error) {
	bad := func(field, format string, args ...any) error {
		return ingest.RecordErrorf(name, lineNo, lineNo-1, field, format, args...)
	}
	var dev TelemetryDevice
	s := TelemetrySample{Line: lineNo}
	switch {
	case l.TimestampNS == nil:
		return dev, s, bad("timestamp_ns", "missing")
	case l.DCGMURL == nil || *l.DCGMURL == "":
		return dev, s, bad("dcgm_url", "missing or empty")
	case l.GPUUUID == nil || *l.GPUUUID == "":
		return dev, s, bad("gpu_uuid", "missing or empty")
	case l.TelemetryData == nil:
		return dev, s, bad("telemetry_data", "missing")
	}
	ts, err := ingest.Int(json.Number(*l.TimestampNS))
	if err != nil || ts <= 0 {
		return dev, s, bad("timestamp_ns", "must be a positive whole number of nanoseconds, got %s", *l.TimestampNS)
	}
	s.TimestampNS = ts
	dev = TelemetryDevice{Source: *l.DCGMURL, UUID: *l.GPUUUID, Model: l.GPUModelName}
	if l.Hostname != nil {
		dev.Hostname = *l.Hostname
	}
	if l.GPUIndex != nil {
		idx, err := ingest.Int(json.Number(*l.GPUIndex))
		if err != nil || idx < 0 || idx > math.MaxInt32 {
			return dev, s, bad("gpu_index", "must be a non-negative whole number, got %s", *l.GPUIndex)
		}
		dev.Index = int(idx)
	}
	var d telemetryData
	if err := ingest.DecodeJSONLine(name, lineNo, *l.TelemetryData, &d); err != nil {
		return dev, s, err
	}
	nvidia := d.EnergyConsumption != nil || d.GPUPowerUsage != nil
	amd := d.AMDEnergyConsumption != nil || d.AMDPower != nil
	if nvidia && amd {
		return dev, s, bad("telemetry_data", "carries both NVIDIA (energy_consumption, gpu_power_usage) and AMD (amd_energy_consumption, amd_power) fields: which device measured what is unknown")
	}
	if nvidia {
		dev.Vendor = "nvidia"
	}
	energy, power, util, mem := d.EnergyConsumption, d.GPUPowerUsage, d.GPUUtilization, d.GPUMemoryUsed
	fields := [4]string{"telemetry_data.energy_consumption", "telemetry_data.gpu_power_usage", "telemetry_data.gpu_utilization", "telemetry_data.gpu_memory_used"}
	if amd {
		dev.Vendor = "amd"
		energy, power, util, mem = d.AMDEnergyConsumption, d.AMDPower, d.AMDGFXActivity, d.AMDMemoryUsed
		fields = [4]string{"telemetry_data.amd_energy_consumption", "telemetry_data.amd_power", "telemetry_data.amd_gfx_activity", "telemetry_data.amd_memory_used"}
	}
	for i, v := range []struct {
		n   *telNum
		mul int64
		out **float64
	}{{energy, jPerMJ, &s.EnergyJ}, {power, 1, &s.PowerW}, {util, 1, &s.UtilPct}, {mem, 1, &s.MemoryUsedGB}} {
		if v.n == nil {
			continue
		}
		f, err := ingest.ToFloat(json.Number(*v.n), v.mul)
		if err != nil || f < 0 {
			return dev, s, bad(fields[i], "must be a non-negative number, got %s", *v.n)
		}
		*v.out = &f
		s.raw[i] = json.Number(*v.n)
	}
	if s.UtilPct != nil && *s.UtilPct > 100 {
		return dev, s, bad(fields[2], "is a percentage, got %s", digits.Shortest(*s.UtilPct))
	}
	return dev, s, nil
}

// sameDevice reports a line that names device d with other static facts
// than its first line did.
func sameDevice(name string, lineNo int, d, got *TelemetryDevice) error {
	if d.Vendor == "" {
		d.Vendor = got.Vendor
	}
	vendor := got.Vendor
	if vendor == "" {
		vendor = d.Vendor
	}
	for _, c := range []struct {
		field      string
		want, have string
	}{
		{"gpu_index", fmt.Sprint(d.Index), fmt.Sprint(got.Index)},
		{"gpu_model_name", d.Model, got.Model},
		{"hostname", d.Hostname, got.Hostname},
		{"telemetry_data", d.Vendor, vendor},
	} {
		if c.want != c.have {
			return ingest.RecordErrorf(name, lineNo, lineNo-1, c.field, "device %s of %s was %q on line %d, %q here: one device cannot change",
				d.UUID, d.Source, c.want, d.Samples[0].Line, c.have)
		}
	}
	return nil
}

// noteTelemetry states in m what the telemetry export holds: its devices
// and which of energy and power they carry. The file itself is kept
// byte for byte with the other inputs (attachments/), and converted into
// manifest.gpu_metrics (gpuEvidence).
func noteTelemetry(m *schema.Manifest, t *Telemetry) {
	energy, power := 0, 0
	for _, d := range t.Devices {
		if slices.ContainsFunc(d.Samples, func(s TelemetrySample) bool { return s.EnergyJ != nil }) {
			energy++
		}
		if slices.ContainsFunc(d.Samples, func(s TelemetrySample) bool { return s.PowerW != nil }) {
			power++
		}
	}
	ingest.Derive(m, "gpu telemetry: %s, imported AIPerf telemetry of %d device(s) (%d with an energy counter, %d with a power gauge); accelerator board energy as the collector read it, not wall power",
		t.File, len(t.Devices), energy, power)
}

// first is the earliest reading's time.
func (t *Telemetry) first() int64 {
	f := int64(math.MaxInt64)
	for _, d := range t.Devices {
		f = min(f, d.Samples[0].TimestampNS)
	}
	return f
}
