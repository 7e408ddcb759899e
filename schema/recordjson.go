package schema

import (
	"errors"
	"fmt"
	"strconv"
	"unicode/utf16"
	"unicode/utf8"
)

// DecodeError is a decoding error located in a document: the file, the line
// (0 when the document is not line-based), the field as a JSON path (empty
// when the error is not about one field) and what is wrong. It wraps
// ErrInvalid.
type DecodeError struct {
	File  string
	Line  int
	Field string
	Msg   string
}

// Error formats the error as `file:line: field "x": msg`.
func (e *DecodeError) Error() string {
	var b []byte
	if e.File != "" {
		b = append(b, e.File...)
		if e.Line > 0 {
			b = append(b, ':')
			b = strconv.AppendInt(b, int64(e.Line), 10)
		}
		b = append(b, ": "...)
	}
	if e.Field != "" {
		b = append(b, "field "...)
		b = strconv.AppendQuote(b, e.Field)
		b = append(b, ": "...)
	}
	b = append(b, e.Msg...)
	return string(b)
}

// Unwrap returns ErrInvalid.
func (e *DecodeError) Unwrap() error { return ErrInvalid }

// Problem returns the error as a validation problem.
func (e *DecodeError) Problem() Problem {
	return Problem{File: e.File, Line: e.Line, Field: e.Field, Message: e.Msg}
}

// maxJSONDepth is the deepest nesting accepted inside a record's orig
// object, as in encoding/json.
const maxJSONDepth = 10000

// Record field numbers, used as bits of the seen-set.
const (
	fID = iota
	fPoint
	fRepeat
	fPhase
	fItem
	fShard
	fSession
	fTurn
	fScheduled
	fSent
	fEnd
	fChunks
	fChunkTokens
	fInput
	fOutput
	fStatus
	fError
	fRetries
	fServer
	fOrig
	numRecordFields
)

var recordFieldNames = [numRecordFields]string{
	"id", "point", "repeat", "phase", "item", "shard", "session", "turn", "scheduled_ns", "sent_ns", "end_ns",
	"chunks_ns", "chunk_tokens", "input_tokens", "output_tokens", "status", "error", "retries", "server", "orig",
}

// requiredRecordFields must appear in every record line.
const requiredRecordFields = 1<<fID | 1<<fPoint | 1<<fRepeat | 1<<fPhase | 1<<fSent | 1<<fEnd |
	1<<fChunks | 1<<fInput | 1<<fOutput | 1<<fStatus

func recordField(key []byte) int {
	switch string(key) {
	case "id":
		return fID
	case "point":
		return fPoint
	case "repeat":
		return fRepeat
	case "phase":
		return fPhase
	case "item":
		return fItem
	case "shard":
		return fShard
	case "session":
		return fSession
	case "turn":
		return fTurn
	case "scheduled_ns":
		return fScheduled
	case "sent_ns":
		return fSent
	case "end_ns":
		return fEnd
	case "chunks_ns":
		return fChunks
	case "chunk_tokens":
		return fChunkTokens
	case "input_tokens":
		return fInput
	case "output_tokens":
		return fOutput
	case "status":
		return fStatus
	case "error":
		return fError
	case "retries":
		return fRetries
	case "server":
		return fServer
	case "orig":
		return fOrig
	}
	return -1
}

// recordDecoder is the hand-written strict parser of one record line. It
// keeps scratch buffers between calls so that streaming does not allocate
// for chunk arrays.
type recordDecoder struct {
	b     []byte
	i     int
	field string // field being parsed, for errors

	str       []byte // unescaped string scratch
	fold      []byte // case-folded key scratch
	chunks    []int64
	tokens    []int64
	orig      []byte
	lastPoint string
	item      int64
	shard     int64
	session   int64
	turn      int64
	sched     int64

	doc     bool // a multi-line document: errors carry a line number
	errLine int
}

// pos describes the current position for an error message: the column in
// a record line, or (for documents) the column in the line, whose number is
// kept for the error.
func (d *recordDecoder) pos() string {
	if !d.doc {
		return "column " + strconv.Itoa(d.i+1)
	}
	line, col := 1, 1
	for _, c := range d.b[:min(d.i, len(d.b))] {
		if c == '\n' {
			line++
			col = 1
		} else {
			col++
		}
	}
	d.errLine = line
	return "column " + strconv.Itoa(col)
}

