package ingest

import (
	"bytes"
	"encoding/json"
	"strings"
)

// SniffBytes is how much of a file NewSniffed reads: the fields that tell
// the formats apart are in the first object of every real file, so the
// check costs the same on a 1 GiB file as on a small one.
const SniffBytes = 64 << 10

// A Format says what one tool's files look like (Registration.Format):
// importer checks every file an import is given against every tool's
// Format, so a file of another tool gets one error naming that tool.
type Format struct {
	// Title says what the file is, for the message ("vLLM
	// benchmark_serving output").
	Title string
	// Match reports whether a file's start looks like the tool's. Each
	// rule is a fact of the tool's writers, read from its real files
	// under testdata/fixtures (testdata/README.md names their sources).
	Match func(*Sniffed) bool
}

// A Sniffed is what a Format's rule looks at: the start of a file and the
// field names of its first JSON value (of its first element when the
// value is a list), a nested field as "outer.inner".
type Sniffed struct {
	// Head is the file's first SniffBytes bytes.
	Head []byte
	// Fields maps a field name to its value when it is a string, else "".
	Fields map[string]string
}

// Has reports whether any of names is a field.
func (s *Sniffed) Has(names ...string) bool {
	for _, n := range names {
		if _, ok := s.Fields[n]; ok {
			return true
		}
	}
	return false
}

// HasPrefix reports whether a field's name starts with p.
func (s *Sniffed) HasPrefix(p string) bool {
	for k := range s.Fields {
		if strings.HasPrefix(k, p) {
			return true
		}
	}
	return false
}

// Object returns the top-level fields with their values dropped (for
// rules that look at names only).
func (s *Sniffed) Object() map[string]json.RawMessage {
	o := map[string]json.RawMessage{}
	for k := range s.Fields {
		if !strings.Contains(k, ".") {
			o[k] = nil
		}
	}
	return o
}

// NewSniffed reads the start of data: the field names of its first JSON
// value to depth two (a list's elements stand for the list).
func NewSniffed(data []byte) *Sniffed {
	head := data[:min(len(data), SniffBytes)]
	s := &Sniffed{Head: head, Fields: map[string]string{}}
	type frame struct {
		object, wantKey bool
		key             string
	}
	var stack []frame
	// name is the dotted path of the objects open, with k for the top one.
	name := func(k string) string {
		var names []string
		for _, f := range stack[:len(stack)-1] {
			if f.object {
				names = append(names, f.key)
			}
		}
		return strings.Join(append(names, k), ".")
	}
	d := json.NewDecoder(bytes.NewReader(head))
	for {
		tok, err := d.Token()
		if err != nil {
			return s // the end of the prefix, or not JSON
		}
		if t, ok := tok.(json.Delim); ok && (t == '{' || t == '[') {
			stack = append(stack, frame{object: t == '{', wantKey: true})
			continue
		}
		if len(stack) == 0 {
			return s // a number or string alone: no fields
		}
		if _, ok := tok.(json.Delim); ok {
			if stack = stack[:len(stack)-1]; len(stack) == 0 {
				return s // the first value is read
			}
		} else if top := &stack[len(stack)-1]; top.object && top.wantKey {
			top.key, top.wantKey = tok.(string), false
			if n := name(top.key); strings.Count(n, ".") < 2 {
				s.Fields[n] = ""
			}
			continue
		} else if v, ok := tok.(string); ok && top.object {
			if n := name(top.key); strings.Count(n, ".") < 2 {
				s.Fields[n] = v
			}
		}
		if top := &stack[len(stack)-1]; top.object {
			top.wantKey = true
		}
	}
}
