package artifact

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/benchseal/benchseal/schema"
)

// decodeStrict decodes b into v fail-closed: schema.CheckJSON, unknown fields
// rejected, and the document must round-trip — the generic form of b must
// equal the generic form of v re-encoded, so no key was matched by case
// folding, dropped, or defaulted.
func decodeStrict(b []byte, v any) error {
	if err := schema.CheckJSON(b); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fmt.Errorf("decode JSON: %w", err)
	}
	re, err := json.Marshal(v)
	if err != nil {
		return fmt.Errorf("re-encode JSON: %w", err)
	}
	a, err := genericJSON(b)
	if err != nil {
		return err
	}
	c, err := genericJSON(re)
	if err != nil {
		return err
	}
	if path, ok := sameJSON(a, c, "$"); !ok {
		return fmt.Errorf("non-canonical JSON at %s (unknown, misspelt, empty or defaulted field)", path)
	}
	return nil
}

func genericJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, fmt.Errorf("decode JSON: %w", err)
	}
	return v, nil
}

func sameJSON(a, b any, path string) (string, bool) {
	switch x := a.(type) {
	case map[string]any:
		y, ok := b.(map[string]any)
		if !ok || len(x) != len(y) {
			return path, false
		}
		for k, xv := range x {
			yv, ok := y[k]
			if !ok {
				return path + "." + k, false
			}
			if p, ok := sameJSON(xv, yv, path+"."+k); !ok {
				return p, false
			}
		}
		return "", true
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return path, false
		}
		for i := range x {
			if p, ok := sameJSON(x[i], y[i], fmt.Sprintf("%s[%d]", path, i)); !ok {
				return p, false
			}
		}
		return "", true
	case json.Number:
		y, ok := b.(json.Number)
		if !ok {
			return path, false
		}
		if x == y {
			return "", true
		}
		fx, err1 := strconv.ParseFloat(string(x), 64)
		fy, err2 := strconv.ParseFloat(string(y), 64)
		if err1 != nil || err2 != nil || fx != fy {
			return path, false
		}
		return "", true
	default:
		if a != b {
			return path, false
		}
		return "", true
	}
}
