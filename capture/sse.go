package capture

import (
	"bytes"
	"errors"
	"io"
	"sync"

	"github.com/benchseal/benchseal/internal/errcond"
)

// ErrEventTooLarge is returned when a line or event exceeds MaxEventSize.
var ErrEventTooLarge = errors.New("server-sent event too large")

// Event is one server-sent event.
type Event struct {
	// Name is the value of the event's "event:" field, if any.
	Name string
	// Data is the event's data lines joined with "\n" (or, for a
	// llama.cpp-style "error:" line, that line's value).
	Data []byte
	// ErrorField is true when the event carried a non-standard "error:"
	// field (llama.cpp server sends in-band errors that way).
	ErrorField bool
	// Comments counts comment lines (": keep-alive") seen in the event.
	Comments int
	// At is the clock reading taken right after the read that delivered the
	// end of the event's last data line, before any parsing.
	At int64
}

// SSEReader splits a byte stream into server-sent events following the
// WHATWG event-stream rules: lines end with CRLF, LF or CR; a line starting
// with ':' is a comment; "field: value" lines with at most one space after
// the colon; an empty line dispatches the event. An event still pending at
// end of stream is dispatched too (some servers omit the last blank line).
type SSEReader struct {
	r      io.Reader
	now    func() int64
	buf    []byte
	start  int // first unconsumed byte
	end    int // end of buffered data
	readAt int64
	eof    bool
	err    error
	skipLF bool // the previous line ended with CR; drop a leading LF

	data     []byte
	hasData  bool
	errField bool
	name     string
	comments int
	at       int64
	ev       Event
}

// NewSSEReader reads events from r. now is the clock read right after every
// successful Read; it may be nil (times are then zero).
func NewSSEReader(r io.Reader, now func() int64) *SSEReader {
	if now == nil {
		now = func() int64 { return 0 }
	}
	return &SSEReader{r: r, now: now, buf: make([]byte, 32<<10)}
}

// Next returns the next event, or io.EOF at the end of the stream. Events
// made only of comments are returned too (with no data), so that callers
// can count keep-alives. The event and its Data are valid until the next
// call to Next.
func (s *SSEReader) Next() (*Event, error) {
	for {
		line, at, ok, err := s.line()
		if err != nil {
			if err == io.EOF && (s.hasData || s.errField || s.name != "" || s.comments > 0) {
				return s.dispatch(), nil
			}
			return nil, err
		}
		if !ok {
			continue
		}
		if len(line) == 0 {
			if s.hasData || s.errField || s.name != "" || s.comments > 0 {
				return s.dispatch(), nil
			}
			continue
		}
		if line[0] == ':' {
			s.comments++
			continue
		}
		field, value := line, []byte(nil)
		if i := bytes.IndexByte(line, ':'); i >= 0 {
			field, value = line[:i], line[i+1:]
			if len(value) > 0 && value[0] == ' ' {
				value = value[1:]
			}
		}
		switch string(field) {
		case "data":
			if s.hasData {
				s.data = append(s.data, '\n')
			}
			if len(s.data)+len(value) > MaxEventSize {
				return nil, ErrEventTooLarge
			}
			s.data = append(s.data, value...)
			s.hasData = true
			s.at = at
		case "error":
			// llama.cpp: "error: {json}" in place of a data line.
			s.data = append(s.data[:0], value...)
			s.hasData = false
			s.errField = true
			s.at = at
		case "event":
			s.name = string(value)
			if s.at == 0 {
				s.at = at
			}
		default:
			// id, retry and unknown fields are ignored.
		}
	}
}

func (s *SSEReader) dispatch() *Event {
	s.ev = Event{Name: s.name, Data: s.data, ErrorField: s.errField, Comments: s.comments, At: s.at}
	s.data = s.data[:0]
	s.hasData, s.errField, s.name, s.comments, s.at = false, false, "", 0, 0
	return &s.ev
}

// line returns the next line without its terminator and the time of the
// read that completed it. ok is false when a lone LF following a CR was
// dropped and the caller should ask again.
func (s *SSEReader) line() (line []byte, at int64, ok bool, err error) {
	for {
		if s.skipLF && s.start < s.end {
			s.skipLF = false
			if s.buf[s.start] == '\n' {
				s.start++
			}
		}
		if i := lineEnd(s.buf[s.start:s.end]); i >= 0 {
			j := s.start + i
			line = s.buf[s.start:j]
			if s.buf[j] == '\r' {
				s.skipLF = true
			}
			s.start = j + 1
			return line, s.readAt, true, nil
		}
		if s.eof {
			if s.start < s.end {
				line = s.buf[s.start:s.end]
				s.start = s.end
				return line, s.readAt, true, nil
			}
			if s.err != nil {
				return nil, 0, false, s.err
			}
			return nil, 0, false, io.EOF
		}
		if err := s.fill(); err != nil {
			return nil, 0, false, err
		}
	}
}

