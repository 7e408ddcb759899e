package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// DecodeManifest decodes a manifest strictly; name is used in errors. A
// syntax error, invalid UTF-8 or a duplicate key is a *DecodeError naming
// the line and field; a document that breaks the published JSON Schema is
// a *ValidationError listing every violation by field path. It does not run
// the semantic checks (see ValidateManifest).
func DecodeManifest(r io.Reader, name string) (*Manifest, error) {
	var m Manifest
	if err := decodeDocument(r, MaxManifestFileSize, name, SchemaManifest, &m); err != nil {
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
	if err := checkJSONDocument(b, true); err != nil {
		err.File = name
		return err
	}
	probs, err := validateJSONSchema(schemaName, b, name)
	if err != nil {
		return err
	}
	if len(probs) == 0 {
		probs = numberFitProblems(b, v, name)
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

// CheckJSON is benchseal's one strict-JSON rule, applied to every JSON
// document it reads, in run directories and bundles alike: b must be
// exactly one JSON value, in valid UTF-8, nested at most maxJSONDepth deep,
// with no object holding two keys equal under case folding (encoding/json
// and other decoders match names case-insensitively, so such keys are a
// parser differential, in open maps as much as in known fields). The error
// is a *DecodeError naming the line and field path of the first violation.
func CheckJSON(b []byte) error {
	if err := checkDocument(b); err != nil {
		return err
	}
	return nil
}

// appendFoldedKey appends the case-folded form of an object key to out:
// keys that encoding/json would match to the same field fold to the same
// bytes (ASCII letters upper-cased, every other rune mapped to the smallest
// rune of its Unicode simple-folding orbit, as encoding/json does).
func appendFoldedKey(out, key []byte) []byte {
	for i := 0; i < len(key); {
		c := key[i]
		if c < utf8.RuneSelf {
			if 'a' <= c && c <= 'z' {
				c -= 'a' - 'A'
			}
			out = append(out, c)
			i++
			continue
		}
		r, n := utf8.DecodeRune(key[i:])
		for {
			r2 := unicode.SimpleFold(r)
			if r2 <= r {
				r = r2
				break
			}
			r = r2
		}
		out = utf8.AppendRune(out, r)
		i += n
	}
	return out
}

// checkDocument is CheckJSON returning the concrete error.
func checkDocument(b []byte) *DecodeError { return checkJSONDocument(b, false) }

// checkJSONDocument is checkDocument; with text, every string (object keys
// and values) must also pass CheckText: a document a person reads on a
// terminal (manifest, claims, plan) holds no control characters.
func checkJSONDocument(b []byte, text bool) *DecodeError {
	d := &recordDecoder{b: b, doc: true}
	w := &docWalker{d: d, text: text}
	d.ws()
	if d.i >= len(d.b) {
		return &DecodeError{Msg: "empty document"}
	}
	if err := w.walk(0); err != nil {
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

// docWalker walks one JSON document for checkJSONDocument, keeping the
// path to the value it is at (for the problems it names).
type docWalker struct {
	d    *recordDecoder
	path []string
	// text: keys and strings must be publishable text (CheckText).
	text bool
}

// next ends a member or element: it drops the last path token and
// consumes ',' (more follows) or end (the container is done).
func (w *docWalker) next(end byte) (more bool, err error) {
	d := w.d
	w.path = w.path[:len(w.path)-1]
	d.field = docPath(w.path)
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

// walk checks the value at the decoder's position.
func (w *docWalker) walk(depth int) error {
	d := w.d
	if depth > MaxJSONDepth {
		return d.fail("JSON nested deeper than %d", MaxJSONDepth)
	}
	d.field = docPath(w.path)
	if d.i >= len(d.b) {
		return d.syntax("a JSON value")
	}
	switch d.b[d.i] {
	case '{':
		return w.object(depth)
	case '[':
		return w.array(depth)
	case '"':
		if w.text {
			return w.str()
		}
	}
	return d.skip(depth)
}

// object checks an object: its keys unique (also when case-folded) and,
// with text, publishable.
func (w *docWalker) object(depth int) error {
	d := w.d
	d.i++
	seen := map[string]string{}
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
		w.path = append(w.path, key)
		if w.text {
			if err := CheckText(key); err != nil {
				d.i = keyPos
				d.field = docPath(w.path)
				return d.fail("key: %v", err)
			}
		}
		folded := string(appendFoldedKey(nil, k))
		if prev, dup := seen[folded]; dup {
			d.i = keyPos
			d.field = docPath(w.path)
			if prev != key {
				return d.fail("duplicate key: %q and %q differ only in case (at %s)", prev, key, d.pos())
			}
			return d.fail("duplicate key (at %s)", d.pos())
		}
		seen[folded] = key
		d.ws()
		if d.i >= len(d.b) || d.b[d.i] != ':' {
			return d.syntax("':'")
		}
		d.i++
		d.ws()
		if err := w.walk(depth + 1); err != nil {
			return err
		}
		if more, err := w.next('}'); !more {
			return err
		}
	}
}

// array checks an array's elements.
func (w *docWalker) array(depth int) error {
	d := w.d
	d.i++
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == ']' {
		d.i++
		return nil
	}
	for n := 0; ; n++ {
		d.ws()
		w.path = append(w.path, strconv.Itoa(n))
		if err := w.walk(depth + 1); err != nil {
			return err
		}
		if more, err := w.next(']'); !more {
			return err
		}
	}
}

// str checks a string is publishable text (a raw reply's line breaks
// allowed).
func (w *docWalker) str() error {
	d := w.d
	start := d.i
	v, err := d.stringBytes()
	if err != nil {
		return err
	}
	if err := CheckText(string(v)); err != nil && !(rawReplyField(w.path) && onlyLineBreaks(v)) {
		d.i = start
		return d.fail("%v", err)
	}
	return nil
}

func docPath(tokens []string) string { return jsonPath(tokens) }

// rawReplyField reports whether path is a value of the manifest's
// engine.server, a server's reply kept as it came (capture stores
// /v1/models and /version answers there): the one place where a string may
// hold newlines, tabs and carriage returns, which a reply's JSON may end
// with. No text output prints it.
func rawReplyField(path []string) bool {
	return len(path) == 3 && path[0] == "engine" && path[1] == "server"
}

// onlyLineBreaks reports whether every control character of v is a
// newline, tab or carriage return.
func onlyLineBreaks(v []byte) bool {
	for _, r := range string(v) {
		if IsControlRune(r) && r != '\n' && r != '\t' && r != '\r' {
			return false
		}
	}
	return true
}
