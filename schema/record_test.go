package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"
	"unicode/utf8"
)

func ptr[T any](v T) *T { return &v }

// sampleRecord returns a realistic record with n chunks.
func sampleRecord(n int) *Record {
	rec := &Record{
		ID: "c16-r1-000123", Point: "c16", Repeat: 1, Phase: PhaseMeasure,
		Item: ptr(int64(42)), ScheduledNS: ptr(int64(12_000_000_000)),
		SentNS: 12_000_150_000, InputTokens: 512, Status: StatusOK,
	}
	t := int64(180_000_000)
	for i := range n {
		rec.ChunksNS = append(rec.ChunksNS, t)
		k := int64(1 + i%3)
		rec.ChunkTokens = append(rec.ChunkTokens, k)
		rec.OutputTokens += k
		t += 21_000_000 + int64(i%7)*1_000_000
	}
	rec.EndNS = rec.SentNS + t
	return rec
}

// emptyNotNil is v, or an empty slice for nil: AppendRecord writes an
// empty chunks_ns as [] where encoding/json writes a nil slice as null.
func emptyNotNil(v []int64) []int64 {
	if v == nil {
		return []int64{}
	}
	return v
}

// TestEmptyChunksHaveOneEncoding: a record without chunks is encoded the
// same whether its chunks_ns is nil, empty, or was decoded from [] or
// null, first in a stream or later, so a stored record re-encodes to the
// bytes it was written as.
func TestEmptyChunksHaveOneEncoding(t *testing.T) {
	const line = `{"id":"a","point":"p","repeat":0,"phase":"measure","sent_ns":0,"end_ns":1,"chunks_ns":[],"input_tokens":0,"output_tokens":0,"status":"error","error":"e"}`
	nullLine := strings.Replace(line, "[]", "null", 1)
	var encs []string
	for _, chunks := range [][]int64{nil, {}} {
		rec := &Record{ID: "a", Point: "p", Phase: PhaseMeasure, EndNS: 1, ChunksNS: chunks, Status: StatusError, Error: "e"}
		b, err := AppendRecord(nil, rec)
		if err != nil {
			t.Fatal(err)
		}
		encs = append(encs, string(b))
	}
	// Decoded first (fresh scratch buffers) and after a record with chunks.
	for _, l := range []string{line, nullLine} {
		rec, err := DecodeRecord([]byte(l))
		if err != nil {
			t.Fatal(err)
		}
		b, _ := AppendRecord(nil, rec)
		encs = append(encs, string(b))
	}
	it := NewRecordReader(strings.NewReader(line+"\n"+goodLine+"\n"+line+"\n"), RecordsFile)
	for {
		rec, err := it.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if rec.Status == StatusError {
			b, _ := AppendRecord(nil, rec)
			encs = append(encs, string(b))
		}
	}
	for i, e := range encs {
		if e != line {
			t.Errorf("encoding %d = %s, want %s", i, e, line)
		}
	}
}