// DecodeRecord decodes one record line strictly: every field is checked
// for its type, unknown fields, duplicate keys, missing required fields,
// non-integer or out-of-range numbers and trailing data are errors. The
// error is a *DecodeError naming the field.
func DecodeRecord(line []byte) (*Record, error) {
	var d recordDecoder
	rec := new(Record)
	if err := d.decode(line, rec); err != nil {
		return nil, err
	}
	d.detach(rec)
	return rec, nil
}

// detach gives rec its own copies of the decoder's scratch buffers.
func (d *recordDecoder) detach(rec *Record) {
	if rec.ChunksNS != nil {
		rec.ChunksNS = append(make([]int64, 0, len(rec.ChunksNS)), rec.ChunksNS...)
	}
	if rec.ChunkTokens != nil {
		rec.ChunkTokens = append(make([]int64, 0, len(rec.ChunkTokens)), rec.ChunkTokens...)
	}
	if rec.Orig != nil {
		rec.Orig = append(make([]byte, 0, len(rec.Orig)), rec.Orig...)
	}
	if rec.Item != nil {
		v := *rec.Item
		rec.Item = &v
	}
	if rec.Shard != nil {
		v := *rec.Shard
		rec.Shard = &v
	}
	if rec.Session != nil {
		v := *rec.Session
		rec.Session = &v
	}
	if rec.Turn != nil {
		v := *rec.Turn
		rec.Turn = &v
	}
	if rec.ScheduledNS != nil {
		v := *rec.ScheduledNS
		rec.ScheduledNS = &v
	}
}

func (d *recordDecoder) fail(format string, args ...any) error {
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	if d.doc && d.errLine == 0 {
		d.pos()
	}
	return &DecodeError{Line: d.errLine, Field: d.field, Msg: msg}
}

func (d *recordDecoder) syntax(what string) error {
	if d.i >= len(d.b) {
		return d.fail("invalid JSON: unexpected end of line, expected %s", what)
	}
	return d.fail("invalid JSON at %s: unexpected %s, expected %s", d.pos(), describeByte(d.b[d.i]), what)
}

func describeByte(c byte) string {
	if c >= 0x20 && c < 0x7f {
		return strconv.QuoteRune(rune(c))
	}
	return fmt.Sprintf("byte 0x%02x", c)
}

func (d *recordDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\r', '\n':
			d.i++
		default:
			return
		}
	}
}

// decode parses line into rec. The slices and pointers of rec point into
// the decoder's scratch buffers, valid until the next call.
func (d *recordDecoder) decode(line []byte, rec *Record) error {
	*rec = Record{}
	d.b, d.i, d.field = line, 0, ""
	d.ws()
	if d.i >= len(d.b) {
		return d.fail("empty line, expected a JSON object")
	}
	if d.b[d.i] != '{' {
		return d.syntax("'{'")
	}
	d.i++
	var seen uint32
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == '}' {
		d.i++
	} else {
		for {
			d.field = ""
			d.ws()
			if d.i >= len(d.b) || d.b[d.i] != '"' {
				return d.syntax("a field name")
			}
			key, err := d.stringBytes()
			if err != nil {
				return err
			}
			f := recordField(key)
			if f < 0 {
				d.field = string(key)
				return d.fail("unknown field")
			}
			d.field = recordFieldNames[f]
			if seen&(1<<f) != 0 {
				return d.fail("duplicate key")
			}
			seen |= 1 << f
			d.ws()
			if d.i >= len(d.b) || d.b[d.i] != ':' {
				return d.syntax("':'")
			}
			d.i++
			d.ws()
			if err := d.value(f, rec); err != nil {
				return err
			}
			d.ws()
			if d.i >= len(d.b) {
				d.field = ""
				return d.syntax("',' or '}'")
			}
			if d.b[d.i] == ',' {
				d.i++
				continue
			}
			if d.b[d.i] == '}' {
				d.i++
				break
			}
			d.field = ""
			return d.syntax("',' or '}'")
		}
	}
	d.field = ""
	d.ws()
	if d.i != len(d.b) {
		return d.fail("invalid JSON at %s: trailing data after the record", d.pos())
	}
	if missing := requiredRecordFields &^ seen; missing != 0 {
		for f := range numRecordFields {
			if missing&(1<<f) != 0 {
				d.field = recordFieldNames[f]
				return d.fail("missing required field")
			}
		}
	}
	return nil
}

