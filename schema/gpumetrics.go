package schema

import (
	"fmt"
	"path"
	"regexp"
	"slices"
)

// GPUMetricsDir is the folder under attachments/ holding the raw scrapes
// of accelerator exporters (capture --gpu-metrics).
const GPUMetricsDir = "gpu-metrics"

// How it is known that a listed device serves the endpoint.
const (
	// ServingDeclared: the publisher's word (capture --gpu-metrics names
	// the exporter of the nodes that serve).
	ServingDeclared = "declared"
	// ServingSimulator: the in-process simulator's own simulated
	// accelerators (capture --simulate --sim-gpus).
	ServingSimulator = "simulator"
	// ServingImported: an imported run's telemetry (AIPerf's
	// gpu_telemetry_export.jsonl) names the devices; that they served is
	// the tool's word, through the publisher.
	ServingImported = "imported"
)

// GPUMetrics indexes the raw scrapes of accelerator exporters
// (manifest.gpu_metrics) kept byte for byte under attachments/gpu-metrics/:
// one endpoint per node, scraped before, during (every Interval) and
// after every point × repeat. replay derives the energy of each point
// from them (package energy).
type GPUMetrics struct {
	// Interval is the period of the scrapes during a point.
	Interval Duration `json:"interval"`
	// MaxAge is how old a reading may already be when a scrape answers:
	// an exporter serves the values it last collected (the DCGM exporter
	// every --collect-interval, 30 s unless configured), not the
	// hardware's at the request. A scrape's readings are taken to lie in
	// [from_ns − max_age, at_ns]. 0 (or absent): read at the scrape (the
	// simulator computes its values on every request).
	MaxAge Duration `json:"max_age,omitempty"`
	// EnergyCounter and PowerGauge are metric names the user gave for an
	// exporter the built-in table does not know; nil when not given.
	EnergyCounter *GPUMetricName `json:"energy_counter,omitempty"`
	PowerGauge    *GPUMetricName `json:"power_gauge,omitempty"`
	Endpoints     []GPUEndpoint  `json:"endpoints"`
	Scrapes       []GPUScrape    `json:"scrapes"`
}

// GPUMetricName is a user-named metric and the unit its values are in.
type GPUMetricName struct {
	Name string `json:"name"`
	Unit string `json:"unit"`
}

// GPUEndpoint is one scraped exporter and the devices it counts.
type GPUEndpoint struct {
	URL string `json:"url"`
	// Devices are those the endpoint's first scrape showed with an
	// energy counter or power gauge.
	Devices []GPUDevice `json:"devices"`
}

// GPUDevice is one accelerator counted.
type GPUDevice struct {
	// ID is its UUID (or serial number, or label set: IDFrom says which).
	ID     string `json:"id"`
	IDFrom string `json:"id_from"`
	Model  string `json:"model,omitempty"`
	Host   string `json:"host,omitempty"`
	// Serving says how it is known the device serves the endpoint
	// (ServingDeclared, ServingSimulator, ServingImported).
	Serving string `json:"serving"`
}

// GPUScrape is one stored scrape of an accelerator exporter.
type GPUScrape struct {
	// Endpoint indexes GPUMetrics.Endpoints.
	Endpoint int    `json:"endpoint"`
	Point    string `json:"point"`
	Repeat   int    `json:"repeat"`
	// When is before, during or after the point × repeat.
	When string `json:"when"`
	// FromNS is when the request was sent and AtNS when the answer
	// arrived, in the run's clock: the readings are of an instant
	// between.
	FromNS int64 `json:"from_ns"`
	AtNS   int64 `json:"at_ns"`
	// File is the attachment path (relative to attachments/) and SHA256
	// its digest; both empty when the scrape failed (Error says why).
	File   string `json:"file,omitempty"`
	SHA256 string `json:"sha256,omitempty"`
	Error  string `json:"error,omitempty"`
}

var gpuScrapeFileRE = regexp.MustCompile(`^gpu-metrics/[A-Za-z0-9._-]+\.prom$`)

// IsGPUScrapeFile reports whether name is a well-formed accelerator
// scrape attachment name: gpu-metrics/NAME.prom, clean.
func IsGPUScrapeFile(name string) bool {
	return gpuScrapeFileRE.MatchString(name) && path.Clean(name) == name
}

