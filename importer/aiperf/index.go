package aiperf

import "github.com/benchseal/benchseal/importer/ingest"

// lineRef locates one checked line of a JSON Lines export.
type lineRef struct {
	off, n, lineNo int
	start          int64
	// startErr is why a raw export line has no start time.
	startErr error
}

// lineIndex is a checked JSON Lines export (profile_export.jsonl or, when
// raw, profile_export_raw.jsonl) as where its lines are.
type lineIndex struct {
	name string
	data []byte
	refs []lineRef
	raw  bool
	// byID maps a raw export's request ids to their line (the last one
	// with the id).
	byID map[string]int
}

// indexLines checks every line of data as profile_export.jsonl (or, when
// raw, profile_export_raw.jsonl) and keeps where each line is.
func indexLines(data []byte, name string, raw bool) (*lineIndex, error) {
	x := &lineIndex{name: name, data: data, raw: raw}
	if raw {
		x.byID = map[string]int{}
	}
	err := ingest.EachLine(data, func(lineNo, off int, b []byte) error {
		ref := lineRef{off: off, n: len(b), lineNo: lineNo}
		if raw {
			l, ok, err := rawLine(name, lineNo, b)
			if !ok {
				return err
			}
			ref.start, ref.startErr = l.start()
			if id := l.Metadata.XRequestID; id != "" {
				x.byID[id] = len(x.refs)
			}
		} else {
			l, ok, err := exportLine(name, lineNo, b)
			if !ok {
				return err
			}
			ref.start, _ = l.start()
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

// bytes returns line i.
func (x *lineIndex) bytes(i int) []byte {
	r := x.refs[i]
	return x.data[r.off : r.off+r.n]
}

// line decodes line i of profile_export.jsonl; Raw aliases the file.
func (x *lineIndex) line(i int) (Line, error) {
	l, _, err := exportLine(x.name, x.refs[i].lineNo, x.bytes(i))
	l.Raw = x.bytes(i)
	return l, err
}

// rawLine decodes line i of profile_export_raw.jsonl.
func (x *lineIndex) rawLine(i int) (RawLine, error) {
	l, _, err := rawLine(x.name, x.refs[i].lineNo, x.bytes(i))
	return l, err
}
