package ingest

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/benchseal/benchseal/schema"
)

// ErrBadInput is the root of every error about the content of an imported
// file: wrong tool, truncated, missing fields, NaN, negative durations,
// inconsistent units.
var ErrBadInput = errors.New("bad input")

// MaxFileSize is the largest input file an importer reads.
const MaxFileSize = 1 << 30

// File is one input file of an import. Name is the file's base name; it is
// used in errors and as the attachment's name.
type File struct {
	Name string
	Data []byte
	// OriginalSHA256 and Redactions are set by Redact when credentials
	// were replaced in Data.
	OriginalSHA256 string
	Redactions     []schema.Redaction
}

// Result is a parsed import: the generated manifest, the rebuilt records
// and the tool's own summary as claims (nil when the tool wrote none).
type Result struct {
	Manifest schema.Manifest
	Records  []schema.Record
	Claims   *schema.Claims
	// Facts are what was kept of the records an importer emitted instead
	// of returning them (WriteStream sets it); nil when all are in
	// Records.
	Facts *RecordFacts
	// Written is the number of records WriteStream wrote.
	Written int64
	// Attachments are files the import derives from the input files and
	// stores under attachments/ by their Name (a path such as
	// gpu-metrics/000001.prom), beside the inputs themselves; the
	// manifest pins them (as manifest.gpu_metrics does), and verify
	// re-derives them from the inputs.
	Attachments []File
	// Warnings are non-fatal findings the user must see (e.g. credentials
	// redacted from the input files).
	Warnings []string
}

// InputError reports bad input, located by file, line (0 when unknown),
// record index (-1 when the problem is not about one record) and field.
// It wraps ErrBadInput.
type InputError struct {
	File   string
	Line   int
	Record int
	Field  string
	Err    error
}

// Error formats the error as "file:line: record N: field: message".
func (e *InputError) Error() string {
	var b strings.Builder
	b.WriteString(e.File)
	if e.Line > 0 {
		fmt.Fprintf(&b, ":%d", e.Line)
	}
	if e.Record >= 0 {
		fmt.Fprintf(&b, ": record %d", e.Record)
	}
	if e.Field != "" {
		b.WriteString(": ")
		b.WriteString(e.Field)
	}
	b.WriteString(": ")
	b.WriteString(e.Err.Error())
	return b.String()
}

// Unwrap returns the cause and ErrBadInput.
func (e *InputError) Unwrap() []error { return []error{e.Err, ErrBadInput} }

// Errorf returns an InputError about the whole file (no record).
func Errorf(file string, format string, args ...any) error {
	return &InputError{File: file, Record: -1, Err: fmt.Errorf(format, args...)}
}

// RecordErrorf returns an InputError about record idx (0-based) of file,
// at line (1-based; 0 when the file is not line-oriented) and field.
func RecordErrorf(file string, line, idx int, field, format string, args ...any) error {
	return &InputError{File: file, Line: line, Record: idx, Field: field, Err: fmt.Errorf(format, args...)}
}

// DecodeJSON decodes one JSON value from data into v, keeping numbers as
// json.Number where v asks for them and rejecting trailing data. Syntax
// errors (truncation, NaN, Infinity) name the file and line.
func DecodeJSON(name string, data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return jsonError(name, data, 0, err)
	}
	// Anything but the end after the value is trailing data, a token or
	// not ("{} x" is not one value).
	if _, err := dec.Token(); err != io.EOF {
		return Errorf(name, "trailing data after the JSON value")
	}
	return nil
}

// EachJSONElement calls fn with the index and exact bytes of each element
// of data, a JSON list, in order, stopping at the first error. Elements
// are read one at a time (json.Decoder Token/More) and raw is valid only
// during the call: nothing is kept. When data is not one well-formed JSON
// list, the error is DecodeJSON's, before fn is called at all.
func EachJSONElement(name string, data []byte, fn func(i int, raw []byte) error) error {
	w, err := NewJSONWalker(name, data)
	if err != nil {
		return err
	}
	if h := Sniff(data, 1); len(h) == 0 || h[0] != '[' {
		// Not a list: DecodeJSON's type error, or null, a list of none.
		var raws []json.RawMessage
		if err := DecodeJSON(name, data, &raws); err != nil {
			return err
		}
		for i, raw := range raws {
			if err := fn(i, raw); err != nil {
				return err
			}
		}
		return nil
	}
	return w.List("", func(i int) error {
		_, raw, err := w.Raw()
		if err != nil {
			return err
		}
		return fn(i, raw)
	})
}