func (d *recordDecoder) value(f int, rec *Record) error {
	var err error
	switch f {
	case fID:
		var s []byte
		if s, err = d.stringValue(); err == nil {
			rec.ID = string(s)
		}
	case fPoint:
		var s []byte
		if s, err = d.stringValue(); err == nil {
			if string(s) != d.lastPoint {
				d.lastPoint = string(s)
			}
			rec.Point = d.lastPoint
		}
	case fPhase:
		var s []byte
		if s, err = d.stringValue(); err == nil {
			switch string(s) {
			case PhaseMeasure:
				rec.Phase = PhaseMeasure
			case PhaseWarmup:
				rec.Phase = PhaseWarmup
			default:
				rec.Phase = string(s)
			}
		}
	case fStatus:
		var s []byte
		if s, err = d.stringValue(); err == nil {
			rec.Status = internStatus(s)
		}
	case fError:
		var s []byte
		if s, err = d.stringValue(); err == nil {
			rec.Error = string(s)
		}
	case fRepeat:
		var v int64
		if v, err = d.intValue(); err == nil {
			rec.Repeat = int(v)
		}
	case fSent:
		rec.SentNS, err = d.intValue()
	case fEnd:
		rec.EndNS, err = d.intValue()
	case fInput:
		rec.InputTokens, err = d.intValue()
	case fOutput:
		rec.OutputTokens, err = d.intValue()
	case fItem, fShard, fSession, fTurn, fScheduled:
		return d.optionalInt(f, rec)
	case fChunks:
		if d.null() {
			return nil
		}
		d.chunks, err = d.intArray(d.chunks[:0])
		rec.ChunksNS = d.chunks
	case fChunkTokens:
		if d.null() {
			return nil
		}
		d.tokens, err = d.intArray(d.tokens[:0])
		rec.ChunkTokens = d.tokens
	case fRetries:
		rec.Retries, err = d.intValue()
	case fServer:
		if d.null() {
			return nil
		}
		rec.Server, err = d.serverReport()
	case fOrig:
		if d.i >= len(d.b) || d.b[d.i] != '{' {
			return d.fail("must be a JSON object")
		}
		start := d.i
		if err = d.skip(0); err == nil {
			d.orig = append(d.orig[:0], d.b[start:d.i]...)
			rec.Orig = d.orig
		}
	}
	return err
}

// serverReport parses a record's server object: known keys only, each
// once, integer or null values (null leaves the field unreported, as
// encoding/json does). It allocates, since few records carry one.
func (d *recordDecoder) serverReport() (*ServerReport, error) {
	if d.i >= len(d.b) || d.b[d.i] != '{' {
		return nil, d.fail("must be a JSON object")
	}
	d.i++
	sr := new(ServerReport)
	outer := d.field
	var seen uint8
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == '}' {
		d.i++
		return sr, nil
	}
	for {
		d.field = outer
		d.ws()
		if d.i >= len(d.b) || d.b[d.i] != '"' {
			return nil, d.syntax("a field name")
		}
		key, err := d.stringBytes()
		if err != nil {
			return nil, err
		}
		k := -1
		for i, n := range serverReportFields {
			if string(key) == n {
				k = i
			}
		}
		d.field = outer + "." + string(key)
		if k < 0 {
			return nil, d.fail("unknown field")
		}
		if seen&(1<<k) != 0 {
			return nil, d.fail("duplicate key")
		}
		seen |= 1 << k
		d.ws()
		if d.i >= len(d.b) || d.b[d.i] != ':' {
			return nil, d.syntax("':'")
		}
		d.i++
		d.ws()
		if !d.null() {
			v, err := d.intValue()
			if err != nil {
				return nil, err
			}
			*serverReportField(sr, k) = &v
		}
		d.ws()
		if d.i >= len(d.b) {
			return nil, d.syntax("',' or '}'")
		}
		switch d.b[d.i] {
		case ',':
			d.i++
			continue
		case '}':
			d.i++
			d.field = outer
			return sr, nil
		}
		return nil, d.syntax("',' or '}'")
	}
}

