package energy

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/servermetrics"
	dto "github.com/prometheus/client_model/go"
)

// Conditions of this package's errors, one sentinel each.
var (
	// ErrMalformed: a scrape is not the Prometheus text format, or a
	// device has two series of one metric.
	ErrMalformed = errors.New("malformed accelerator scrape")
	// ErrBadUnit: a user-named counter or gauge is stated in an unknown
	// unit.
	ErrBadUnit = errors.New("unknown unit")
)

// Float64 holds every integer up to 2^53 exactly; above it a counter's
// text value is rounded to the nearest float64 (half an ulp off at most).
const exactLimit = 1 << 53

// blankFrom: a counter stated as an exact integer is no reading from
// DCGM's int64 blanks (DCGM_INT64_BLANK, 0x7ffffffffffffff0, and the
// "not found", "not supported" and "not permissioned" codes after it) up.
const blankFrom = 1<<63 - 16

// sentinelLimit: at 2^63 and above a value is not a reading. DCGM reports
// a field it has no value for as a "blank" of 2^63 − 16 … 2^63 − 1 (the
// dcgm-exporter README's quick start prints DCGM_FI_DEV_MEMORY_TEMP
// 9223372036854775794), which float64 rounds to 2^63; and a 64-bit
// counter this close to its wrap cannot be told from a wrapped one.
const sentinelLimit = 1 << 63

// Scrape is one scrape of an accelerator exporter, per device.
type Scrape struct {
	// Exporter is the exporter whose names the scrape holds
	// (ExporterDCGM, ExporterAMD, ExporterCustom; "" when none).
	Exporter string
	// Devices by ID (see Device.ID).
	Devices map[string]*Device
	// Absent lists the user-named metrics (Custom) the scrape does not
	// hold, in the order named.
	Absent []string
}

// Device is one accelerator's readings in one scrape, each converted to
// its role's unit; nil when the scrape does not hold it.
type Device struct {
	// ID identifies the device across scrapes: its UUID (DCGM's UUID
	// label, AMD's serial_number), with a MIG instance's or partition's
	// id after a slash; without those, its whole label set. IDFrom names
	// the label it came from ("labels" for the whole set).
	ID, IDFrom string
	// Model, Host and Index are its modelName/card_model,
	// Hostname/hostname and gpu/gpu_id labels, where given.
	Model, Host, Index string
	// EnergyJ is the energy counter in joules (a float64: above 2^53 of
	// its unit not the integer itself; EnergySince takes differences
	// exactly); EnergyRoundJ how far the text's value may be from the
	// exporter's integer: 0 when the text states an exact integer (any
	// size up to 2^64 − 1) or one below 2^53, else half an ulp. EnergyBad
	// says why a value present is not a reading (a sentinel, negative, not
	// finite); EnergyJ is nil then.
	EnergyJ      *float64
	EnergyRoundJ float64
	EnergyBad    string
	// raw is the counter as the text's exact integer, in the metric's
	// unit, and scale that unit in joules; exact says raw holds it.
	raw   uint64
	exact bool
	scale float64
	// Exporter is the table row's exporter the energy or power came
	// from.
	Exporter string
	PowerW   *float64
	UtilPct  *float64
	MemBytes *float64
	ClockMHz *float64
}

// Measures reports whether d holds an energy counter or a power gauge
// (a MIG instance's rows hold neither and are no device to count).
func (d *Device) Measures() bool { return d.EnergyJ != nil || d.EnergyBad != "" || d.PowerW != nil }

// Parse reads one scrape in the Prometheus text format, with the names
// in custom (Custom.Names) read instead of the built-in table's rows of
// the same role: the energy of a run whose manifest names a counter is
// that counter's, never another one the exporter also has. Metrics of any
// type are read (AMD's exporter exposes its energy counter as a gauge).
func Parse(r io.Reader, custom []Name) (*Scrape, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxScrapeBytes+1))
	if err != nil {
		return nil, errcond.Errorf(ErrMalformed, "accelerator metrics: %w", err)
	}
	return parseBytes(b, custom)
}

