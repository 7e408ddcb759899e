package aiperf

import (
	"bytes"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/energy"
	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/importer/internal/importtest"
	"github.com/benchseal/benchseal/schema"
)

const telemetryFixture = "run1_gpu_telemetry_export.jsonl"

func TestParseTelemetryFixture(t *testing.T) {
	f := importtest.Load(t, Tool, telemetryFixture)[0]
	tel, err := ParseTelemetry(f.Name, f.Data)
	if err != nil {
		t.Fatal(err)
	}
	if len(tel.Devices) != 2 {
		t.Fatalf("devices = %d, want 2", len(tel.Devices))
	}
	d := tel.Devices[0]
	if d.UUID != "GPU-5e1b0b1a-0c2d-4e3f-8a9b-0123456789ab" || d.Index != 0 || d.Vendor != "nvidia" || d.Source != "http://localhost:9401/metrics" || d.Hostname != "gpu-node-1" {
		t.Errorf("device 0 = %+v", d)
	}
	if len(d.Samples) != 35 {
		t.Fatalf("samples = %d, want 35", len(d.Samples))
	}
	s := d.Samples[0]
	// energy_consumption 812.345678901 MJ is 812345678.901 J.
	if s.EnergyJ == nil || *s.EnergyJ != 812345678.901 {
		t.Errorf("energy = %v J, want 812345678.901", s.EnergyJ)
	}
	if s.PowerW == nil || *s.PowerW != 98 || s.UtilPct == nil || *s.UtilPct != 0 {
		t.Errorf("power %v util %v", s.PowerW, s.UtilPct)
	}
	for i := 1; i < len(d.Samples); i++ {
		if d.Samples[i].TimestampNS <= d.Samples[i-1].TimestampNS || *d.Samples[i].EnergyJ < *d.Samples[i-1].EnergyJ {
			t.Fatalf("sample %d out of order or counter down", i)
		}
	}
}

func TestTelemetryLinesOutOfOrderAreSorted(t *testing.T) {
	f := importtest.Load(t, Tool, telemetryFixture)[0]
	lines := bytes.SplitAfter(f.Data, []byte("\n"))
	lines[0], lines[2] = lines[2], lines[0] // device 0's first two samples swapped
	tel, err := ParseTelemetry(f.Name, bytes.Join(lines, nil))
	if err != nil {
		t.Fatal(err)
	}
	s := tel.Devices[0].Samples
	if s[0].Line != 3 || s[1].Line != 1 || s[0].TimestampNS >= s[1].TimestampNS {
		t.Errorf("first samples from lines %d, %d", s[0].Line, s[1].Line)
	}
}

func TestTelemetryTwoReadingsOfOneInstantFail(t *testing.T) {
	f := importtest.Load(t, Tool, telemetryFixture)[0]
	lines := bytes.SplitAfter(f.Data, []byte("\n"))
	data := bytes.Join(append(lines[:5:5], append([][]byte{lines[0]}, lines[5:]...)...), nil)
	_, err := ParseTelemetry(f.Name, data)
	if err == nil || !strings.Contains(err.Error(), f.Name+":6:") || !strings.Contains(err.Error(), "lines 1 and 6 at the same instant") {
		t.Errorf("a repeated line: %v", err)
	}
}

func TestTelemetryAMDFields(t *testing.T) {
	line := `{"gpu_index":0,"gpu_uuid":"0x1234","gpu_model_name":"AMD Instinct MI300X","timestamp_ns":1759522418154568925,"dcgm_url":"amdsmi://localhost","telemetry_data":{"amd_power":702.0,"amd_energy_consumption":1.5,"amd_gfx_activity":88.0,"amd_memory_used":140.2}}` + "\n"
	tel, err := ParseTelemetry(TelemetryFile, []byte(line))
	if err != nil {
		t.Fatal(err)
	}
	s := tel.Devices[0].Samples[0]
	if tel.Devices[0].Vendor != "amd" || *s.EnergyJ != 1.5e6 || *s.PowerW != 702 || *s.UtilPct != 88 {
		t.Errorf("amd sample %+v (vendor %s)", s, tel.Devices[0].Vendor)
	}
}