func internStatus(s []byte) string {
	switch string(s) {
	case StatusOK:
		return StatusOK
	case StatusError:
		return StatusError
	case StatusTimeout:
		return StatusTimeout
	case StatusCancelled:
		return StatusCancelled
	case StatusRejected:
		return StatusRejected
	}
	return string(s)
}

// null consumes a JSON null if one is next.
func (d *recordDecoder) null() bool {
	if len(d.b)-d.i >= 4 && string(d.b[d.i:d.i+4]) == "null" {
		d.i += 4
		return true
	}
	return false
}

func (d *recordDecoder) stringValue() ([]byte, error) {
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return nil, d.fail("must be a string")
	}
	start := d.i
	v, err := d.stringBytes()
	if err != nil {
		return nil, err
	}
	// A record's strings (id, point, phase, status, error) are shown in
	// reports one per line: no control character, as in manifests.
	if err := CheckText(string(v)); err != nil {
		d.i = start
		return nil, d.fail("%v", err)
	}
	return v, nil
}

// stringBytes parses the JSON string at d.i. The result aliases the input
// when the string has no escapes, else the decoder's scratch buffer.
// Invalid UTF-8 is rejected; escaped lone surrogates become U+FFFD as in
// encoding/json.
func (d *recordDecoder) stringBytes() ([]byte, error) {
	d.i++ // opening quote
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			s := d.b[start:d.i]
			d.i++
			return s, nil
		case c == '\\':
			return d.slowString(start)
		case c < 0x20:
			return nil, d.fail("invalid JSON at %s: control character in string", d.pos())
		case c < utf8.RuneSelf:
			d.i++
		default:
			r, size := utf8.DecodeRune(d.b[d.i:])
			if r == utf8.RuneError && size == 1 {
				return nil, d.fail("invalid UTF-8 in string at %s", d.pos())
			}
			d.i += size
		}
	}
	return nil, d.fail("invalid JSON: unterminated string")
}

func (d *recordDecoder) slowString(start int) ([]byte, error) {
	out := append(d.str[:0], d.b[start:d.i]...)
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			d.str = out
			return out, nil
		case c == '\\':
			if d.i+1 >= len(d.b) {
				return nil, d.fail("invalid JSON: unterminated string")
			}
			e := d.b[d.i+1]
			switch e {
			case '"', '\\', '/':
				out = append(out, e)
			case 'b':
				out = append(out, '\b')
			case 'f':
				out = append(out, '\f')
			case 'n':
				out = append(out, '\n')
			case 'r':
				out = append(out, '\r')
			case 't':
				out = append(out, '\t')
			case 'u':
				r := hex4(d.b[d.i:])
				if r < 0 {
					return nil, d.fail("invalid JSON at %s: bad \\u escape", d.pos())
				}
				d.i += 6
				if utf16.IsSurrogate(r) {
					if r2 := hex4(d.b[d.i:]); r2 >= 0 {
						if dec := utf16.DecodeRune(r, r2); dec != utf8.RuneError {
							d.i += 6
							out = utf8.AppendRune(out, dec)
							continue
						}
					}
					r = utf8.RuneError
				}
				out = utf8.AppendRune(out, r)
				continue
			default:
				return nil, d.fail("invalid JSON at %s: bad escape", d.pos())
			}
			d.i += 2
		case c < 0x20:
			return nil, d.fail("invalid JSON at %s: control character in string", d.pos())
		case c < utf8.RuneSelf:
			out = append(out, c)
			d.i++
		default:
			r, size := utf8.DecodeRune(d.b[d.i:])
			if r == utf8.RuneError && size == 1 {
				return nil, d.fail("invalid UTF-8 in string at %s", d.pos())
			}
			out = append(out, d.b[d.i:d.i+size]...)
			d.i += size
		}
	}
	return nil, d.fail("invalid JSON: unterminated string")
}

