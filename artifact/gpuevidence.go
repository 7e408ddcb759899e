// The stored accelerator-metrics scrapes against the manifest that names
// them.

package artifact

import (
	"bytes"
	"fmt"
	"slices"
	"strings"

	"github.com/benchseal/benchseal/energy"
	"github.com/benchseal/benchseal/schema"
)

// CheckGPUEvidence checks every accelerator scrape manifest m lists
// (manifest.gpu_metrics.scrapes) against its stored bytes, which read
// returns by attachment name: present, of the sha256 the manifest
// states, parsable (energy.ReadScrape, the reader replay and verify use
// too); the units of user-named metrics known; and each endpoint's listed
// devices those its first stored scrape measures; and every device's
// counter rise between two scrapes within what its own power gauge allows
// (gpuGauge.check). CheckServerEvidence
// calls it, so validate, pack and verify all check the accelerator
// scrapes with the engine's.
func CheckGPUEvidence(m *schema.Manifest, file string, read func(name string) ([]byte, error)) []schema.Problem {
	if m == nil || m.GPUMetrics == nil {
		return nil
	}
	g := m.GPUMetrics
	var out []schema.Problem
	add := func(field, format string, a ...any) {
		out = append(out, schema.Problem{File: file, Field: field, Message: fmt.Sprintf(format, a...)})
	}
	custom, err := energy.CustomOf(g)
	if err != nil {
		add("gpu_metrics", "%v", err)
		return out
	}
	gauge := newGPUGauge(len(g.Endpoints))
	firstSeen := map[int]bool{}
	for _, i := range sortScrapesByTime(g.Scrapes) {
		s := g.Scrapes[i]
		field := fmt.Sprintf("gpu_metrics.scrapes[%d].file", i)
		if s.Error != "" || !schema.IsGPUScrapeFile(s.File) || s.Endpoint < 0 || s.Endpoint >= len(g.Endpoints) {
			continue // a failed scrape, or reported by ValidateManifest
		}
		sc, b, err := energy.ReadScrape(read, s, custom)
		if err != nil {
			add(field, "%v", err)
			continue
		}
		rs := s
		rs.FromNS = g.ReadingFrom(s) // a reading may be up to max_age old
		gauge.add(i, rs, sc)
		if m.Evidence != schema.EvidenceSynthetic && bytes.Contains(b, []byte(`="`+schema.SimulatorModel+`"`)) {
			add("evidence", "is %q but the scrape %s/%s (%s) has series labelled %q, the simulator's: a run against benchseal's simulator is %q",
				m.Evidence, schema.AttachmentsDir, s.File, field, schema.SimulatorModel, schema.EvidenceSynthetic)
		}
		if firstSeen[s.Endpoint] {
			continue
		}
		firstSeen[s.Endpoint] = true
		var listed []string
		for _, d := range g.Endpoints[s.Endpoint].Devices {
			listed = append(listed, d.ID)
		}
		slices.Sort(listed)
		if got := sc.Measuring(); !slices.Equal(got, listed) {
			add(fmt.Sprintf("gpu_metrics.endpoints[%d].devices", s.Endpoint), "lists [%s], but its first scrape %s/%s measures [%s]",
				strings.Join(listed, ", "), schema.AttachmentsDir, s.File, strings.Join(got, ", "))
		}
	}
	if GPUGaugeNotApplied(g) != "" {
		return out
	}
	return append(out, gauge.check(file)...)
}

// GPUGaugeNotApplied says why the counter-against-gauge checks
// (gpuGauge.check, checkBusyPair) are not applied to g's readings, or is
// "" when they are: readings of unknown age (schema.GPUMetrics.AgeUnknown,
// imported telemetry) bound no rise from either side, since two collections
// may carry one exporter reading (no rise under a busy gauge) or readings
// an unknown time apart. verify prints it.
func GPUGaugeNotApplied(g *schema.GPUMetrics) string {
	if g.AgeUnknown() {
		return "imported telemetry: the import's word (its readings are of unknown age, so no counter rise between two of them is held to their power gauges)"
	}
	return ""
}
