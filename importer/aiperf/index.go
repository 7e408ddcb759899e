package aiperf

import (
	"bytes"
	"encoding/json"

	"github.com/benchseal/benchseal/importer/ingest"
)

// lineRef locates one checked line of a JSON Lines export: 16 bytes a
// line (files are at most ingest.MaxFileSize, so offsets and line numbers
// fit in 32 bits).
type lineRef struct {
	start       int64
	off, lineNo uint32
}

// lineIndex is a checked JSON Lines export (profile_export.jsonl or, when
// raw, profile_export_raw.jsonl) as where its lines are.
type lineIndex struct {
	name string
	data []byte
	refs []lineRef
	raw  bool
	// byID maps a raw export's request ids to their line in refs (the
	// last one with the id); refs stay in file order when byID is used.
	byID map[string]int
	// startErr is why the first raw export line without a start time has
	// none, on line startErrLine.
	startErr     error
	startErrLine int
}

// indexLines checks every line of data as profile_export.jsonl (or, when
// raw, profile_export_raw.jsonl) and keeps where each line is and when it
// started. Raw export lines are decoded whole. Lines of
// profile_export.jsonl are decoded whole when full is set; otherwise only
// what says whether a line is a record and when it started is decoded
// (exportHead), and the rest is checked when the record is built.
func indexLines(data []byte, name string, raw, full bool) (*lineIndex, error) {
	if len(data) > ingest.MaxFileSize {
		return nil, ingest.Errorf(name, "larger than %d bytes", ingest.MaxFileSize)
	}
	x := &lineIndex{name: name, data: data, raw: raw}
	if raw {
		x.byID = map[string]int{}
	}
	err := ingest.EachLine(data, func(lineNo, off int, b []byte) error {
		ref := lineRef{off: uint32(off), lineNo: uint32(lineNo)}
		switch {
		case raw:
			l, ok, err := rawLine(name, lineNo, b)
			if !ok {
				return err
			}
			var err2 error
			if ref.start, err2 = l.Metadata.start(); err2 != nil && x.startErr == nil {
				x.startErr, x.startErrLine = err2, lineNo
			}
			if id := l.Metadata.XRequestID; id != "" {
				x.byID[id] = len(x.refs)
			}
		case full:
			l, ok, err := exportLine(name, lineNo, b)
			if !ok {
				return err
			}
			ref.start, _ = l.Metadata.start()
		default:
			start, ok, err := exportHead(name, lineNo, b)
			if !ok {
				return err
			}
			ref.start = start
		}
		x.refs = append(x.refs, ref)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(x.refs) == 0 {
		return nil, ingest.Errorf(name, "no records")
	}
	return x, nil
}

// present records whether a JSON value is there and not null, keeping
// nothing of it.
type present bool

// UnmarshalJSON accepts any value.
func (p *present) UnmarshalJSON(b []byte) error {
	*p = string(b) != "null"
	return nil
}

// lineHead is what the index decodes of a profile_export.jsonl line: whether
// it is a record (metrics or error) and when it started.
type lineHead struct {
	Metadata startTimes `json:"metadata"`
	Metrics  present    `json:"metrics"`
	Error    present    `json:"error"`
}

// exportHead returns when line lineNo of profile_export.jsonl started,
// decoding only its head; ok is false for a blank line. A line whose head
// does not pass is decoded whole by exportLine, so that it fails (or, in
// the rare case json.Unmarshal rejects what ingest.DecodeJSONLine accepts,
// passes) exactly as there.
func exportHead(name string, lineNo int, raw []byte) (start int64, ok bool, err error) {
	var h lineHead
	if json.Unmarshal(raw, &h) == nil && (h.Metrics || h.Error) {
		if start, err := h.Metadata.start(); err == nil {
			return start, true, nil
		}
	}
	l, ok, err := exportLine(name, lineNo, raw)
	if !ok {
		return 0, false, err
	}
	start, _ = l.Metadata.start()
	return start, true, nil
}

// bytes returns line i, as ingest.EachLine passed it.
func (x *lineIndex) bytes(i int) []byte {
	b := x.data[x.refs[i].off:]
	if j := bytes.IndexByte(b, '\n'); j >= 0 {
		b = b[:j]
	}
	return bytes.TrimSuffix(b, []byte{'\r'})
}

// line decodes line i of profile_export.jsonl; Raw aliases the file.
func (x *lineIndex) line(i int) (Line, error) {
	l, _, err := exportLine(x.name, int(x.refs[i].lineNo), x.bytes(i))
	l.Raw = x.bytes(i)
	return l, err
}

// rawLine decodes line i of profile_export_raw.jsonl.
func (x *lineIndex) rawLine(i int) (RawLine, error) {
	l, _, err := rawLine(x.name, int(x.refs[i].lineNo), x.bytes(i))
	return l, err
}