// hex4 reads `\uXXXX` at the start of s, or returns -1.
func hex4(s []byte) rune {
	if len(s) < 6 || s[0] != '\\' || s[1] != 'u' {
		return -1
	}
	var r rune
	for _, c := range s[2:6] {
		switch {
		case '0' <= c && c <= '9':
			c -= '0'
		case 'a' <= c && c <= 'f':
			c = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			c = c - 'A' + 10
		default:
			return -1
		}
		r = r*16 + rune(c)
	}
	return r
}

// intValue parses a JSON number that must be an integer in int64 range.
func (d *recordDecoder) intValue() (int64, error) {
	b, i := d.b, d.i
	// Fast path: a non-negative integer of at most 18 digits (no overflow
	// possible) followed by a byte that cannot continue a number.
	if i < len(b) && b[i]-'1' < 9 {
		u, j := uint64(b[i]-'0'), i+1
		for ; j < len(b) && j-i < 18; j++ {
			c := b[j] - '0'
			if c > 9 {
				break
			}
			u = u*10 + uint64(c)
		}
		if j == len(b) || (b[j]-'0' > 9 && b[j] != '.' && b[j] != 'e' && b[j] != 'E') {
			d.i = j
			return int64(u), nil
		}
	}
	if i >= len(b) {
		return 0, d.fail("must be an integer")
	}
	neg := false
	if b[i] == '-' {
		neg = true
		i++
	}
	if i >= len(b) || b[i] < '0' || b[i] > '9' {
		return 0, d.fail("must be an integer")
	}
	start := i
	var u uint64
	overflow := false
	if b[i] == '0' {
		i++
	} else {
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			c := uint64(b[i] - '0')
			if u > (1<<63)/10 || (u == (1<<63)/10 && c > (1<<63)%10) {
				overflow = true
			}
			u = u*10 + c
			i++
		}
	}
	if i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E' || (b[i] >= '0' && b[i] <= '9')) {
		d.i = i
		return 0, d.fail("must be an integer, got %s", d.numberText(start))
	}
	d.i = i
	if overflow || (!neg && u > 1<<63-1) {
		return 0, d.fail("integer %s out of range (int64)", truncate(string(b[start-btoi(neg):i]), 40))
	}
	if neg {
		return -int64(u), nil
	}
	return int64(u), nil
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// numberText returns the rest of a malformed or non-integer number, for
// the error message, truncated.
func (d *recordDecoder) numberText(start int) string {
	end := d.i
	for end < len(d.b) && end-start < 40 {
		c := d.b[end]
		if !(c >= '0' && c <= '9' || c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
			break
		}
		end++
	}
	if start > 0 && d.b[start-1] == '-' {
		start--
	}
	return string(d.b[start:end])
}

// intArray parses a JSON array of integers, appending to dst.
func (d *recordDecoder) intArray(dst []int64) ([]int64, error) {
	if d.i >= len(d.b) || d.b[d.i] != '[' {
		return dst, d.fail("must be an array of integers")
	}
	d.i++
	if dst == nil {
		dst = make([]int64, 0, 64)
	}
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == ']' {
		d.i++
		return dst, nil
	}
	// Fast path for what benchmark tools write: non-negative integers of
	// at most 18 digits (no overflow possible), no whitespace. Anything
	// else is left, from the start of its element, to the general loop.
	b, i := d.b, d.i
fast:
	for i < len(b) {
		c0 := b[i] - '0'
		if c0 > 9 {
			break
		}
		u, j := uint64(c0), i+1
		if c0 != 0 { // a leading 0 must stand alone
			// Two digits a step halve the multiply chain.
			for j+1 < len(b) && j-i < 17 {
				c1, c2 := b[j]-'0', b[j+1]-'0'
				if c1 > 9 || c2 > 9 {
					break
				}
				u = u*100 + uint64(c1)*10 + uint64(c2)
				j += 2
			}
			if j < len(b) && j-i < 18 && b[j]-'0' <= 9 {
				u = u*10 + uint64(b[j]-'0')
				j++
			}
		}
		if j >= len(b) {
			break
		}
		switch b[j] {
		case ',':
			dst = append(dst, int64(u))
			i = j + 1
		case ']':
			d.i = j + 1
			return append(dst, int64(u)), nil
		default:
			break fast
		}
	}
	d.i = i
	for {
		d.ws()
		v, err := d.intValue()
		if err != nil {
			return dst, d.fail("element %d: %s", len(dst), err.(*DecodeError).Msg)
		}
		dst = append(dst, v)
		d.ws()
		if d.i >= len(d.b) {
			return dst, d.syntax("',' or ']'")
		}
		switch d.b[d.i] {
		case ',':
			d.i++
		case ']':
			d.i++
			return dst, nil
		default:
			return dst, d.syntax("',' or ']'")
		}
	}
}

