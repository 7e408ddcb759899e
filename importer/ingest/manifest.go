package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"
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
	"slo.tpot",
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

// toMap returns the JSON object form of v.
func toMap(v any) (map[string]any, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	var m map[string]any
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return m, nil
}

// lookup returns the value at a dotted path, and whether it is present
// and non-empty.
func lookup(m map[string]any, path string) bool {
	var cur any = m
	for _, k := range strings.Split(path, ".") {
		obj, ok := cur.(map[string]any)
		if !ok {
			return false
		}
		cur, ok = obj[k]
		if !ok {
			return false
		}
	}
	switch v := cur.(type) {
	case nil:
		return false
	case string:
		return v != ""
	case json.Number:
		return true // zero numbers are omitted unless a pointer holds them
	case []any:
		return len(v) > 0
	case map[string]any:
		return len(v) > 0
	}
	return true
}

// FillUnknown recomputes m.Unknown: the paths already listed that are
// still empty, plus every MustState path that is empty. Sorted, without
// duplicates.
func FillUnknown(m *schema.Manifest) error {
	obj, err := toMap(m)
	if err != nil {
		return err
	}
	set := map[string]bool{}
	for _, p := range append(append([]string{}, m.Unknown...), MustState...) {
		if !lookup(obj, p) {
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

// mergePatch applies an RFC 7396 JSON merge patch.
func mergePatch(target any, patch any) any {
	p, ok := patch.(map[string]any)
	if !ok {
		return patch
	}
	t, ok := target.(map[string]any)
	if !ok {
		t = map[string]any{}
	}
	for k, v := range p {
		if v == nil {
			delete(t, k)
			continue
		}
		t[k] = mergePatch(t[k], v)
	}
	return t
}

// decodeManifest decodes obj strictly (unknown fields and wrong types are
// errors); the schema's rules are checked once, on the finished result.
func decodeManifest(obj map[string]any) (*schema.Manifest, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m schema.Manifest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	return &m, nil
}

// ApplyOverlay merges a partial manifest (JSON merge patch, RFC 7396) over
// m, then the --set assignments ("dotted.path=value"; the value is read as
// JSON when it is a JSON number, boolean, null, array or object, and as a
// string otherwise or when the field wants a string), then recomputes
// m.Unknown so that every field set is no longer listed.
func ApplyOverlay(m *schema.Manifest, overlay []byte, sets []string) error {
	obj, err := toMap(m)
	if err != nil {
		return err
	}
	if len(bytes.TrimSpace(overlay)) > 0 {
		var patch map[string]any
		dec := json.NewDecoder(bytes.NewReader(overlay))
		dec.UseNumber()
		if err := dec.Decode(&patch); err != nil {
			return fmt.Errorf("read manifest overlay: %w", err)
		}
		if dec.More() {
			return errors.New("read manifest overlay: trailing data after the JSON object")
		}
		obj = mergePatch(obj, patch).(map[string]any)
		if _, err := decodeManifest(obj); err != nil {
			return fmt.Errorf("apply manifest overlay: %w", err)
		}
	}
	for _, s := range sets {
		key, val, ok := strings.Cut(s, "=")
		key = strings.TrimSpace(key)
		if !ok || key == "" {
			return fmt.Errorf("--set %q: want key=value", s)
		}
		parts := strings.Split(key, ".")
		for _, p := range parts {
			if p == "" {
				return fmt.Errorf("--set %q: empty path element", s)
			}
		}
		try := func(v any) (map[string]any, error) {
			patch := map[string]any{}
			cur := patch
			for _, p := range parts[:len(parts)-1] {
				next := map[string]any{}
				cur[p] = next
				cur = next
			}
			cur[parts[len(parts)-1]] = v
			// Deep-copy obj through JSON so a failed try leaves it intact.
			cp, err := toMap(obj)
			if err != nil {
				return nil, err
			}
			merged := mergePatch(cp, patch).(map[string]any)
			if _, err := decodeManifest(merged); err != nil {
				return nil, err
			}
			return merged, nil
		}
		var jv any
		dec := json.NewDecoder(strings.NewReader(val))
		dec.UseNumber()
		var merged map[string]any
		var errJSON error
		if dec.Decode(&jv) == nil && !dec.More() {
			if _, isStr := jv.(string); !isStr {
				merged, errJSON = try(jv)
			}
		}
		if merged == nil {
			var errStr error
			merged, errStr = try(val)
			if errStr != nil {
				if errJSON != nil {
					errStr = errJSON
				}
				return fmt.Errorf("--set %s: %w", key, errStr)
			}
		}
		obj = merged
	}
	nm, err := decodeManifest(obj)
	if err != nil {
		return err
	}
	*m = *nm
	return FillUnknown(m)
}