func TestTelemetryBesideProfileExportImports(t *testing.T) {
	files := importtest.Load(t, Tool, append(fixture, telemetryFixture)...)
	res, err := Parse(files)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Records) != 100 {
		t.Fatalf("records = %d", len(res.Records))
	}
	found := false
	for _, d := range res.Manifest.Source.Derived {
		found = found || strings.Contains(d, "imported AIPerf telemetry of 2 device(s) (2 with an energy counter, 2 with a power gauge)")
	}
	if !found {
		t.Errorf("manifest does not state the telemetry: %q", res.Manifest.Source.Derived)
	}
	importtest.Write(t, Tool, files, res)
}

func TestBadTelemetryFails(t *testing.T) {
	good := importtest.Load(t, Tool, telemetryFixture)[0]
	first := string(bytes.SplitAfter(good.Data, []byte("\n"))[0])
	for _, c := range []struct {
		name, old, new string
		all            bool
		want           []string
	}{
		{"no uuid", `"gpu_uuid":"GPU-5e1b0b1a-0c2d-4e3f-8a9b-0123456789ab",`, ``, false, []string{":1:", "gpu_uuid", "missing"}},
		{"empty source", `"dcgm_url":"http://localhost:9401/metrics"`, `"dcgm_url":""`, false, []string{":1:", "dcgm_url"}},
		{"negative energy", `"energy_consumption":812.345678901`, `"energy_consumption":-812.345678901`, false, []string{":1:", "telemetry_data.energy_consumption", "non-negative"}},
		{"fractional timestamp", `"timestamp_ns":1759522418154568925`, `"timestamp_ns":1759522418.154568925`, false, []string{":1:", "timestamp_ns", "whole number"}},
		{"string power", `"gpu_power_usage":98.0`, `"gpu_power_usage":"98"`, false, []string{":1:", "gpu_power_usage"}},
		{"NaN", `"gpu_power_usage":98.0`, `"gpu_power_usage":NaN`, false, []string{":1:", "NaN"}},
		{"utilization over 100", `"gpu_utilization":0.0`, `"gpu_utilization":250.0`, false, []string{":1:", "telemetry_data.gpu_utilization", "percentage"}},
		{"both vendors", `"gpu_power_usage":98.0`, `"gpu_power_usage":98.0,"amd_power":98.0`, false, []string{":1:", "both NVIDIA", "AMD"}},
		{"no telemetry_data", `,"telemetry_data":`, `,"x_telemetry_data":`, false, nil},
		{"index changes", `"gpu_index":0,"gpu_uuid":"GPU-5e1b0b1a`, `"gpu_index":7,"gpu_uuid":"GPU-5e1b0b1a`, false, []string{":3:", "gpu_index", `"7" on line 1, "0" here`}},
		{"truncated", first, first[:len(first)/2] + "\n", false, []string{":1:", "JSON"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			data := strings.Replace(string(good.Data), c.old, c.new, 1)
			if data == string(good.Data) {
				t.Fatalf("edit %q not applied", c.old)
			}
			_, err := ParseTelemetry(good.Name, []byte(data))
			if err == nil {
				if c.want == nil {
					return // not a telemetry file any more: IsTelemetry decides, below
				}
				t.Fatal("accepted")
			}
			if !errors.Is(err, ingest.ErrBadInput) {
				t.Errorf("%v is not ErrBadInput", err)
			}
			for _, w := range append([]string{good.Name}, c.want...) {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q lacks %q", err, w)
				}
			}
		})
	}
}

func TestTelemetryWithoutDataIsNotTelemetry(t *testing.T) {
	good := importtest.Load(t, Tool, telemetryFixture)[0]
	if !IsTelemetry(good.Data) {
		t.Fatal("fixture not recognised")
	}
	bad := strings.Replace(string(good.Data), `"telemetry_data":`, `"x":`, 1)
	if IsTelemetry([]byte(bad)) {
		t.Error("a first line without telemetry_data recognised as telemetry")
	}
	files := importtest.Load(t, Tool, fixture...)
	files = append(files, ingest.File{Name: TelemetryFile, Data: []byte(strings.Replace(string(good.Data), `"gpu_uuid":"GPU-9f8e7d6c`, `"x":"GPU-9f8e7d6c`, 1))})
	if _, err := Parse(files); err == nil || !strings.Contains(err.Error(), TelemetryFile+":2:") || !strings.Contains(err.Error(), "gpu_uuid") {
		t.Errorf("a bad second line beside the profile export: %v", err)
	}
}