// skip validates and skips any JSON value (used for orig). Duplicate keys
// inside an object are refused here too: replay reads peer tools' values
// from orig, and two readers must not see different values.
func (d *recordDecoder) skip(depth int) error {
	if depth > maxJSONDepth {
		return d.fail("JSON nested too deeply")
	}
	if d.i >= len(d.b) {
		return d.syntax("a JSON value")
	}
	switch c := d.b[d.i]; {
	case c == '{':
		d.i++
		d.ws()
		if d.i < len(d.b) && d.b[d.i] == '}' {
			d.i++
			return nil
		}
		var keys map[string]struct{}
		for {
			d.ws()
			if d.i >= len(d.b) || d.b[d.i] != '"' {
				return d.syntax("a field name")
			}
			k, err := d.stringBytes()
			if err != nil {
				return err
			}
			if keys == nil {
				keys = make(map[string]struct{}, 8)
			}
			d.fold = appendFoldedKey(d.fold[:0], k)
			if _, dup := keys[string(d.fold)]; dup {
				return d.fail("invalid JSON at %s: duplicate key %q (equal to an earlier one under case folding)", d.pos(), k)
			}
			keys[string(d.fold)] = struct{}{}
			d.ws()
			if d.i >= len(d.b) || d.b[d.i] != ':' {
				return d.syntax("':'")
			}
			d.i++
			d.ws()
			if err := d.skip(depth + 1); err != nil {
				return err
			}
			d.ws()
			if d.i >= len(d.b) {
				return d.syntax("',' or '}'")
			}
			if d.b[d.i] == ',' {
				d.i++
				continue
			}
			if d.b[d.i] == '}' {
				d.i++
				return nil
			}
			return d.syntax("',' or '}'")
		}
	case c == '[':
		d.i++
		d.ws()
		if d.i < len(d.b) && d.b[d.i] == ']' {
			d.i++
			return nil
		}
		for {
			d.ws()
			if err := d.skip(depth + 1); err != nil {
				return err
			}
			d.ws()
			if d.i >= len(d.b) {
				return d.syntax("',' or ']'")
			}
			if d.b[d.i] == ',' {
				d.i++
				continue
			}
			if d.b[d.i] == ']' {
				d.i++
				return nil
			}
			return d.syntax("',' or ']'")
		}
	case c == '"':
		_, err := d.stringBytes()
		return err
	case c == '-' || (c >= '0' && c <= '9'):
		return d.skipNumber()
	case c == 't':
		return d.literal("true")
	case c == 'f':
		return d.literal("false")
	case c == 'n':
		return d.literal("null")
	}
	return d.syntax("a JSON value")
}

func (d *recordDecoder) literal(lit string) error {
	if len(d.b)-d.i >= len(lit) && string(d.b[d.i:d.i+len(lit)]) == lit {
		d.i += len(lit)
		return nil
	}
	return d.syntax("a JSON value")
}

