package energy

import (
	"bytes"
	"slices"
	"strconv"
	"strings"
)

// counterLiterals returns the sample values of the families named in
// metrics exactly as the text states them, keyed by seriesKey(name,
// labels): the Prometheus text parser gives every value as a float64,
// which above 2^53 is no longer the exporter's integer, while a DCGM
// counter is an integer number of mJ that a long-running driver may carry
// near 2^62. A line this reader cannot follow is left out (the text
// parser, which read the same bytes, has the final word on the format):
// its value is then the float64's.
func counterLiterals(b []byte, metrics map[string]bool) map[string]string {
	out := map[string]string{}
	for len(b) > 0 {
		var line []byte
		if i := bytes.IndexByte(b, '\n'); i >= 0 {
			line, b = b[:i], b[i+1:]
		} else {
			line, b = b, nil
		}
		line = bytes.TrimLeft(line, " \t")
		if len(line) == 0 || line[0] == '#' {
			continue
		}
		n := 0
		for n < len(line) && line[n] != '{' && line[n] != ' ' && line[n] != '\t' {
			n++
		}
		name := string(line[:n])
		if !metrics[name] {
			continue
		}
		rest := line[n:]
		labels := map[string]string{}
		if len(rest) > 0 && rest[0] == '{' {
			var ok bool
			if labels, rest, ok = labelBlock(rest[1:]); !ok {
				continue
			}
		}
		fields := strings.Fields(string(rest))
		if len(fields) == 0 {
			continue
		}
		out[seriesKey(name, labels)] = fields[0]
	}
	return out
}

// labelBlock reads `name="value",…}` (the opening brace already read),
// with the text format's escapes \\, \" and \n in values.
func labelBlock(b []byte) (map[string]string, []byte, bool) {
	labels := map[string]string{}
	for {
		b = bytes.TrimLeft(b, " \t")
		if len(b) > 0 && b[0] == '}' {
			return labels, b[1:], true
		}
		eq := bytes.IndexByte(b, '=')
		if eq <= 0 {
			return nil, nil, false
		}
		key := string(bytes.TrimSpace(b[:eq]))
		b = bytes.TrimLeft(b[eq+1:], " \t")
		if len(b) == 0 || b[0] != '"' {
			return nil, nil, false
		}
		var v strings.Builder
		i := 1
		for ; i < len(b) && b[i] != '"'; i++ {
			if b[i] == '\\' && i+1 < len(b) {
				i++
				switch b[i] {
				case 'n':
					v.WriteByte('\n')
				default:
					v.WriteByte(b[i])
				}
				continue
			}
			v.WriteByte(b[i])
		}
		if i >= len(b) {
			return nil, nil, false
		}
		labels[key] = v.String()
		b = bytes.TrimLeft(b[i+1:], " \t")
		if len(b) > 0 && b[0] == ',' {
			b = b[1:]
		}
	}
}

// seriesKey names one series of a family by its sorted label pairs.
func seriesKey(name string, labels map[string]string) string {
	pairs := make([]string, 0, len(labels))
	for k, v := range labels {
		pairs = append(pairs, k+"\xfe"+v)
	}
	slices.Sort(pairs)
	return name + "\xff" + strings.Join(pairs, "\xff")
}

// exactCounter parses lit as a decimal integer (digits only, an optional
// leading +): ok is false for any other spelling (a float, an exponent),
// or beyond 2^64 − 1.
func exactCounter(lit string) (uint64, bool) {
	lit = strings.TrimPrefix(lit, "+")
	if lit == "" {
		return 0, false
	}
	for i := 0; i < len(lit); i++ {
		if lit[i] < '0' || lit[i] > '9' {
			return 0, false
		}
	}
	v, err := strconv.ParseUint(lit, 10, 64)
	return v, err == nil
}