// skipValue decodes any JSON value into nothing.
type skipValue struct{}

// UnmarshalJSON accepts any value.
func (*skipValue) UnmarshalJSON([]byte) error { return nil }

// RawNumber returns raw as a number: the number itself, or the text of a
// string (tools write "inf" or "12.5" as strings), left for the caller to
// parse. It returns "" when raw is absent, null, or neither.
func RawNumber(raw json.RawMessage) json.Number {
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return json.Number(s)
	}
	return ""
}

// DecodeJSONLine decodes one JSON Lines line (line is 1-based).
func DecodeJSONLine(name string, line int, data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return jsonError(name, data, line, err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return &InputError{File: name, Line: line, Record: line - 1, Err: errors.New("trailing data after the JSON value")}
	}
	return nil
}

func jsonError(name string, data []byte, line int, err error) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	rec := -1
	if line > 0 {
		rec = line - 1
	}
	switch {
	case errors.As(err, &se):
		l := line
		if l == 0 {
			l = 1 + bytes.Count(data[:min(int(se.Offset), len(data))], []byte{'\n'})
		}
		msg := se.Error()
		if off := int(se.Offset) - 1; off >= 0 && off < len(data) && (data[off] == 'N' || data[off] == 'I' || data[off] == '-') {
			msg += " (NaN and Infinity are not numbers in JSON; the tool wrote an undefined value)"
		}
		return &InputError{File: name, Line: l, Record: rec, Err: fmt.Errorf("invalid JSON: %s", msg)}
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF):
		return &InputError{File: name, Line: line, Record: rec, Err: errors.New("truncated JSON")}
	case errors.As(err, &te):
		l := line
		if l == 0 {
			l = 1 + bytes.Count(data[:min(int(te.Offset), len(data))], []byte{'\n'})
		}
		return &InputError{File: name, Line: l, Record: rec, Field: te.Field, Err: fmt.Errorf("wrong type: JSON %s where %s was expected", te.Value, te.Type)}
	}
	return &InputError{File: name, Line: line, Record: rec, Err: fmt.Errorf("invalid JSON: %w", err)}
}

// SplitLines splits JSON Lines data into lines, without their newline. A
// final line without newline is kept; empty lines are returned as empty.
func SplitLines(data []byte) [][]byte {
	var out [][]byte
	for len(data) > 0 {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			out = append(out, bytes.TrimSuffix(data, []byte{'\r'}))
			break
		}
		out = append(out, bytes.TrimSuffix(data[:i], []byte{'\r'}))
		data = data[i+1:]
	}
	return out
}

// EachLine calls fn with each line of JSON Lines data, without its
// newline (and carriage return), its 1-based number and its offset in
// data, in order, stopping at the first error. A final line without
// newline is passed too. It keeps nothing: a parser reading line by line
// holds one line at a time.
func EachLine(data []byte, fn func(lineNo, off int, line []byte) error) error {
	off := 0
	for n := 1; off < len(data); n++ {
		line := data[off:]
		next := len(data)
		if i := bytes.IndexByte(line, '\n'); i >= 0 {
			line, next = line[:i], off+i+1
		}
		if err := fn(n, off, bytes.TrimSuffix(line, []byte{'\r'})); err != nil {
			return err
		}
		off = next
	}
	return nil
}

// Sniff returns up to n leading bytes of data with leading whitespace
// removed, for format detection.
func Sniff(data []byte, n int) []byte {
	d := bytes.TrimLeft(data, " \t\r\n\ufeff")
	if len(d) > n {
		d = d[:n]
	}
	return d
}