// skipNumber validates the JSON number grammar.
func (d *recordDecoder) skipNumber() error {
	b := d.b
	if b[d.i] == '-' {
		d.i++
	}
	digits := func() bool {
		s := d.i
		for d.i < len(b) && b[d.i] >= '0' && b[d.i] <= '9' {
			d.i++
		}
		return d.i > s
	}
	if d.i < len(b) && b[d.i] == '0' {
		d.i++
	} else if !digits() {
		return d.syntax("a digit")
	}
	if d.i < len(b) && b[d.i] == '.' {
		d.i++
		if !digits() {
			return d.syntax("a digit")
		}
	}
	if d.i < len(b) && (b[d.i] == 'e' || b[d.i] == 'E') {
		d.i++
		if d.i < len(b) && (b[d.i] == '+' || b[d.i] == '-') {
			d.i++
		}
		if !digits() {
			return d.syntax("a digit")
		}
	}
	return nil
}

// optionalInt decodes field f, one of the record's optional integers
// (item, shard, session, turn, scheduled_ns), into the decoder's scratch
// for it, which the record then points to; null leaves it nil.
func (d *recordDecoder) optionalInt(f int, rec *Record) error {
	if d.null() {
		return nil
	}
	var v *int64
	var p **int64
	switch f {
	case fItem:
		v, p = &d.item, &rec.Item
	case fShard:
		v, p = &d.shard, &rec.Shard
	case fSession:
		v, p = &d.session, &rec.Session
	case fTurn:
		v, p = &d.turn, &rec.Turn
	default:
		v, p = &d.sched, &rec.ScheduledNS
	}
	n, err := d.intValue()
	if err != nil {
		return err
	}
	*v, *p = n, v
	return nil
}

// AppendRecord appends the canonical JSON encoding of rec, without a
// newline, to buf. The bytes are identical to encoding/json's Marshal of
// rec; orig is compacted and HTML-escaped as Marshal does. Two
// differences: a control character (IsControlRune) in a string field is
// written as EscapeText's visible escape (a server's error body with a
// newline becomes "\\n"), since the decoder refuses control characters
// in a record's strings; and chunks_ns, a required list, is written []
// when it is empty whether the slice is nil or not, so that a record has
// one encoding however it was built or decoded (the decoder gives nil or
// an empty slice for [], depending on its scratch buffers, and reads a
// stored null as nil).
func AppendRecord(buf []byte, rec *Record) ([]byte, error) {
	buf = append(buf, `{"id":`...)
	buf = appendJSONString(buf, EscapeText(rec.ID, false))
	buf = append(buf, `,"point":`...)
	buf = appendJSONString(buf, EscapeText(rec.Point, false))
	buf = append(buf, `,"repeat":`...)
	buf = strconv.AppendInt(buf, int64(rec.Repeat), 10)
	buf = append(buf, `,"phase":`...)
	buf = appendJSONString(buf, EscapeText(rec.Phase, false))
	if rec.Item != nil {
		buf = append(buf, `,"item":`...)
		buf = strconv.AppendInt(buf, *rec.Item, 10)
	}
	if rec.Shard != nil {
		buf = append(buf, `,"shard":`...)
		buf = strconv.AppendInt(buf, *rec.Shard, 10)
	}
	if rec.Session != nil {
		buf = append(buf, `,"session":`...)
		buf = strconv.AppendInt(buf, *rec.Session, 10)
	}
	if rec.Turn != nil {
		buf = append(buf, `,"turn":`...)
		buf = strconv.AppendInt(buf, *rec.Turn, 10)
	}
	if rec.ScheduledNS != nil {
		buf = append(buf, `,"scheduled_ns":`...)
		buf = strconv.AppendInt(buf, *rec.ScheduledNS, 10)
	}
	buf = append(buf, `,"sent_ns":`...)
	buf = strconv.AppendInt(buf, rec.SentNS, 10)
	buf = append(buf, `,"end_ns":`...)
	buf = strconv.AppendInt(buf, rec.EndNS, 10)
	buf = append(buf, `,"chunks_ns":`...)
	buf = appendIntArray(buf, rec.ChunksNS)
	if len(rec.ChunkTokens) > 0 {
		buf = append(buf, `,"chunk_tokens":`...)
		buf = appendIntArray(buf, rec.ChunkTokens)
	}
	buf = append(buf, `,"input_tokens":`...)
	buf = strconv.AppendInt(buf, rec.InputTokens, 10)
	buf = append(buf, `,"output_tokens":`...)
	buf = strconv.AppendInt(buf, rec.OutputTokens, 10)
	buf = append(buf, `,"status":`...)
	buf = appendJSONString(buf, EscapeText(rec.Status, false))
	if rec.Error != "" {
		buf = append(buf, `,"error":`...)
		buf = appendJSONString(buf, EscapeText(rec.Error, false))
	}
	if rec.Retries != 0 {
		buf = append(buf, `,"retries":`...)
		buf = strconv.AppendInt(buf, rec.Retries, 10)
	}
	if rec.Server != nil {
		buf = append(buf, `,"server":{`...)
		first := true
		for i, n := range serverReportFields {
			if v := *serverReportField(rec.Server, i); v != nil {
				if !first {
					buf = append(buf, ',')
				}
				first = false
				buf = append(buf, '"')
				buf = append(buf, n...)
				buf = append(buf, `":`...)
				buf = strconv.AppendInt(buf, *v, 10)
			}
		}
		buf = append(buf, '}')
	}
	if len(rec.Orig) > 0 {
		buf = append(buf, `,"orig":`...)
		n := len(buf)
		var err error
		buf, err = appendCompactJSON(buf, rec.Orig)
		if err != nil {
			return buf[:n], fmt.Errorf("encode record %q: field \"orig\": %w", rec.ID, err)
		}
	}
	return append(buf, '}'), nil
}