func FuzzParseTelemetry(f *testing.F) {
	good := importtest.Load(f, Tool, telemetryFixture)[0]
	f.Add(good.Data)
	f.Add(bytes.SplitAfter(good.Data, []byte("\n"))[0])
	f.Fuzz(func(t *testing.T, data []byte) {
		tel, err := ParseTelemetry(TelemetryFile, data)
		if err != nil {
			if !errors.Is(err, ingest.ErrBadInput) {
				t.Fatalf("error %v is not ErrBadInput", err)
			}
			return
		}
		for _, d := range tel.Devices {
			for i, s := range d.Samples {
				if s.TimestampNS <= 0 || (i > 0 && s.TimestampNS < d.Samples[i-1].TimestampNS) {
					t.Fatalf("samples out of order: %+v", d.Samples)
				}
				for _, v := range []*float64{s.EnergyJ, s.PowerW, s.UtilPct, s.MemoryUsedGB} {
					if v != nil && *v < 0 {
						t.Fatalf("negative value in %+v", s)
					}
				}
			}
		}
	})
}

// TestTelemetryBecomesGPUScrapes: the telemetry export beside the profile
// export becomes manifest.gpu_metrics with one DCGM-style scrape a
// collection instant, and the energy of the point read from those scrapes
// is bracketed as the file's own counters give it: the upper bound the
// delta between the readings at or before the first request's start and
// at or after the last end (11414.782 J over the two devices), the lower
// bound that between the readings inside (10943.708 J), computed from the
// file with exact decimals outside this code.
func TestTelemetryBecomesGPUScrapes(t *testing.T) {
	files := importtest.Load(t, Tool, append(fixture, telemetryFixture)...)
	res, err := Parse(files)
	if err != nil {
		t.Fatal(err)
	}
	g := res.Manifest.GPUMetrics
	if g == nil || len(g.Endpoints) != 1 || len(g.Endpoints[0].Devices) != 2 || len(g.Scrapes) != 35 || len(res.Attachments) != 35 {
		t.Fatalf("gpu_metrics = %+v, %d attachments", g, len(res.Attachments))
	}
	d := g.Endpoints[0].Devices[0]
	if d.ID != "GPU-5e1b0b1a-0c2d-4e3f-8a9b-0123456789ab" || d.IDFrom != "UUID" || d.Serving != schema.ServingImported || g.Endpoints[0].URL != "http://localhost:9401/metrics" {
		t.Errorf("device %+v", d)
	}
	first := string(res.Attachments[0].Data)
	for _, want := range []string{
		"# TYPE DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION counter\n",
		`DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION{gpu="0",UUID="GPU-5e1b0b1a-0c2d-4e3f-8a9b-0123456789ab",modelName="NVIDIA H100 80GB HBM3",Hostname="gpu-node-1"} 812345678901` + "\n",
		`DCGM_FI_DEV_POWER_USAGE{gpu="1",`,
	} {
		if !strings.Contains(first, want) {
			t.Errorf("first scrape lacks %q:\n%s", want, first)
		}
	}
	whens := map[string]int{}
	for _, s := range g.Scrapes {
		whens[s.When]++
		if s.FromNS != s.AtNS || s.AtNS < 0 {
			t.Fatalf("scrape %+v", s)
		}
	}
	if whens[schema.ScrapeBefore] != 4 || whens[schema.ScrapeAfter] != 3 || whens[schema.ScrapeDuring] != 28 {
		t.Errorf("before/during/after = %v", whens)
	}
	read := func(name string) ([]byte, error) {
		for _, f := range res.Attachments {
			if f.Name == name {
				return f.Data, nil
			}
		}
		return nil, errors.New("no such attachment")
	}
	var first0, last0 int64 = math.MaxInt64, 0
	for _, r := range res.Records {
		first0, last0 = min(first0, r.SentNS), max(last0, r.EndNS)
	}
	e := energy.PointEnergy(g, read, res.Manifest.Load.Points[0].Name, 0, first0, last0)
	if e.Energy.Reason != "" {
		t.Fatal(e.Energy.Reason)
	}
	if math.Abs(e.Energy.Hi-11414.782) > 1e-6 || math.Abs(e.Energy.Lo-10943.708) > 1e-6 || e.Energy.Value < e.Energy.Lo || e.Energy.Value > e.Energy.Hi {
		t.Errorf("energy %+v, want lo 10943.708 hi 11414.782", e.Energy)
	}
}