func TestDecodeRecordRoundTrip(t *testing.T) {
	recs := []*Record{
		sampleRecord(0),
		sampleRecord(1),
		sampleRecord(40),
		{ID: "x", Point: "p", Phase: PhaseWarmup, ChunksNS: []int64{}, Status: StatusRejected, Error: "429 <too many> & \"more\"\n\u2028é\x01"},
		{ID: "s", Point: "p", Phase: PhaseMeasure, ChunksNS: []int64{5}, InputTokens: 156, OutputTokens: 1, Status: StatusOK, Retries: 1,
			Server: &ServerReport{CachedTokens: ptr(int64(155)), PromptN: ptr(int64(1)), CacheN: ptr(int64(155)), PredictedN: ptr(int64(1)), PromptNS: ptr(int64(1_234_567)), PredictedNS: ptr(int64(0))}},
		{ID: "t", Point: "p", Phase: PhaseMeasure, ChunksNS: []int64{5}, OutputTokens: 1, Status: StatusOK, Server: &ServerReport{CacheN: ptr(int64(0))}},
		{ID: "u", Point: "p", Phase: PhaseMeasure, ChunksNS: []int64{5}, OutputTokens: 1, Status: StatusOK, Server: &ServerReport{}},
		{ID: "o", Point: "p", Phase: PhaseMeasure, ChunksNS: []int64{5}, OutputTokens: 1, Status: StatusOK,
			Orig: json.RawMessage(` { "ttft" : 0.5, "s":"<a&b>\u2029", "n":[1, {"x":null}] } `)},
	}
	for _, rec := range recs {
		// AppendRecord writes control characters as EscapeText's escapes.
		esc := *rec
		for _, f := range []*string{&esc.ID, &esc.Point, &esc.Phase, &esc.Status, &esc.Error} {
			*f = EscapeText(*f, false)
		}
		esc.ChunksNS = emptyNotNil(esc.ChunksNS)
		want, err := json.Marshal(&esc)
		if err != nil {
			t.Fatal(err)
		}
		got, err := AppendRecord(nil, rec)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want) {
			t.Fatalf("AppendRecord differs from encoding/json:\n got %s\nwant %s", got, want)
		}
		back, err := DecodeRecord(got)
		if err != nil {
			t.Fatalf("DecodeRecord(%s): %v", got, err)
		}
		var ref Record
		if err := json.Unmarshal(got, &ref); err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(back, &ref) {
			t.Fatalf("DecodeRecord = %+v, encoding/json = %+v", back, &ref)
		}
	}
}

func TestAppendRecordRejectsInvalidOrig(t *testing.T) {
	rec := sampleRecord(1)
	rec.Orig = json.RawMessage(`{"a":`)
	if _, err := AppendRecord(nil, rec); err == nil {
		t.Fatal("AppendRecord accepted invalid orig")
	}
}

const goodLine = `{"id":"a","point":"p","repeat":0,"phase":"measure","sent_ns":1,"end_ns":9,"chunks_ns":[2,3],"input_tokens":4,"output_tokens":2,"status":"ok"}`