// parseBytes is Parse of a scrape already read.
func parseBytes(b []byte, custom []Name) (*Scrape, error) {
	fams, err := servermetrics.ParseFamilies(bytes.NewReader(b))
	if err != nil {
		return nil, errcond.Errorf(ErrMalformed, "accelerator metrics: %w", err)
	}
	s := &Scrape{Devices: map[string]*Device{}}
	done := map[string]bool{} // role + "\xff" + device ID, once read
	rows := append(slices.Clip(custom), Names...)
	counters := map[string]bool{}
	for _, n := range rows {
		if n.Role == RoleEnergy {
			counters[n.Metric] = true
		}
	}
	lits := counterLiterals(b, counters)
	named := map[string]bool{} // roles the user named a metric for
	for _, n := range custom {
		named[n.Role] = true
		if _, ok := fams[n.Metric]; !ok {
			s.Absent = append(s.Absent, n.Metric)
		}
	}
	for i, n := range rows {
		if i >= len(custom) && named[n.Role] {
			continue // a named metric replaces the built-in ones of its role
		}
		mf, ok := fams[n.Metric]
		if !ok {
			continue
		}
		seen := map[string]bool{}
		for _, m := range mf.GetMetric() {
			labels := labelMap(m)
			if n.Label != "" && labels[n.Label] != n.Value {
				continue
			}
			d := s.device(labels)
			if seen[d.ID] {
				return nil, errcond.Errorf(ErrMalformed, "accelerator metrics: %s has two series for device %s", n.Metric, d.ID)
			}
			seen[d.ID] = true
			key := n.Role + "\xff" + d.ID
			if done[key] {
				continue // an earlier row of the role gave it
			}
			done[key] = true
			if err := d.set(n, value(m), lits[seriesKey(n.Metric, labels)]); err != nil {
				return nil, errcond.Errorf(ErrMalformed, "accelerator metrics: %s of device %s: %w", n.Metric, d.ID, err)
			}
			if (n.Role == RoleEnergy || n.Role == RolePower) && s.Exporter == "" {
				s.Exporter = n.Exporter
			}
		}
	}
	for id, d := range s.Devices {
		if !d.Measures() && d.UtilPct == nil && d.MemBytes == nil && d.ClockMHz == nil {
			delete(s.Devices, id)
		}
	}
	return s, nil
}

func value(m *dto.Metric) float64 {
	switch {
	case m.Counter != nil:
		return m.GetCounter().GetValue()
	case m.Gauge != nil:
		return m.GetGauge().GetValue()
	case m.Untyped != nil:
		return m.GetUntyped().GetValue()
	}
	return math.NaN()
}

func labelMap(m *dto.Metric) map[string]string {
	out := make(map[string]string, len(m.GetLabel()))
	for _, l := range m.GetLabel() {
		out[l.GetName()] = l.GetValue()
	}
	return out
}

// idLabels name a device's unique id; partLabels a part of it (a MIG
// instance, an AMD compute partition).
var (
	idLabels   = []string{"UUID", "uuid", "gpu_uuid", "serial_number"}
	partLabels = []string{"GPU_I_ID", "gpu_partition_id"}
	// seriesLabels tell one metric's series apart within a device, and
	// are no part of its id.
	seriesLabels = []string{"clock_type", "clock_index"}
)

func (s *Scrape) device(labels map[string]string) *Device {
	id, from := "", ""
	for _, l := range idLabels {
		if v := labels[l]; v != "" {
			id, from = v, l
			break
		}
	}
	if id != "" {
		for _, l := range partLabels {
			if v := labels[l]; v != "" {
				id += "/" + v
			}
		}
	} else {
		var pairs []string
		for k, v := range labels {
			if !slices.Contains(seriesLabels, k) {
				pairs = append(pairs, k+"="+v)
			}
		}
		slices.Sort(pairs)
		id, from = "{"+strings.Join(pairs, ",")+"}", "labels"
	}
	d, ok := s.Devices[id]
	if !ok {
		d = &Device{ID: id, IDFrom: from, Model: first(labels, "modelName", "card_model"), Host: first(labels, "Hostname", "hostname"), Index: first(labels, "gpu", "gpu_id")}
		s.Devices[id] = d
	}
	return d
}