// validateGPUMetrics checks manifest.gpu_metrics against the load plan.
// (The units of user-named metrics are checked by artifact, with package
// energy's table of units.)
func validateGPUMetrics(ps *problems, m *Manifest) {
	g := m.GPUMetrics
	if g == nil {
		return
	}
	if len(g.Endpoints) == 0 {
		ps.add("gpu_metrics.endpoints", "must list the scraped exporters")
	}
	if g.MaxAge < 0 {
		ps.add("gpu_metrics.max_age", "must not be negative, got %d ns", int64(g.MaxAge))
	}
	for i, e := range g.Endpoints {
		f := fmt.Sprintf("gpu_metrics.endpoints[%d]", i)
		if e.URL == "" {
			ps.add(f+".url", "must name the scraped address")
		}
		ids := map[string]bool{}
		for j, d := range e.Devices {
			df := fmt.Sprintf("%s.devices[%d]", f, j)
			if d.ID == "" || d.IDFrom == "" {
				ps.add(df, "must state the device's id and id_from")
			}
			if ids[d.ID] {
				ps.add(df+".id", "%q is listed twice", d.ID)
			}
			ids[d.ID] = true
			switch {
			case !oneOf(d.Serving, ServingDeclared, ServingSimulator, ServingImported):
				ps.add(df+".serving", "must be one of %s, got %q", quoteList(ServingDeclared, ServingSimulator, ServingImported), d.Serving)
			case d.Serving == ServingImported && !m.Imported():
				ps.add(df+".serving", "is %q, but the run is not imported", d.Serving)
			case d.Serving == ServingSimulator && !InProcessSimulator(m):
				ps.add(df+".serving", "is %q, but the run is not against the in-process simulator (--simulate on client.command_line)", d.Serving)
			}
		}
	}
	validateGPUScrapes(ps, m)
	validateGPUDeviceCount(ps, m)
	validateGPUDeviceModels(ps, m)
}

// ReadingFrom is the earliest instant scrape s's readings may describe:
// its request's send time less g.MaxAge (an exporter answers with what it
// last collected), never below the clock's zero.
func (g *GPUMetrics) ReadingFrom(s GPUScrape) int64 {
	return max(0, s.FromNS-int64(max(g.MaxAge, 0)))
}

// AgeUnknownNote says what an unknown reading age (AgeUnknown) leaves
// out of every energy bound.
const AgeUnknownNote = "the scrape age bound is unknown: imported telemetry states no max_age, so the tool's collection times are taken as the readings' instants, while the exporter may have read the devices up to its own collect interval earlier; no energy bound includes that"

// AgeUnknown reports whether g's readings have no stated age bound:
// imported telemetry (devices serving ServingImported) with no max_age.
// AIPerf records when it collected a line from the DCGM exporter, not when
// the exporter read the device, and states no collect interval.
func (g *GPUMetrics) AgeUnknown() bool {
	if g == nil || g.MaxAge > 0 {
		return false
	}
	for _, e := range g.Endpoints {
		for _, d := range e.Devices {
			if d.Serving == ServingImported {
				return true
			}
		}
	}
	return false
}

// validateGPUScrapes checks manifest.gpu_metrics.scrapes.
func validateGPUScrapes(ps *problems, m *Manifest) {
	g := m.GPUMetrics
	for _, n := range []struct {
		f string
		v *GPUMetricName
	}{{"gpu_metrics.energy_counter", g.EnergyCounter}, {"gpu_metrics.power_gauge", g.PowerGauge}} {
		if n.v != nil && (n.v.Name == "" || n.v.Unit == "") {
			ps.add(n.f, "must state the metric's name and unit")
		}
	}
	seen := map[string]bool{}
	for i, s := range g.Scrapes {
		f := fmt.Sprintf("gpu_metrics.scrapes[%d]", i)
		if s.Endpoint < 0 || s.Endpoint >= len(g.Endpoints) {
			ps.add(f+".endpoint", "must index gpu_metrics.endpoints [0, %d), got %d", len(g.Endpoints), s.Endpoint)
		}
		if !slices.ContainsFunc(m.Load.Points, func(pt Point) bool { return pt.Name == s.Point }) {
			ps.add(f+".point", "%q is not a declared load point", s.Point)
		}
		if s.Repeat < 0 || (m.Load.Repeats > 0 && s.Repeat >= m.Load.Repeats) {
			ps.add(f+".repeat", "must be in [0, %d), got %d", m.Load.Repeats, s.Repeat)
		}
		if !oneOf(s.When, ScrapeBefore, ScrapeDuring, ScrapeAfter) {
			ps.add(f+".when", "must be one of %s, got %q", quoteList(ScrapeBefore, ScrapeDuring, ScrapeAfter), s.When)
		}
		if s.FromNS < 0 || s.FromNS > s.AtNS {
			ps.add(f+".from_ns", "must be in [0, at_ns %d], got %d", s.AtNS, s.FromNS)
		}
		switch {
		case s.Error != "" && (s.File != "" || s.SHA256 != ""):
			ps.add(f, "a failed scrape has no file")
		case s.Error == "" && !IsGPUScrapeFile(s.File):
			ps.add(f+".file", "must be %s/NAME.prom, got %q", GPUMetricsDir, s.File)
		case s.Error == "" && !sha256RE.MatchString(s.SHA256):
			ps.add(f+".sha256", "must be 64 lowercase hex digits")
		}
		if s.File != "" {
			if seen[s.File] {
				ps.add(f+".file", "%q is listed twice", s.File)
			}
			seen[s.File] = true
		}
	}
}