func TestDecodeRecordErrorsNameTheField(t *testing.T) {
	repl := func(old, new string) string { return strings.Replace(goodLine, old, new, 1) }
	tests := []struct {
		name, line, want string
	}{
		{"string for int", repl(`"sent_ns":1`, `"sent_ns":"1"`), `field "sent_ns": must be an integer`},
		{"float for int", repl(`"sent_ns":1`, `"sent_ns":1.5`), `field "sent_ns": must be an integer, got 1.5`},
		{"exponent for int", repl(`"end_ns":9`, `"end_ns":9e3`), `field "end_ns": must be an integer, got 9e3`},
		{"out of range", repl(`"end_ns":9`, `"end_ns":9223372036854775808`), `field "end_ns": integer 9223372036854775808 out of range (int64)`},
		{"NaN", repl(`"end_ns":9`, `"end_ns":NaN`), `field "end_ns": must be an integer`},
		{"Infinity", repl(`"end_ns":9`, `"end_ns":-Infinity`), `field "end_ns": must be an integer`},
		{"duplicate key", repl(`"repeat":0`, `"repeat":0,"repeat":1`), `field "repeat": duplicate key`},
		{"unknown field", repl(`"repeat":0`, `"repeat":0,"extra":1`), `field "extra": unknown field`},
		{"case differs", repl(`"repeat":0`, `"Repeat":0`), `field "Repeat": unknown field`},
		{"missing field", repl(`"repeat":0,`, ``), `field "repeat": missing required field`},
		{"chunk not int", repl(`[2,3]`, `[2,"x"]`), `field "chunks_ns": element 1: must be an integer`},
		{"chunks not array", repl(`[2,3]`, `{}`), `field "chunks_ns": must be an array of integers`},
		{"null string", repl(`"id":"a"`, `"id":null`), `field "id": must be a string`},
		{"orig not object", repl(`"status":"ok"`, `"status":"ok","orig":[1]`), `field "orig": must be a JSON object`},
		{"duplicate key in orig", repl(`"status":"ok"`, `"status":"ok","orig":{"ttft":1,"ttft":2}`), `field "orig": invalid JSON at column`},
		{"escaped duplicate key in orig", repl(`"status":"ok"`, `"status":"ok","orig":{"m":[{"ttft":1,"tt\u0066t":2}]}`), `duplicate key "ttft"`},
		{"server not object", repl(`"status":"ok"`, `"status":"ok","server":[1]`), `field "server": must be a JSON object`},
		{"server unknown key", repl(`"status":"ok"`, `"status":"ok","server":{"cache_n":1,"slot":2}`), `field "server.slot": unknown field`},
		{"server case differs", repl(`"status":"ok"`, `"status":"ok","server":{"Cache_N":1}`), `field "server.Cache_N": unknown field`},
		{"server duplicate", repl(`"status":"ok"`, `"status":"ok","server":{"cache_n":1,"cache_n":2}`), `field "server.cache_n": duplicate key`},
		{"server float", repl(`"status":"ok"`, `"status":"ok","server":{"prompt_ns":1.5}`), `field "server.prompt_ns": must be an integer`},
		{"retries null", repl(`"status":"ok"`, `"status":"ok","retries":null`), `field "retries": must be an integer`},
		{"trailing data", goodLine + ` {}`, `trailing data after the record`},
		{"truncated", goodLine[:40], `invalid JSON`},
		{"empty", ``, `empty line`},
		{"not object", `[]`, `expected '{'`},
		{"bad escape", repl(`"id":"a"`, `"id":"\q"`), `field "id": invalid JSON at column 8: bad escape`},
		{"invalid utf8", repl(`"id":"a"`, "\"id\":\"\xff\""), `field "id": invalid UTF-8`},
		{"control char", repl(`"id":"a"`, "\"id\":\"\x01\""), `field "id": invalid JSON at column 8: control character in string`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := DecodeRecord([]byte(tt.line))
			if err == nil {
				t.Fatalf("DecodeRecord(%s) succeeded", tt.line)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("error %q does not contain %q", err, tt.want)
			}
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v does not wrap ErrInvalid", err)
			}
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %T is not a *DecodeError", err)
			}
		})
	}
}

func TestRecordReaderNamesFileAndLine(t *testing.T) {
	in := goodLine + "\n" + strings.Replace(goodLine, `"sent_ns":1`, `"sent_ns":-1.0`, 1) + "\n"
	rr := NewRecordReader(iotest.OneByteReader(strings.NewReader(in)), "records.jsonl")
	if _, err := rr.Next(); err != nil {
		t.Fatal(err)
	}
	_, err := rr.Next()
	want := `records.jsonl:2: field "sent_ns": must be an integer, got -1.0`
	if err == nil || err.Error() != want {
		t.Fatalf("error = %v, want %s", err, want)
	}
	if _, err := rr.Next(); err != io.EOF {
		t.Fatalf("after last line: %v, want io.EOF", err)
	}
}

