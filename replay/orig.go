package replay

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// orig is a decoded record.orig object: the fields a peer tool wrote for
// one request, under the tool's own names and units, which a peer
// definition reads to compute what that tool computed.
type orig map[string]any

func parseOrig(raw json.RawMessage) orig {
	if len(raw) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var m map[string]any
	if dec.Decode(&m) != nil {
		return nil
	}
	return m
}

// get walks a dotted path.
func (o orig) get(path string) (any, bool) {
	var cur any = map[string]any(o)
	for _, k := range strings.Split(path, ".") {
		m, ok := cur.(map[string]any)
		if !ok {
			return nil, false
		}
		cur, ok = m[k]
		if !ok {
			return nil, false
		}
	}
	return cur, true
}

func toFloat(v any) (float64, bool) {
	n, ok := v.(json.Number)
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(string(n), 64)
	return f, err == nil
}

// num returns the first of paths holding a number.
func (o orig) num(paths ...string) (float64, bool) {
	if o == nil {
		return 0, false
	}
	for _, p := range paths {
		if v, ok := o.get(p); ok {
			if f, ok := toFloat(v); ok {
				return f, true
			}
		}
	}
	return 0, false
}

// numOr returns the first of paths holding a number, or def when none
// does: the tool's own value where its file kept one, the record's
// otherwise.
func (o orig) numOr(def float64, paths ...string) float64 {
	if v, ok := o.num(paths...); ok {
		return v
	}
	return def
}

// secondsOr returns the first of paths holding a number of seconds, in
// nanoseconds, or fallback (already in nanoseconds) when none does; ok
// is false when neither is there.
func (o orig) secondsOr(fallback float64, fallbackOK bool, paths ...string) (ns float64, ok bool) {
	if v, ok := o.num(paths...); ok {
		return v * 1e9, true
	}
	return fallback, fallbackOK
}

// integer returns the first of paths holding an integer (epoch ns
// timestamps lose precision as float64).
func (o orig) integer(paths ...string) (int64, bool) {
	if o == nil {
		return 0, false
	}
	for _, p := range paths {
		if v, ok := o.get(p); ok {
			if n, ok := v.(json.Number); ok {
				if i, err := n.Int64(); err == nil {
					return i, true
				}
			}
		}
	}
	return 0, false
}

// list returns the first of paths holding a list of numbers.
func (o orig) list(paths ...string) ([]float64, bool) {
	if o == nil {
		return nil, false
	}
	for _, p := range paths {
		v, ok := o.get(p)
		if !ok {
			continue
		}
		arr, ok := v.([]any)
		if !ok {
			continue
		}
		out := make([]float64, 0, len(arr))
		for _, x := range arr {
			f, ok := toFloat(x)
			if !ok {
				return nil, false
			}
			out = append(out, f)
		}
		return out, true
	}
	return nil, false
}

// present reports whether a path exists with a non-null value.
func (o orig) present(path string) bool {
	v, ok := o.get(path)
	return ok && v != nil
}
