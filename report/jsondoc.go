package report

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"

	"github.com/benchseal/benchseal/replay"
)

// The JSON outputs (replay, compare, decide) are documents of typed
// structs, in key order, marshalled by encoding/json (writeJSON), which
// also checks every value a MarshalJSON below returns. Four kinds of
// value keep the bytes the outputs have always had, where encoding/json
// writes its own: text, num, object and inline. BenchmarkJSON measures
// this at about 1.5 times the time of the hand-rolled writer it replaced,
// a few ms on a run of 10 points.

// text is a JSON string as quote writes it: encoding/json writes "\n" for
// a newline where quote writes "\u000a", and escapes U+2028, U+2029 and
// invalid UTF-8 where quote writes them as they are (or as U+FFFD).
type text string

// MarshalJSON writes t through quote.
func (t text) MarshalJSON() ([]byte, error) { return []byte(quote(string(t))), nil }

// texts is ss as a JSON array: [] when ss is empty, never null.
func texts(ss []string) []text {
	out := make([]text, len(ss))
	for i, s := range ss {
		out[i] = text(s)
	}
	return out
}

// num is a JSON number already written (Number, shortestFloat, strconv),
// or "null".
type num string

// MarshalJSON writes n as it is; encoding/json refuses it unless it is a
// JSON value.
func (n num) MarshalJSON() ([]byte, error) { return []byte(n), nil }

// nums is vs through Number, [] when vs is empty.
func nums(vs []replay.Value) []num {
	out := make([]num, len(vs))
	for i, v := range vs {
		out[i] = num(Number(v))
	}
	return out
}

func intNum(v int64) num { return num(strconv.FormatInt(v, 10)) }

func intOrNull(p *int64) num {
	if p == nil {
		return "null"
	}
	return intNum(*p)
}

// member is one key and value of an object.
type member struct {
	key   string
	value any
}

// object is a JSON object whose keys are known only when it is written
// (the metrics a definition computes, a map's sorted keys), in order.
type object []member

// MarshalJSON writes the members in order, each key as strconv.Quote
// writes it (as the replay JSON always has) and each value through
// encoding/json.
func (o object) MarshalJSON() ([]byte, error) {
	b := make([]byte, 1, 32*len(o)+2)
	b[0] = '{'
	for i, m := range o {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendQuote(b, m.key)
		b = append(b, ':')
		var err error
		if b, err = appendJSON(b, m.value); err != nil {
			return nil, err
		}
	}
	return append(b, '}'), nil
}

// sortedObject is m as an object with its keys sorted.
func sortedObject(m map[string]string) object {
	o := make(object, 0, len(m))
	for _, k := range slices.Sorted(maps.Keys(m)) {
		o = append(o, member{k, text(m[k])})
	}
	return o
}

// appendJSON appends v as compact JSON, with <, > and & as they are.
func appendJSON(b []byte, v any) ([]byte, error) {
	switch v := v.(type) {
	case num:
		return append(b, v...), nil
	case text:
		return append(b, quote(string(v))...), nil
	case object:
		o, err := v.MarshalJSON()
		return append(b, o...), err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return append(b, bytes.TrimSuffix(buf.Bytes(), []byte{'\n'})...), nil
}

// inline is a JSON value written on one line inside the indented
// document: the server and energy columns (compact, as json.Marshal
// writes them) and a timeline's [low, high]. encoding/json indents the
// whole document, so a value holds a placeholder string, an escaped "i"
// then its index in splices, which writeJSON replaces with the value's
// text; no encoder escapes an "i", so no other string reads the same.
type inline int

// placeholder opens every inline's placeholder string.
const placeholder = `"\u0069`

// MarshalJSON writes i's placeholder.
func (i inline) MarshalJSON() ([]byte, error) {
	return []byte(placeholder + strconv.Itoa(int(i)) + `"`), nil
}

// splices holds a document's inline values, by index.
type splices []string

// add keeps raw (checked to be one JSON value) and returns its inline.
func (s *splices) add(raw string) inline {
	*s = append(*s, raw)
	return inline(len(*s) - 1)
}

// writeJSON writes doc indented by two spaces, the inline values of sp
// spliced in, and a newline, in one Write.
func writeJSON(out io.Writer, doc any, sp splices) error {
	enc := json.NewEncoder(splicer{out, sp})
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(doc); err != nil {
		return fmt.Errorf("report: write JSON: %w", err)
	}
	return nil
}

// splicer writes an encoded document to out with its inline values
// spliced in (the Encoder writes the whole document in one Write).
type splicer struct {
	out io.Writer
	sp  splices
}

// Write replaces each placeholder of p by its value and writes the
// result to the splicer's writer.
func (s splicer) Write(p []byte) (int, error) {
	if len(s.sp) == 0 {
		return s.out.Write(p)
	}
	size := len(p)
	for _, v := range s.sp {
		size += len(v)
	}
	o := make([]byte, 0, size)
	rest := p
	for {
		i := bytes.Index(rest, []byte(placeholder))
		if i < 0 {
			break
		}
		o = append(o, rest[:i]...)
		rest = rest[i+len(placeholder):]
		end := bytes.IndexByte(rest, '"')
		n, err := strconv.Atoi(string(rest[:max(end, 0)]))
		if end < 0 || err != nil || n < 0 || n >= len(s.sp) || !json.Valid([]byte(s.sp[n])) {
			return 0, errors.New("an inline value is not JSON (a benchseal bug; the other output formats are unaffected)")
		}
		o = append(o, s.sp[n]...)
		rest = rest[end+1:]
	}
	if _, err := s.out.Write(append(o, rest...)); err != nil {
		return 0, err
	}
	return len(p), nil
}
