package ingest

import (
	"fmt"
	"sort"
	"time"

	"github.com/benchseal/benchseal/schema"
)

// MustState lists, as dotted JSON paths, the manifest fields an importer
// lists as unknown when the tool's files do not state them: the schema's
// must-state fields plus the others a reader of an imported run asks
// about.
var MustState = append(append([]string{}, schema.MustState...),
	"client.command_line",
	"client.seed",
	"hardware.accelerator_memory",
	"hardware.interconnect",
	"engine.image",
	"model.tokenizer",
	"decoding.temperature",
	"decoding.endpoint",
	"workload.dataset",
	"workload.input_tokens",
	"workload.output_tokens",
	"slo."+schema.SLOTPOT,
)

// NewManifest returns a manifest with the fields every import shares:
// schema, evidence "imported", one repeat, the source tool and version,
// and the times derived from epochNS and finishNS (Unix ns).
func NewManifest(tool, version string, epochNS, finishNS int64) schema.Manifest {
	if finishNS < epochNS {
		finishNS = epochNS
	}
	return schema.Manifest{
		Schema:      schema.ManifestSchemaV1,
		StartTime:   time.Unix(0, epochNS).UTC().Format(time.RFC3339Nano),
		FinishTime:  time.Unix(0, finishNS).UTC().Format(time.RFC3339Nano),
		EpochUnixNS: epochNS,
		Evidence:    schema.EvidenceImported,
		Client:      schema.Client{Name: tool, Version: version, Boundary: schema.BoundaryClientStreaming, TokenCounts: "tool-reported"},
		Load:        schema.Load{Repeats: 1, Points: []schema.Point{}},
		Source:      &schema.Source{Tool: tool, Version: version},
		Provenance:  &schema.Provenance{Fields: map[string]schema.FieldOrigin{}},
		Unknown:     []string{},
	}
}

// SetNote sets m.Notes[key] = value, creating the map.
func SetNote(m *schema.Manifest, key, value string) {
	if m.Notes == nil {
		m.Notes = map[string]string{}
	}
	m.Notes[key] = value
}

// Derive appends a line to the manifest's source.derived list.
func Derive(m *schema.Manifest, format string, args ...any) {
	if m.Source == nil {
		m.Source = &schema.Source{}
	}
	m.Source.Derived = append(m.Source.Derived, fmt.Sprintf(format, args...))
}

// Measured declares record quantities (schema.ProvenanceFields) the
// tool's files measured.
func Measured(m *schema.Manifest, fields ...string) {
	for _, f := range fields {
		provenance(m).Set(f, schema.FieldMeasured, "")
	}
}

// Derived declares a record quantity rebuilt from what the tool measured,
// and how.
func Derived(m *schema.Manifest, field, format string, args ...any) {
	provenance(m).Set(field, schema.FieldDerived, fmt.Sprintf(format, args...))
}

// Absent declares a record quantity the tool did not store, and the
// placeholder the records hold instead; replay computes no metric from it.
func Absent(m *schema.Manifest, field, format string, args ...any) {
	provenance(m).Set(field, schema.FieldAbsent, fmt.Sprintf(format, args...))
}

// ToolWindow records the measurement window the tool stored for a point
// and repeat (ns), and the tool's value it comes from.
func ToolWindow(m *schema.Manifest, point string, repeat int, windowNS int64, format string, args ...any) {
	p := provenance(m)
	p.Windows = append(p.Windows, schema.ToolWindow{Point: point, Repeat: repeat, WindowNS: windowNS, How: fmt.Sprintf(format, args...)})
}

func provenance(m *schema.Manifest) *schema.Provenance {
	if m.Provenance == nil {
		m.Provenance = &schema.Provenance{}
	}
	return m.Provenance
}

// FillUnknown recomputes m.Unknown: the paths already listed that are
// still empty, plus every MustState path that is empty. Sorted, without
// duplicates.
func FillUnknown(m *schema.Manifest) error {
	set := map[string]bool{}
	for _, p := range append(append([]string{}, m.Unknown...), MustState...) {
		if p == "epoch_unix_ns" {
			// Always written; 0 is its unset value.
			if m.EpochUnixNS == 0 {
				set[p] = true
			}
			continue
		}
		if !schema.FieldSet(m, p) {
			set[p] = true
		}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	m.Unknown = out
	return nil
}

// ApplyOverlay applies a manifest overlay and --set assignments
// (schema.ApplyOverlay), then recomputes m.Unknown with FillUnknown, so that
// every field set leaves the list and every must-state field left empty
// joins it.
func ApplyOverlay(m *schema.Manifest, overlay []byte, sets []string) error {
	if err := schema.ApplyOverlay(m, overlay, sets); err != nil {
		return err
	}
	return FillUnknown(m)
}