// appendIntArray writes v as a JSON array, [] when v is nil or empty.
func appendIntArray(buf []byte, v []int64) []byte {
	buf = append(buf, '[')
	for i, x := range v {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = strconv.AppendInt(buf, x, 10)
	}
	return append(buf, ']')
}

const hexDigits = "0123456789abcdef"

// jsonSafe marks the ASCII bytes encoding/json writes unescaped (with HTML
// escaping on).
var jsonSafe = func() (t [utf8.RuneSelf]bool) {
	for c := 0x20; c < utf8.RuneSelf; c++ {
		t[c] = c != '"' && c != '\\' && c != '<' && c != '>' && c != '&'
	}
	return t
}()

// appendJSONString quotes s exactly as encoding/json does.
func appendJSONString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if jsonSafe[c] {
				i++
				continue
			}
			dst = append(dst, s[start:i]...)
			switch c {
			case '\\', '"':
				dst = append(dst, '\\', c)
			case '\b':
				dst = append(dst, '\\', 'b')
			case '\f':
				dst = append(dst, '\\', 'f')
			case '\n':
				dst = append(dst, '\\', 'n')
			case '\r':
				dst = append(dst, '\\', 'r')
			case '\t':
				dst = append(dst, '\\', 't')
			default:
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			dst = append(dst, s[start:i]...)
			dst = append(dst, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			dst = append(dst, s[start:i]...)
			dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// appendCompactJSON validates src as one JSON value and appends it with
// insignificant whitespace removed and <, >, &, U+2028 and U+2029 escaped,
// as encoding/json does for a json.RawMessage.
func appendCompactJSON(dst, src []byte) ([]byte, error) {
	var d recordDecoder
	d.b = src
	d.ws()
	if err := d.skip(0); err != nil {
		return dst, errors.New(err.(*DecodeError).Msg)
	}
	d.ws()
	if d.i != len(src) {
		return dst, errors.New("invalid JSON: trailing data")
	}
	inString := false
	for i := 0; i < len(src); i++ {
		c := src[i]
		if inString {
			switch {
			case c == '\\':
				dst = append(dst, c, src[i+1])
				i++
				continue
			case c == '"':
				inString = false
			case c == '<' || c == '>' || c == '&':
				dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
				continue
			case c == 0xE2 && i+2 < len(src) && src[i+1] == 0x80 && src[i+2]&^1 == 0xA8:
				dst = append(dst, '\\', 'u', '2', '0', '2', hexDigits[src[i+2]&0xF])
				i += 2
				continue
			}
			dst = append(dst, c)
			continue
		}
		switch c {
		case ' ', '\t', '\r', '\n':
			continue
		case '"':
			inString = true
		}
		dst = append(dst, c)
	}
	return dst, nil
}
