package ingest

import (
	"errors"
	"strings"
	"testing"
)

// A value followed by bytes that are not a JSON token is not one value:
// DecodeJSON once accepted "{} x" because the trailing check only looked
// for a well-formed token.
func TestDecodeJSONRejectsTrailingGarbage(t *testing.T) {
	for _, in := range []string{`{} x`, `{} }`, `[1] [2]`, `{} "a"`} {
		var v any
		err := DecodeJSON("f.json", []byte(in), &v)
		if err == nil || !errors.Is(err, ErrBadInput) || !strings.Contains(err.Error(), "trailing data") {
			t.Errorf("DecodeJSON(%q) = %v, want a trailing data error", in, err)
		}
	}
	var v any
	if err := DecodeJSON("f.json", []byte(" {}\n\t"), &v); err != nil {
		t.Errorf("whitespace after the value: %v", err)
	}
}

// The walker reports a wrong container by file, line and field, a wrong
// value inside a decoded element by the line in the file, the record and
// the element's field joined with the path inside it, and returns each
// element's offset so it can be read again.
func TestJSONWalkerLocatesValues(t *testing.T) {
	doc := "{\n \"a\": [\n  {\"x\": 1},\n  {\"x\": \"no\"}\n ],\n \"b\": 5\n}"
	w, err := NewJSONWalker("f.json", []byte(doc))
	if err != nil {
		t.Fatal(err)
	}
	var offs []int
	err = w.Object("", func(key string) error {
		switch key {
		case "a":
			return w.List("a", func(i int) error {
				var v struct {
					X int `json:"x"`
				}
				off, _, err := w.Decode(i, "a["+string(rune('0'+i))+"]", &v)
				offs = append(offs, off)
				return err
			})
		default:
			return w.List(key, func(int) error { return w.Skip() })
		}
	})
	want := "f.json:4: record 1: a[1].x: wrong type: JSON string where int was expected"
	if err == nil || err.Error() != want {
		t.Fatalf("err = %v, want %s", err, want)
	}
	if len(offs) != 2 || doc[offs[0]:offs[0]+8] != `{"x": 1}` || doc[offs[1]] != '{' {
		t.Errorf("offsets %v do not point at the elements", offs)
	}

	w, _ = NewJSONWalker("f.json", []byte("{\"a\": [],\n \"b\": 5}"))
	err = w.Object("", func(key string) error { return w.List(key, func(int) error { return w.Skip() }) })
	if err == nil || err.Error() != "f.json:2: b: wrong type: JSON number where array was expected" {
		t.Errorf("err = %v", err)
	}
}

// null reads as an empty object or list, as encoding/json decodes it.
func TestJSONWalkerNullIsEmpty(t *testing.T) {
	w, err := NewJSONWalker("f.json", []byte(`{"a": null, "b": null}`))
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	err = w.Object("", func(key string) error {
		if key == "a" {
			return w.List("a", func(int) error { n++; return w.Skip() })
		}
		return w.Object("b", func(string) error { n++; return w.Skip() })
	})
	if err != nil || n != 0 {
		t.Errorf("err = %v, %d values", err, n)
	}
}

// A document that is not valid JSON is rejected before any walking, with
// DecodeJSON's error, however deep its nesting.
func TestJSONWalkerRejectsInvalidDocuments(t *testing.T) {
	for _, in := range []string{`{"a": [1, }`, `{"a": NaN}`, strings.Repeat("[", 100000), `[] x`, ``} {
		if _, err := NewJSONWalker("f.json", []byte(in)); err == nil || !errors.Is(err, ErrBadInput) || !strings.HasPrefix(err.Error(), "f.json") {
			t.Errorf("NewJSONWalker(%.20q) = %v", in, err)
		}
	}
}

// Three points with one name get x, x#2, x#3: the names were once counted
// under the suffixed name, so the third was x#2 again and the import
// failed as declaring a point twice.
func TestPointNamesAreUnique(t *testing.T) {
	var p PointNames
	got := []string{p.Unique("x#2"), p.Unique("x"), p.Unique("x"), p.Unique("x"), p.Unique("y")}
	want := []string{"x#2", "x", "x#3", "x#4", "y"}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("names %v, want %v", got, want)
		}
	}
}