func TestNextIntoReusesBuffers(t *testing.T) {
	var in bytes.Buffer
	for range 3 {
		b, _ := AppendRecord(nil, sampleRecord(30))
		in.Write(b)
		in.WriteByte('\n')
	}
	rr := NewRecordReader(&in, "r")
	var rec Record
	if err := rr.NextInto(&rec); err != nil {
		t.Fatal(err)
	}
	allocs := testing.AllocsPerRun(1, func() {
		if err := rr.NextInto(&rec); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 1 { // the id string
		t.Fatalf("NextInto allocated %v times per record, want ≤ 1", allocs)
	}
}

// refDecodeRecord is the oracle: encoding/json plus the strictness
// encoding/json lacks (exact key case, duplicates, required fields, null
// only where a Go nil is meaningful, orig an object).
func refDecodeRecord(line []byte) (*Record, error) {
	if !json.Valid(line) {
		return nil, errors.New("invalid JSON")
	}
	dec := json.NewDecoder(bytes.NewReader(line))
	tok, _ := dec.Token()
	if tok != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	seen := map[string]bool{}
	for dec.More() {
		k, _ := dec.Token()
		key := k.(string)
		if recordField([]byte(key)) < 0 {
			return nil, errors.New("unknown field")
		}
		if seen[key] {
			return nil, errors.New("duplicate")
		}
		seen[key] = true
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		switch key {
		case "item", "scheduled_ns", "chunks_ns", "chunk_tokens":
		case "server":
			if err := refServerKeys(raw); err != nil {
				return nil, err
			}
		case "orig":
			if raw[0] != '{' {
				return nil, errors.New("orig not object")
			}
			if refDuplicateKeys(json.NewDecoder(bytes.NewReader(raw))) {
				return nil, errors.New("duplicate key in orig")
			}
		default:
			if string(raw) == "null" {
				return nil, errors.New("null")
			}
		}
	}
	for f := range numRecordFields {
		if requiredRecordFields&(1<<f) != 0 && !seen[recordFieldNames[f]] {
			return nil, errors.New("missing")
		}
	}
	var rec Record
	d := json.NewDecoder(bytes.NewReader(line))
	d.DisallowUnknownFields()
	if err := d.Decode(&rec); err != nil {
		return nil, err
	}
	return &rec, nil
}

// refServerKeys refuses a server object whose keys are not exactly
// ServerReport's (encoding/json would fold their case) or repeat one.
func refServerKeys(raw json.RawMessage) error {
	if string(raw) == "null" {
		return nil
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		return err
	}
	for k := range m {
		known := false
		for _, n := range serverReportFields {
			known = known || k == n
		}
		if !known {
			return errors.New("unknown server field")
		}
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.Token()
	n := 0
	for dec.More() {
		dec.Token()
		var v json.RawMessage
		dec.Decode(&v)
		n++
	}
	if n != len(m) {
		return errors.New("duplicate server field")
	}
	return nil
}

// refDuplicateKeys reports whether the JSON value dec reads has an object
// with two keys equal under case folding.
func refDuplicateKeys(dec *json.Decoder) bool {
	tok, err := dec.Token()
	if err != nil {
		return false
	}
	switch tok {
	case json.Delim('{'):
		var seen []string
		for dec.More() {
			k, _ := dec.Token()
			for _, s := range seen {
				if strings.EqualFold(s, k.(string)) {
					return true
				}
			}
			seen = append(seen, k.(string))
			if refDuplicateKeys(dec) {
				return true
			}
		}
		dec.Token()
	case json.Delim('['):
		for dec.More() {
			if refDuplicateKeys(dec) {
				return true
			}
		}
		dec.Token()
	}
	return false
}

func recordSeeds(f *testing.F) {
	f.Add([]byte(goodLine))
	for _, n := range []int{0, 1, 5} {
		b, _ := AppendRecord(nil, sampleRecord(n))
		f.Add(b)
	}
	f.Add([]byte(`{"id":"\u00e9\ud800x","point":"p","repeat":-0,"phase":"warmup","item":null,"sent_ns":0,"end_ns":0,"chunks_ns":null,"input_tokens":0,"output_tokens":0,"status":"error","orig":{"a":[1e5,true,null,"\n"]}}`))
	f.Add([]byte(`{"id":"a","point":"p","repeat":0,"phase":"measure","sent_ns":1,"end_ns":9,"chunks_ns":[2],"input_tokens":4,"output_tokens":1,"status":"ok","retries":1,"server":{"cached_tokens":3,"prompt_n":1,"cache_n":null,"predicted_n":1,"prompt_ns":5,"predicted_ns":0}}`))
	files, _ := filepath.Glob("testdata/records/*.jsonl")
	for _, name := range files {
		b, err := os.ReadFile(name)
		if err != nil {
			f.Fatal(err)
		}
		for line := range bytes.Lines(b) {
			f.Add(bytes.TrimSuffix(line, []byte("\n")))
		}
	}
}

// FuzzDecodeRecord checks that the hand-written parser agrees with
// encoding/json (made strict) on accepting a line and on the values, and
// that AppendRecord writes what encoding/json writes.
func FuzzDecodeRecord(f *testing.F) {
	recordSeeds(f)
	f.Fuzz(func(t *testing.T, line []byte) {
		got, err := DecodeRecord(line)
		if !utf8.Valid(line) {
			return // the fast parser rejects invalid UTF-8; encoding/json replaces it
		}
		want, refErr := refDecodeRecord(line)
		if (err == nil) != (refErr == nil) {
			t.Fatalf("DecodeRecord(%q): err=%v, encoding/json err=%v", line, err, refErr)
		}
		if err != nil {
			var de *DecodeError
			if !errors.As(err, &de) {
				t.Fatalf("error %T is not a *DecodeError", err)
			}
			return
		}
		if !reflect.DeepEqual(got, want) {
			t.Fatalf("DecodeRecord(%q) =\n%+v\nencoding/json:\n%+v", line, got, want)
		}
		enc, err := AppendRecord(nil, got)
		if err != nil {
			t.Fatal(err)
		}
		norm := *got
		norm.ChunksNS = emptyNotNil(norm.ChunksNS)
		ref, err := json.Marshal(&norm)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(enc, ref) {
			t.Fatalf("AppendRecord = %s, encoding/json = %s", enc, ref)
		}
	})
}

func benchLine(b *testing.B) []byte {
	line, err := AppendRecord(nil, sampleRecord(40))
	if err != nil {
		b.Fatal(err)
	}
	return line
}

func BenchmarkDecodeRecord(b *testing.B) {
	line := benchLine(b)
	b.Run("fast", func(b *testing.B) {
		var d recordDecoder
		var rec Record
		b.SetBytes(int64(len(line)))
		b.ReportAllocs()
		for b.Loop() {
			if err := d.decode(line, &rec); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("fast-alloc", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		b.ReportAllocs()
		for b.Loop() {
			if _, err := DecodeRecord(line); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.SetBytes(int64(len(line)))
		b.ReportAllocs()
		for b.Loop() {
			var rec Record
			d := json.NewDecoder(bytes.NewReader(line))
			d.DisallowUnknownFields()
			if err := d.Decode(&rec); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func BenchmarkAppendRecord(b *testing.B) {
	rec := sampleRecord(40)
	var buf []byte
	b.Run("fast", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf, _ = AppendRecord(buf[:0], rec)
		}
	})
	b.Run("encoding-json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			buf, _ = json.Marshal(rec)
		}
	})
}

// TestDecodeRecordRefusesControlCharacters: a record id (or error) holding a newline wrote whole lines into the
// replay report. The strict decoder refuses a control character in any
// record string, naming the field.
func TestDecodeRecordRefusesControlCharacters(t *testing.T) {
	base := `{"id":"a","point":"p","repeat":0,"phase":"measure","sent_ns":0,"end_ns":1,"chunks_ns":[],"input_tokens":0,"output_tokens":0,"status":"error","error":"e"}`
	for _, c := range []struct{ field, from, to string }{
		{"id", `"id":"a"`, `"id":"a\n  goodput 999 req/s"`},
		{"error", `"error":"e"`, `"error":"HTTP 500\n\u001b[8m"`},
		{"point", `"point":"p"`, `"point":"p\u2028"`},
		{"status", `"status":"error"`, `"status":"error\r"`},
	} {
		line := strings.Replace(base, c.from, c.to, 1)
		_, err := DecodeRecord([]byte(line))
		if err == nil || !strings.Contains(err.Error(), `field "`+c.field+`"`) || !strings.Contains(err.Error(), "control character") {
			t.Errorf("%s: DecodeRecord(%s) = %v, want a control-character error naming the field", c.field, line, err)
		}
	}
	if _, err := DecodeRecord([]byte(base)); err != nil {
		t.Fatal(err)
	}
}
