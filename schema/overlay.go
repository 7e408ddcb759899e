package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

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
func decodeManifest(obj map[string]any) (*Manifest, error) {
	b, err := json.Marshal(obj)
	if err != nil {
		return nil, err
	}
	var m Manifest
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&m); err != nil {
		return nil, plainJSONError(err)
	}
	return &m, nil
}

// plainJSONError rewords encoding/json's type and unknown-field errors,
// which name Go types and structs, in the manifest's own terms.
func plainJSONError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		want := "a " + te.Type.Kind().String()
		switch te.Type.Kind() {
		case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64, reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
			want = "a whole number"
		case reflect.Float32, reflect.Float64:
			want = "a number"
		case reflect.String:
			want = "a string"
		case reflect.Bool:
			want = "true or false"
		case reflect.Slice, reflect.Array:
			want = "a list"
		case reflect.Struct, reflect.Map, reflect.Pointer:
			want = "an object"
		}
		return fmt.Errorf("%s must be %s, not a %s", te.Field, want, te.Value)
	}
	if msg, ok := strings.CutPrefix(err.Error(), "json: unknown field "); ok {
		return fmt.Errorf("unknown manifest field %s", msg)
	}
	return err
}

// ApplyOverlay merges a partial manifest (JSON merge patch, RFC 7396) over
// m, then the --set assignments ("dotted.path=value"; the value is read as
// JSON when it is a JSON number, boolean, null, array or object, and as a
// string otherwise or when the field wants a string), and removes every
// field now set from m.Unknown. A value of the wrong type or an unknown
// field is an error naming the assignment; m is unchanged on error.
func ApplyOverlay(m *Manifest, overlay []byte, sets []string) error {
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
				if listField(key) {
					ex, _ := json.Marshal(strings.Fields(val))
					return fmt.Errorf("--set %s=%s: %w; give the list as JSON, quoted for the shell: --set '%s=%s'", key, val, errStr, key, ex)
				}
				return fmt.Errorf("--set %s=%s: %w", key, val, errStr)
			}
		}
		obj = merged
	}
	nm, err := decodeManifest(obj)
	if err != nil {
		return err
	}
	*m = *nm
	// Fields now set leave the unknown list.
	kept := m.Unknown[:0]
	for _, p := range m.Unknown {
		if !FieldSet(m, p) {
			kept = append(kept, p)
		}
	}
	m.Unknown = kept
	return nil
}

// FieldSet reports whether the manifest field at a dotted JSON path (one of
// KnownManifestFields) holds a value. A pointer field holding a zero value,
// such as "temperature": 0, is set.
func FieldSet(m *Manifest, path string) bool { return manifestFieldSet(m, path) }

// listField reports whether the manifest field at a dotted path is a list.
func listField(path string) bool {
	idx, ok := manifestFields()[path]
	if !ok {
		return false
	}
	t := reflect.TypeOf(Manifest{})
	for _, i := range idx {
		for t.Kind() == reflect.Pointer {
			t = t.Elem()
		}
		t = t.Field(i).Type
	}
	return t.Kind() == reflect.Slice
}
