package ingest

import "bytes"

// pythonLiterals are the non-JSON numbers Python's json.dumps writes for
// float('inf'), float('-inf') and float('nan').
var pythonLiterals = [][]byte{[]byte("-Infinity"), []byte("Infinity"), []byte("NaN")}

// QuotePythonLiterals returns data with every bare Infinity, -Infinity and
// NaN token outside a string turned into the string "Infinity",
// "-Infinity" or "NaN", which RawNumber returns as their text and the
// number parsers reject as not finite. It is for files written by Python's
// json.dumps (SGLang's bench_serving writes its default request rate
// float('inf') as a bare Infinity); other bytes, and data without such
// tokens, are returned unchanged. A token is only rewritten where a JSON
// value may start and when a delimiter or the end follows it, so "NaNa"
// stays a syntax error.
func QuotePythonLiterals(data []byte) []byte {
	if !bytes.Contains(data, []byte("Infinity")) && !bytes.Contains(data, []byte("NaN")) {
		return data
	}
	var out []byte
	inString, escaped := false, false
	last := 0
	for i := 0; i < len(data); i++ {
		c := data[i]
		if inString {
			switch {
			case escaped:
				escaped = false
			case c == '\\':
				escaped = true
			case c == '"':
				inString = false
			}
			continue
		}
		if c == '"' {
			inString = true
			continue
		}
		if c != 'I' && c != 'N' && c != '-' {
			continue
		}
		for _, lit := range pythonLiterals {
			if !bytes.HasPrefix(data[i:], lit) || !valueStart(data[:i]) || !valueEnd(data[i+len(lit):]) {
				continue
			}
			out = append(out, data[last:i]...)
			out = append(out, '"')
			out = append(out, lit...)
			out = append(out, '"')
			i += len(lit) - 1
			last = i + 1
			break
		}
	}
	if out == nil {
		return data
	}
	return append(out, data[last:]...)
}

// valueStart reports whether a JSON value may begin after before: it ends,
// ignoring white space, in ':', ',' or '[' (or is empty).
func valueStart(before []byte) bool {
	b := bytes.TrimRight(before, " \t\r\n")
	return len(b) == 0 || bytes.ContainsAny(b[len(b)-1:], ":,[")
}

// valueEnd reports whether after starts, ignoring white space, with a
// delimiter that may follow a JSON value (or is empty).
func valueEnd(after []byte) bool {
	a := bytes.TrimLeft(after, " \t\r\n")
	return len(a) == 0 || bytes.ContainsAny(a[:1], ",]}")
}
