package artifact

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// CheckJSON reports an error when b is not exactly one JSON value, nests
// deeper than MaxJSONDepth, or has an object with two keys equal under
// case folding (encoding/json matches field names case-insensitively, so
// such keys are a parser differential).
func CheckJSON(b []byte) error {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	if err := walkJSON(dec, 0); err != nil {
		return err
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("trailing data after JSON value")
	}
	return nil
}

func walkJSON(dec *json.Decoder, depth int) error {
	if depth > MaxJSONDepth {
		return fmt.Errorf("JSON nested deeper than %d", MaxJSONDepth)
	}
	tok, err := dec.Token()
	if err != nil {
		return fmt.Errorf("parse JSON: %w", err)
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	switch d {
	case '{':
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return fmt.Errorf("parse JSON: %w", err)
			}
			k, _ := kt.(string)
			fk := strings.ToLower(k)
			if seen[fk] {
				return fmt.Errorf("duplicate JSON key %q", k)
			}
			seen[fk] = true
			if err := walkJSON(dec, depth+1); err != nil {
				return err
			}
		}
	case '[':
		for dec.More() {
			if err := walkJSON(dec, depth+1); err != nil {
				return err
			}
		}
	}
	if _, err := dec.Token(); err != nil { // closing delimiter
		return fmt.Errorf("parse JSON: %w", err)
	}
	return nil
}

// decodeStrict decodes b into v fail-closed: CheckJSON, unknown fields
// rejected, and the document must round-trip — the generic form of b must
// equal the generic form of v re-encoded, so no key was matched by case
// folding, dropped, or defaulted.
func decodeStrict(b []byte, v any) error {
	if err := CheckJSON(b); err != nil {
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
