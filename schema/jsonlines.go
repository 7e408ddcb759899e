package schema

import (
	"bufio"
	"bytes"
	"io"
)

// EachJSONLine calls fn with each non-blank line of the JSON Lines input
// r (trimmed of surrounding white space) and its 1-based line number, in
// order, stopping at fn's first error, which it returns unchanged. A
// line longer than maxLine bytes, or a read error, stops the reading:
// scanErr turns it, with the number of the line that could not be read,
// into the error returned. Workload items, prompt files and JSONL traces
// are read this way, each naming its errors its own way.
func EachJSONLine(r io.Reader, maxLine int, fn func(line int, b []byte) error, scanErr func(line int, err error) error) error {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), maxLine)
	line := 0
	for sc.Scan() {
		line++
		b := bytes.TrimSpace(sc.Bytes())
		if len(b) == 0 {
			continue
		}
		if err := fn(line, b); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return scanErr(line+1, err)
	}
	return nil
}
