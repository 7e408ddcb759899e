package ingest

import (
	"bytes"
	"encoding/json"
	"fmt"
)

// JSONWalker steps through one JSON document held in memory token by
// token (json.Decoder Token/More), so an importer can walk the objects and
// lists around its records and decode one record at a time, knowing where
// each lies in the file: the records are never all in memory, and a
// record can be read again later from its offset.
type JSONWalker struct {
	name string
	data []byte
	dec  *json.Decoder
	raw  json.RawMessage
}

// NewJSONWalker returns a walker at the start of data, the file called
// name. data must be one well-formed JSON value: otherwise the error is
// DecodeJSON's (file and line), before anything is walked, so a walk
// never stops half-way on a syntax error.
func NewJSONWalker(name string, data []byte) (*JSONWalker, error) {
	if !json.Valid(data) {
		// The error, located as DecodeJSON locates it; skipValue keeps
		// nothing of the values.
		var skip skipValue
		if err := DecodeJSON(name, data, &skip); err != nil {
			return nil, err
		}
		// DecodeJSON does not see trailing garbage that is not a token.
		return nil, Errorf(name, "trailing data after the JSON value")
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	return &JSONWalker{name: name, data: data, dec: dec}, nil
}

// Line returns the 1-based line of byte offset off.
func (w *JSONWalker) Line(off int) int {
	return 1 + bytes.Count(w.data[:min(max(off, 0), len(w.data))], []byte{'\n'})
}

// Object reads the next value, an object, calling fn with each of its keys
// in order; fn must read the key's value (Object, List, Raw, Decode or
// Skip). null reads as an object without keys, as encoding/json decodes
// it into a struct. field names the value in errors.
func (w *JSONWalker) Object(field string, fn func(key string) error) error {
	return w.container(field, '{', "object", func() error {
		t, err := w.dec.Token()
		if err != nil {
			return w.syntax(err)
		}
		return fn(t.(string)) // a key: the document is valid JSON
	})
}

// List reads the next value, a list, calling fn with the index of each
// element in order; fn must read the element (Object, List, Raw, Decode
// or Skip). null reads as a list without elements. field names the value
// in errors.
func (w *JSONWalker) List(field string, fn func(i int) error) error {
	i := 0
	return w.container(field, '[', "array", func() error {
		i++
		return fn(i - 1)
	})
}

// container reads an object or list opened by open, calling each for
// every key or element.
func (w *JSONWalker) container(field string, open json.Delim, what string, each func() error) error {
	t, err := w.dec.Token()
	if err != nil {
		return w.syntax(err)
	}
	if t == nil {
		return nil
	}
	if d, ok := t.(json.Delim); !ok || d != open {
		// At the token's last byte: a token never spans lines.
		return w.Errorf(field, "wrong type: JSON %s where %s was expected", kindOf(t), what)
	}
	for w.dec.More() {
		if err := each(); err != nil {
			return err
		}
	}
	if _, err := w.dec.Token(); err != nil { // the closing delimiter
		return w.syntax(err)
	}
	return nil
}

// Raw reads the next value and returns its offset in the file and its
// exact bytes, valid only until the walker is used again.
func (w *JSONWalker) Raw() (off int, raw []byte, err error) {
	w.raw = w.raw[:0]
	if err := w.dec.Decode(&w.raw); err != nil {
		return 0, nil, w.syntax(err)
	}
	end := int(w.dec.InputOffset())
	return end - len(w.raw), w.raw, nil
}

// Skip reads the next value and drops it.
func (w *JSONWalker) Skip() error {
	_, _, err := w.Raw()
	return err
}

// Decode reads the next value into v as DecodeJSON does, returning its
// offset and length in the file. An error names the file, the line in the
// file, record rec (-1: none) and the field, field joined with the path
// of the wrong value inside it.
func (w *JSONWalker) Decode(rec int, field string, v any) (off, n int, err error) {
	off, raw, err := w.Raw()
	if err != nil {
		return 0, 0, err
	}
	return off, len(raw), DecodeJSONAt(w.name, w.data, off, raw, rec, field, v)
}

// DecodeKey reads the next value, that of key in the object being
// walked, into v as if the object were {key: value}: v's own key
// matching applies (encoding/json's, case-insensitive), and the keys of
// an object read one by one into one v merge as a whole-object decode
// merges them. Errors are located as Decode locates them; field names the
// object.
func (w *JSONWalker) DecodeKey(key, field string, v any) error {
	off, raw, err := w.Raw()
	if err != nil {
		return err
	}
	k, _ := json.Marshal(key)
	obj := make([]byte, 0, len(k)+len(raw)+3)
	obj = append(append(append(append(append(obj, '{'), k...), ':'), raw...), '}')
	// The key adds no line (json.Marshal escapes newlines), so lines in
	// obj are lines from off.
	return DecodeJSONAt(w.name, w.data, off, obj, -1, field, v)
}

// NextIsNull reports whether the next value is null, without reading it.
func (w *JSONWalker) NextIsNull() bool {
	rest := w.data[min(int(w.dec.InputOffset()), len(w.data)):]
	rest = bytes.TrimLeft(rest, " \t\r\n:,")
	return bytes.HasPrefix(rest, []byte("null"))
}

// Errorf returns an InputError about field at the walker's position (the
// line of the last token read).
func (w *JSONWalker) Errorf(field, format string, args ...any) error {
	return &InputError{File: w.name, Line: w.Line(int(w.dec.InputOffset()) - 1), Record: -1, Field: field, Err: fmt.Errorf(format, args...)}
}

// DecodeJSONAt decodes raw, the JSON value at offset off of data (the file
// called name), into v as DecodeJSON does. An error names the file, the
// line in the file, record rec (-1: none) and the field, field joined
// with the path of the wrong value inside it.
func DecodeJSONAt(name string, data []byte, off int, raw []byte, rec int, field string, v any) error {
	err := DecodeJSON(name, raw, v)
	if err == nil {
		return nil
	}
	e, ok := err.(*InputError)
	if !ok {
		return err
	}
	e2 := *e
	// The line in raw (or, when the decoder gave none, raw's first)
	// moved to the file.
	e2.Line = max(e2.Line, 1) + bytes.Count(data[:min(max(off, 0), len(data))], []byte{'\n'})
	e2.Record = rec
	switch {
	case field == "":
	case e2.Field == "":
		e2.Field = field
	default:
		e2.Field = field + "." + e2.Field
	}
	return &e2
}

// syntax turns a decoder error into an InputError; it cannot happen on a
// document json.Valid accepted, short of a caller reading a value twice.
func (w *JSONWalker) syntax(err error) error {
	return jsonError(w.name, w.data, 0, err)
}

// kindOf names the JSON kind of token t as encoding/json's type errors do.
func kindOf(t json.Token) string {
	switch v := t.(type) {
	case json.Delim:
		if v == '{' {
			return "object"
		}
		return "array"
	case string:
		return "string"
	case json.Number, float64:
		return "number"
	case bool:
		return "bool"
	}
	return "value"
}
