package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// Size limits of the JSON documents of a run.
const (
	MaxManifestSize = 16 << 20
	MaxClaimsSize   = 64 << 20
)

// DecodeManifest decodes a manifest strictly; name is used in errors. A
// syntax error, invalid UTF-8 or a duplicate key is a *DecodeError naming
// the line and field; a document that breaks the published JSON Schema is
// a *ValidationError listing every violation by field path. It does not run
// the semantic checks (see ValidateManifest).
func DecodeManifest(r io.Reader, name string) (*Manifest, error) {
	var m Manifest
	if err := decodeDocument(r, MaxManifestSize, name, SchemaManifest, &m); err != nil {
		return nil, err
	}
	return &m, nil
}

// DecodeClaims decodes claims strictly, as DecodeManifest does; name is
// used in errors.
func DecodeClaims(r io.Reader, name string) (*Claims, error) {
	var c Claims
	if err := decodeDocument(r, MaxClaimsSize, name, SchemaClaims, &c); err != nil {
		return nil, err
	}
	return &c, nil
}

func decodeDocument(r io.Reader, limit int64, name, schemaName string, v any) error {
	b, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return fmt.Errorf("read %s: %w", name, err)
	}
	if int64(len(b)) > limit {
		return &DecodeError{File: name, Msg: fmt.Sprintf("larger than %d bytes", limit)}
	}
	if err := checkDocument(b); err != nil {
		err.File = name
		return err
	}
	probs, err := validateJSONSchema(schemaName, b, name)
	if err != nil {
		return err
	}
	if len(probs) > 0 {
		return &ValidationError{Problems: probs}
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		de := &DecodeError{File: name, Msg: strings.TrimPrefix(err.Error(), "json: ")}
		var te *json.UnmarshalTypeError
		if errors.As(err, &te) {
			de.Field = te.Field
			de.Msg = fmt.Sprintf("cannot hold %s (want %s)", te.Value, te.Type)
		}
		return de
	}
	return nil
}

// checkDocument checks that b is exactly one JSON value in valid UTF-8
// with no duplicate object keys, reporting the line and field path of the
// first violation.
func checkDocument(b []byte) *DecodeError {
	d := &recordDecoder{b: b, doc: true}
	var path []string
	// next ends a member or element: it drops the last path token and
	// consumes ',' (more follows) or end (the container is done).
	next := func(end byte) (more bool, err error) {
		path = path[:len(path)-1]
		d.field = docPath(path)
		d.ws()
		if d.i < len(d.b) {
			switch d.b[d.i] {
			case ',':
				d.i++
				return true, nil
			case end:
				d.i++
				return false, nil
			}
		}
		return false, d.syntax("',' or '" + string(rune(end)) + "'")
	}
	var walk func(depth int) error
	walk = func(depth int) error {
		if depth > maxJSONDepth {
			return d.fail("JSON nested too deeply")
		}
		d.field = docPath(path)
		if d.i >= len(d.b) {
			return d.syntax("a JSON value")
		}
		switch d.b[d.i] {
		case '{':
			d.i++
			seen := map[string]bool{}
			d.ws()
			if d.i < len(d.b) && d.b[d.i] == '}' {
				d.i++
				return nil
			}
			for {
				d.ws()
				if d.i >= len(d.b) || d.b[d.i] != '"' {
					return d.syntax("a field name")
				}
				keyPos := d.i
				k, err := d.stringBytes()
				if err != nil {
					return err
				}
				key := string(k)
				path = append(path, key)
				if seen[key] {
					d.i = keyPos
					d.field = docPath(path)
					return d.fail("duplicate key (at %s)", d.pos())
				}
				seen[key] = true
				d.ws()
				if d.i >= len(d.b) || d.b[d.i] != ':' {
					return d.syntax("':'")
				}
				d.i++
				d.ws()
				if err := walk(depth + 1); err != nil {
					return err
				}
				if more, err := next('}'); !more {
					return err
				}
			}
		case '[':
			d.i++
			d.ws()
			if d.i < len(d.b) && d.b[d.i] == ']' {
				d.i++
				return nil
			}
			for n := 0; ; n++ {
				d.ws()
				path = append(path, strconv.Itoa(n))
				if err := walk(depth + 1); err != nil {
					return err
				}
				if more, err := next(']'); !more {
					return err
				}
			}
		}
		return d.skip(depth)
	}
	d.ws()
	if d.i >= len(d.b) {
		return &DecodeError{Msg: "empty document"}
	}
	if err := walk(0); err != nil {
		var de *DecodeError
		errors.As(err, &de)
		return de
	}
	d.ws()
	if d.i != len(d.b) {
		d.field = ""
		return d.fail("invalid JSON at %s: trailing data after the document", d.pos()).(*DecodeError)
	}
	return nil
}

func docPath(tokens []string) string { return jsonPath(tokens) }