func first(labels map[string]string, names ...string) string {
	for _, n := range names {
		if v := labels[n]; v != "" {
			return v
		}
	}
	return ""
}

// set stores v, in n's unit, as the device's reading of n's role; lit is
// the text's spelling of an energy counter's value ("" when not found).
func (d *Device) set(n Name, v float64, lit string) error {
	if n.Role == RoleEnergy {
		if raw, ok := exactCounter(lit); ok && float64(raw) == v { // the float64 check: lit is this series'
			d.Exporter = n.Exporter
			if raw >= blankFrom {
				d.EnergyBad = fmt.Sprintf("%s is %d %s, a DCGM blank (no value: 2^63 − 16 and up) or beyond a signed 64-bit counter, not a reading", n.Metric, raw, n.Unit)
				return nil
			}
			j := float64(raw) * n.Scale
			d.EnergyJ, d.raw, d.exact, d.scale = &j, raw, true, n.Scale
			return nil
		}
		switch {
		case math.IsNaN(v) || math.IsInf(v, 0):
			d.EnergyBad = fmt.Sprintf("%s is %s, not a number of %s", n.Metric, digits.Shortest(v), n.Unit)
		case v < 0:
			d.EnergyBad = fmt.Sprintf("%s is negative (%s %s)", n.Metric, digits.Shortest(v), n.Unit)
		case v >= sentinelLimit:
			d.EnergyBad = fmt.Sprintf("%s is %s %s, at or above 2^63: a DCGM blank (no value) or a counter at its 64-bit wrap, not a reading", n.Metric, digits.Shortest(v), n.Unit)
		default:
			j := v * n.Scale
			d.EnergyJ, d.scale = &j, n.Scale
			if v > exactLimit {
				d.EnergyRoundJ = (math.Nextafter(v, math.Inf(1)) - v) / 2 * n.Scale
			}
		}
		d.Exporter = n.Exporter
		return nil
	}
	if math.IsNaN(v) || math.IsInf(v, 0) || v < 0 || v >= sentinelLimit {
		return nil // not a reading: left absent
	}
	x := v * n.Scale
	switch n.Role {
	case RolePower:
		d.PowerW = &x
		if d.Exporter == "" {
			d.Exporter = n.Exporter
		}
	case RoleUtil:
		d.UtilPct = &x
	case RoleMemory:
		d.MemBytes = &x
	case RoleClock:
		d.ClockMHz = &x
	}
	return nil
}

// EnergySince is d's counter minus base's in joules, and how far that may
// be from the exporters' integers (the sum of both readings' EnergyRoundJ).
// Two readings the text states as exact integers are subtracted as
// integers, then scaled: near 2^62 mJ a float64 difference would move in
// steps of 1 J. Both must hold an energy reading (EnergyJ not nil).
func (d *Device) EnergySince(base *Device) (j, roundJ float64) {
	if d.exact && base.exact && d.scale == base.scale {
		if d.raw >= base.raw {
			return float64(d.raw-base.raw) * d.scale, 0
		}
		return -float64(base.raw-d.raw) * d.scale, 0
	}
	return *d.EnergyJ - *base.EnergyJ, d.EnergyRoundJ + base.EnergyRoundJ
}

// Measuring returns the IDs of s's devices that hold an energy counter or
// power gauge, sorted.
func (s *Scrape) Measuring() []string {
	var out []string
	for id, d := range s.Devices {
		if d.Measures() {
			out = append(out, id)
		}
	}
	slices.Sort(out)
	return out
}
