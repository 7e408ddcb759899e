package schema

import (
	"fmt"
	"slices"
)

// Field statuses of a Provenance: whether the source measured a record
// field, rebuilt it from what it measured, or did not store it (the
// record then holds a placeholder that no metric may use).
const (
	FieldMeasured = "measured"
	FieldDerived  = "derived"
	FieldAbsent   = "absent"
)

// Record quantities a Provenance describes. Most are record fields;
// FirstChunk and LastChunk name the first and last element of chunks_ns,
// which a source may measure (as a time to first token and an end-to-end
// latency) when it stores none of the chunks between them.
const (
	FieldScheduled    = "scheduled_ns"
	FieldSent         = "sent_ns"
	FieldEnd          = "end_ns"
	FieldFirstChunk   = "first_chunk_ns"
	FieldLastChunk    = "last_chunk_ns"
	FieldChunks       = "chunks_ns"
	FieldChunkTokens  = "chunk_tokens"
	FieldInputTokens  = "input_tokens"
	FieldOutputTokens = "output_tokens"
)

// ProvenanceFields lists the record quantities a Provenance may describe,
// in output order.
var ProvenanceFields = []string{
	FieldScheduled, FieldSent, FieldEnd, FieldFirstChunk, FieldLastChunk, FieldChunks,
	FieldChunkTokens, FieldInputTokens, FieldOutputTokens,
}

// Provenance states, machine-readably, which record fields the source
// measured (manifest.provenance). A field it does not list is measured;
// a manifest without the block (a capture or synth run) measured every
// field.
type Provenance struct {
	// Fields maps a record quantity (one of ProvenanceFields) to where its
	// values come from.
	Fields map[string]FieldOrigin `json:"fields"`
	// Windows holds the measurement windows the source tool stored itself
	// (e.g. vLLM's duration), for the points whose window the records
	// cannot give because their send times were not measured, and the
	// profiling phase a time-based AIPerf run divides its rates by
	// (importer/aiperf/window.go).
	Windows []ToolWindow `json:"windows,omitempty"`
}

// FieldOrigin is the provenance of one record quantity.
type FieldOrigin struct {
	// Status is measured, derived or absent.
	Status string `json:"status"`
	// How says how a derived field was rebuilt, or what placeholder an
	// absent field holds; required unless measured.
	How string `json:"how,omitempty"`
}

// ToolWindow is a measurement window of one point and repeat, as the
// source tool stored it.
type ToolWindow struct {
	Point    string `json:"point"`
	Repeat   int    `json:"repeat"`
	WindowNS int64  `json:"window_ns"`
	// How names the tool's value the window comes from.
	How string `json:"how"`
}

// Field returns the provenance of a record quantity; a nil Provenance or
// an unlisted field is measured.
func (p *Provenance) Field(name string) FieldOrigin {
	if p != nil {
		if o, ok := p.Fields[name]; ok {
			return o
		}
	}
	return FieldOrigin{Status: FieldMeasured}
}

// Usable reports whether metrics may be computed from the field: it was
// measured, or derived from what was measured.
func (o FieldOrigin) Usable() bool { return o.Status != FieldAbsent }

// Window returns the tool's own window of a point and repeat, if stored.
func (p *Provenance) Window(point string, repeat int) (ToolWindow, bool) {
	if p == nil {
		return ToolWindow{}, false
	}
	for _, w := range p.Windows {
		if w.Point == point && w.Repeat == repeat {
			return w, true
		}
	}
	return ToolWindow{}, false
}

// Set records the provenance of one record quantity, creating the map.
func (p *Provenance) Set(name, status, how string) {
	if p.Fields == nil {
		p.Fields = map[string]FieldOrigin{}
	}
	p.Fields[name] = FieldOrigin{Status: status, How: how}
}

// validateProvenance checks manifest.provenance against the load plan.
func validateProvenance(ps *problems, m *Manifest) {
	p := m.Provenance
	if p == nil {
		return
	}
	if p.Fields == nil {
		ps.add("provenance.fields", "must be an object (may be empty)")
	}
	names := make([]string, 0, len(p.Fields))
	for k := range p.Fields {
		names = append(names, k)
	}
	slices.Sort(names)
	for _, k := range names {
		o := p.Fields[k]
		f := "provenance.fields." + k
		if !slices.Contains(ProvenanceFields, k) {
			ps.add(f, "is not a record quantity (want one of %s)", quoteList(ProvenanceFields...))
			continue
		}
		if !oneOf(o.Status, FieldMeasured, FieldDerived, FieldAbsent) {
			ps.add(f+".status", "must be one of %s, got %q", quoteList(FieldMeasured, FieldDerived, FieldAbsent), o.Status)
		} else if o.Status != FieldMeasured && o.How == "" {
			ps.add(f+".how", "must say how a %s field was obtained", o.Status)
		}
	}
	if m.Evidence != EvidenceImported {
		// A run benchseal measured itself (capture, synth) stored every
		// field it measured: only an import may lack one. The one
		// exception is what the non-streaming boundary implies.
		for _, k := range names {
			o := p.Fields[k]
			if o.Status == FieldMeasured || (m.Client.Boundary == BoundaryNonStreaming &&
				((k == FieldFirstChunk && o.Status == FieldAbsent) || (k == FieldChunks && o.Status == FieldDerived))) {
				continue
			}
			ps.add("provenance.fields."+k+".status", "%q in a run with evidence %q: only an imported run may declare a field it did not measure (a non-streaming run: first_chunk_ns absent, chunks_ns derived)", o.Status, m.Evidence)
		}
		if len(p.Windows) > 0 {
			ps.add("provenance.windows", "only an imported run may store a tool's own window (evidence is %q)", m.Evidence)
		}
	}
	seen := map[string]bool{}
	for i, w := range p.Windows {
		f := fmt.Sprintf("provenance.windows[%d]", i)
		if !slices.ContainsFunc(m.Load.Points, func(pt Point) bool { return pt.Name == w.Point }) {
			ps.add(f+".point", "%q is not a declared load point", w.Point)
		}
		if w.Repeat < 0 || (m.Load.Repeats > 0 && w.Repeat >= m.Load.Repeats) {
			ps.add(f+".repeat", "must be in [0, %d), got %d", m.Load.Repeats, w.Repeat)
		}
		if w.WindowNS <= 0 {
			ps.add(f+".window_ns", "must be positive, got %d", w.WindowNS)
		}
		if w.How == "" {
			ps.add(f+".how", "must name the tool's value the window comes from")
		}
		key := fmt.Sprintf("%s\x00%d", w.Point, w.Repeat)
		if seen[key] {
			ps.add(f, "point %q repeat %d has two windows", w.Point, w.Repeat)
		}
		seen[key] = true
	}
}

// Imported reports whether the manifest presents its run as imported from
// another tool: evidence "imported" or a source block. Such a run must be
// exactly what its importer derives from the source files it attaches
// (validate and verify re-import them).
func (m *Manifest) Imported() bool {
	return m.Evidence == EvidenceImported || m.Source != nil
}

// ToolWindowFromRate returns the reported rate a tool's stored windows are
// derived from ("" when they are a time the tool measured, or the tool is
// not a peer tool's canonical name): PeerTool.WindowFromRate. A rate
// recomputed over such a window restates the tool's own rate, so it checks
// no claim on a rate.
func ToolWindowFromRate(tool string) string {
	for _, t := range PeerTools {
		if t.Name == tool {
			return t.WindowFromRate
		}
	}
	return ""
}
