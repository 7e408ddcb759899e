package schema

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strconv"
	"strings"
)

// numberFitProblems returns a problem for every number in the JSON
// document b that the Go value v points to cannot hold (an integer too
// large for its int field, a fraction or exponent where an integer is
// wanted, a number beyond float64), each named by its field path with
// array indexes ("points[1].repeat"), as the JSON Schema check names its
// problems. encoding/json stops at the first such number and names it
// without indexes ("points.repeat"); a document that passed the JSON
// Schema can still hold such numbers, as the schemas bound their kind
// (integer, number), not the width of the Go field. b must be valid JSON.
func numberFitProblems(b []byte, v any, file string) []Problem {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var doc any
	if dec.Decode(&doc) != nil {
		return nil
	}
	var probs []Problem
	fitNumbers(doc, reflect.TypeOf(v), "", func(path, msg string) {
		probs = append(probs, Problem{File: file, Field: path, Message: msg})
	})
	return probs
}

var jsonUnmarshaler = reflect.TypeFor[json.Unmarshaler]()

// fitNumbers walks doc beside the Go type t, calling bad for each number t
// cannot hold.
func fitNumbers(doc any, t reflect.Type, path string, bad func(path, msg string)) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(jsonUnmarshaler) {
		return // decodes itself
	}
	switch d := doc.(type) {
	case json.Number:
		if msg := numberFits(d.String(), t); msg != "" {
			bad(path, msg)
		}
	case []any:
		if t.Kind() != reflect.Slice && t.Kind() != reflect.Array {
			return
		}
		for i, e := range d {
			fitNumbers(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i), bad)
		}
	case map[string]any:
		// In key order, so the problems come in one order.
		for _, k := range slices.Sorted(maps.Keys(d)) {
			switch t.Kind() {
			case reflect.Map:
				fitNumbers(d[k], t.Elem(), joinField(path, k), bad)
			case reflect.Struct:
				if ft, ok := jsonField(t, k); ok {
					fitNumbers(d[k], ft, joinField(path, k), bad)
				}
			}
		}
	}
}

// numberFits returns why a Go value of type t cannot hold the JSON number
// s, as encoding/json decides, or "".
func numberFits(s string, t reflect.Type) string {
	var err error
	switch t.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		_, err = strconv.ParseInt(s, 10, t.Bits())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		_, err = strconv.ParseUint(s, 10, t.Bits())
	case reflect.Float32, reflect.Float64:
		_, err = strconv.ParseFloat(s, t.Bits())
	default:
		return ""
	}
	if err != nil {
		return fmt.Sprintf("cannot hold number %s (want %s)", s, t)
	}
	return ""
}

// jsonField returns the type of the field of struct t that encoding/json
// decodes the key into (its json tag or name, matched case-insensitively
// as encoding/json matches, in embedded structs too).
func jsonField(t reflect.Type, key string) (reflect.Type, bool) {
	for i := range t.NumField() {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			et := f.Type
			if et.Kind() == reflect.Pointer {
				et = et.Elem()
			}
			if et.Kind() == reflect.Struct {
				if ft, ok := jsonField(et, key); ok {
					return ft, true
				}
			}
			continue
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		if strings.EqualFold(name, key) {
			return f.Type, true
		}
	}
	return nil, false
}

func joinField(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}
