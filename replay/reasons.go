package replay

import (
	"slices"
	"strings"
)

// JoinReasons joins null reasons, each clause once: a and b are lists of
// clauses separated by "; " (outside parentheses, so a field's "how" text
// that holds "; " stays one clause); the clauses of b not already in a are
// appended in order. Every place that combines reasons uses it, so a cause
// reached by two paths is stated once.
func JoinReasons(a, b string) string {
	out := reasonClauses(a)
	for _, c := range reasonClauses(b) {
		if !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	return strings.Join(out, "; ")
}

// reasonClauses splits a reason at "; " outside parentheses, dropping
// empty and repeated clauses.
func reasonClauses(s string) []string {
	var out []string
	add := func(c string) {
		if c = strings.TrimSpace(c); c != "" && !slices.Contains(out, c) {
			out = append(out, c)
		}
	}
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case '(':
			depth++
		case ')':
			if depth > 0 {
				depth--
			}
		case ';':
			if depth == 0 && i+1 < len(s) && s[i+1] == ' ' {
				add(s[start:i])
				start = i + 2
				i++
			}
		}
	}
	add(s[start:])
	return out
}