// lineEnd is the index of the first CR or LF in b, or -1. Streams end
// lines with LF, so it looks for LF first and then for a CR before it.
func lineEnd(b []byte) int {
	i := bytes.IndexByte(b, '\n')
	if i < 0 {
		return bytes.IndexByte(b, '\r')
	}
	if j := bytes.IndexByte(b[:i], '\r'); j >= 0 {
		return j
	}
	return i
}

// fill reads more bytes, compacting or growing the buffer as needed.
func (s *SSEReader) fill() error {
	if s.start > 0 {
		n := copy(s.buf, s.buf[s.start:s.end])
		s.start, s.end = 0, n
	}
	if s.end == len(s.buf) {
		if len(s.buf) >= MaxEventSize {
			return ErrEventTooLarge
		}
		nb := make([]byte, min(2*len(s.buf), MaxEventSize))
		copy(nb, s.buf[:s.end])
		s.buf = nb
	}
	for range 100 {
		n, err := s.r.Read(s.buf[s.end:])
		if n > 0 {
			s.readAt = s.now()
			s.end += n
		}
		if err != nil {
			s.eof = true
			if err != io.EOF {
				s.err = err
			}
			return nil
		}
		if n > 0 {
			return nil
		}
	}
	s.eof = true
	s.err = errcond.Errorf(io.ErrNoProgress, "read stream: multiple Read calls return no data or error")
	return nil
}

var ssePool = sync.Pool{New: func() any { return NewSSEReader(nil, nil) }}

// Reset makes s read a new stream with the same buffer.
func (s *SSEReader) Reset(rd io.Reader, now func() int64) {
	buf := s.buf
	*s = SSEReader{r: rd, now: now, buf: buf, data: s.data[:0]}
	if s.now == nil {
		s.now = func() int64 { return 0 }
	}
}

// StreamResult is what ReadStream saw in one response stream.
type StreamResult struct {
	// Chunks holds the clock time of each content-bearing event.
	Chunks []int64
	// Cumulative holds, per content chunk, the completion_tokens of the
	// usage the chunk carried (vLLM continuous_usage_stats), or is nil
	// when some content chunk carried none.
	Cumulative []int64
	// Usage is the last usage seen.
	Usage *Usage
	// Timings are the last llama.cpp timings seen.
	Timings *Timings
	// Done: "[DONE]" was read; Finished: a finish_reason was seen.
	Done, Finished bool
	// Err is the message of an in-band error; reading stops there.
	Err string
	// ReadErr is a transport error (not io.EOF).
	ReadErr error
	// End is the clock time of the event that ended the stream ([DONE] or
	// the error), or 0 when the stream just ended.
	End int64
	// KeepAlives counts comment lines.
	KeepAlives int
}

// ReadStream reads an OpenAI-compatible event stream to its end, an
// in-band error or "[DONE]". Role-only, usage-only, empty and
// finish-only chunks, comments and "[DONE]" are not content. hint sizes
// the chunk slice.
func ReadStream(sr *SSEReader, hint int) StreamResult {
	res := StreamResult{Chunks: make([]int64, 0, hint)}
	cumOK := true
	for {
		ev, err := sr.Next()
		if err != nil {
			if err != io.EOF {
				res.ReadErr = err
			}
			break
		}
		res.KeepAlives += ev.Comments
		ch, u, hasUsage := parseChunk(ev)
		if ch.Err != "" {
			res.Err, res.End = ch.Err, ev.At
			break
		}
		if hasUsage {
			if res.Usage == nil {
				res.Usage = new(Usage)
			}
			*res.Usage = u
		}
		if ch.Timings != nil {
			res.Timings = ch.Timings
		}
		if ch.Content {
			res.Chunks = append(res.Chunks, ev.At)
			if cumOK && hasUsage {
				res.Cumulative = append(res.Cumulative, u.CompletionTokens)
			} else {
				cumOK = false
			}
		}
		res.Finished = res.Finished || ch.Finish
		if ch.Done {
			res.Done, res.End = true, ev.At
			break
		}
	}
	if !cumOK {
		res.Cumulative = nil
	}
	return res
}

// chunkTokens derives per-chunk token counts from cumulative usage, or nil
// when they do not add up to the final usage.
func (s *StreamResult) chunkTokens() []int64 {
	if len(s.Cumulative) == 0 || len(s.Cumulative) != len(s.Chunks) || s.Usage == nil ||
		s.Cumulative[len(s.Cumulative)-1] != s.Usage.CompletionTokens {
		return nil
	}
	ct := make([]int64, len(s.Cumulative))
	prev := int64(0)
	for i, v := range s.Cumulative {
		ct[i] = v - prev
		if ct[i] < 0 {
			return nil
		}
		prev = v
	}
	return ct
}
