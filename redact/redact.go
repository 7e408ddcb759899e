package redact

import (
	"bytes"
	"regexp"
	"sort"
	"strings"
)

// Mask replaces every credential found.
const Mask = "[REDACTED]"

// Finding is one credential found: its 1-based line and what kind it was
// (never the credential itself).
type Finding struct {
	Line int    `json:"line"`
	Kind string `json:"kind"`
}

// rule finds one kind of credential; the secret is the regexp's last
// submatch. Every match contains one of hints (case variants spelled
// out), so the regexp only runs near them.
type rule struct {
	kind  string
	re    *regexp.Regexp
	hints []string
}

// variants spells a word in lower, upper and title case.
func variants(words ...string) []string {
	var out []string
	for _, w := range words {
		out = append(out, strings.ToLower(w), strings.ToUpper(w), strings.ToUpper(w[:1])+strings.ToLower(w[1:]))
	}
	return out
}

// fieldNames are the key names whose values are credentials: an
// api key of any prefix (OPENAI_API_KEY, x-api-key), and tokens, secrets
// and passwords named as such.
const fieldNames = `(?:[A-Za-z0-9]*[_-])?api[_-]?key|apikey|(?:access|auth|bearer|hf|hugging_?face|openai|github|gh|refresh|id|session)[_-]?token|token|(?:client[_-]?)?secret(?:[_-]?key)?|secret[_-]?access[_-]?key|password|passwd`

// secretValue is a credential's value: at least one character that is
// not a digit, so that numbers are never taken for secrets.
const secretValue = `([A-Za-z0-9._~+/=:-]*[A-Za-z_~+/=:-][A-Za-z0-9._~+/=:-]*)`

var rules = []rule{
	// An Authorization header or field: its whole value.
	{"authorization header", regexp.MustCompile(`(?i)authorization\\?["']?\s*[:=]\s*\\?["']?((?:bearer|basic|token)\s+[^\s"'\\,;]+|[^\s"'\\,;]{8,})`), variants("authorization")},
	// A Bearer token anywhere else.
	{"bearer token", regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{8,})`), variants("bearer")},
	// A credential-named field or variable: "api_key": "…", API_KEY=…,
	// --api-key …, token: … (values of at least 8 characters that are not
	// plain numbers).
	{"credential field", regexp.MustCompile(`(?i)(?:^|[^A-Za-z0-9_-])(?:` + fieldNames + `)\\?["']?\s*[:=]\s*\\?["']?` + secretValue), variants("key", "token", "secret", "passw")},
	{"credential flag", regexp.MustCompile(`(?i)--(?:` + fieldNames + `)\s+["']?` + secretValue), []string{"--"}},
	// Key formats.
	{"sk- key", regexp.MustCompile(`\b(sk-[A-Za-z0-9_-]{16,})`), []string{"sk-"}},
	{"hf_ token", regexp.MustCompile(`\b(hf_[A-Za-z0-9]{20,})`), []string{"hf_"}},
	{"nvapi- key", regexp.MustCompile(`\b(nvapi-[A-Za-z0-9_-]{20,})`), []string{"nvapi-"}},
	{"github token", regexp.MustCompile(`\b((?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,})`), []string{"ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"}},
	{"aws access key", regexp.MustCompile(`\b((?:AKIA|ASIA)[0-9A-Z]{16})\b`), []string{"AKIA", "ASIA"}},
	{"slack token", regexp.MustCompile(`\b(xox[abposr]-[A-Za-z0-9-]{10,})`), []string{"xox"}},
}

// minSecret is the shortest value a credential field must have to be
// redacted: shorter ones ("none", "EMPTY", "-") are placeholders.
const minSecret = 8

// Bytes returns data with every credential replaced by Mask, and where
// they were. data itself is never modified; when nothing is found it is
// returned as is with no findings.
func Bytes(data []byte) ([]byte, []Finding) {
	type span struct {
		start, end int
		kind       string
	}
	var spans []span
	for _, r := range rules {
		for _, w := range windows(data, r.hints) {
			for _, m := range r.re.FindAllSubmatchIndex(data[w[0]:w[1]], -1) {
				s, e := w[0]+m[len(m)-2], w[0]+m[len(m)-1]
				if e == w[1] && w[1] < len(data) {
					// The value may go on past the window: match again
					// from the same start over the rest of the data.
					if mm := r.re.FindSubmatchIndex(data[w[0]+m[0]:]); mm != nil {
						s, e = w[0]+m[0]+mm[len(mm)-2], w[0]+m[0]+mm[len(mm)-1]
					}
				}
				if s < 0 || e-s < minSecret || string(data[s:e]) == Mask {
					continue
				}
				spans = append(spans, span{s, e, r.kind})
			}
		}
	}
	if len(spans) == 0 {
		return data, nil
	}
	sort.Slice(spans, func(i, j int) bool {
		if spans[i].start != spans[j].start {
			return spans[i].start < spans[j].start
		}
		return spans[i].end > spans[j].end
	})
	var out bytes.Buffer
	var found []Finding
	last := 0
	for _, sp := range spans {
		if sp.start < last {
			// Inside a span already masked (a Bearer token inside an
			// Authorization header).
			continue
		}
		out.Write(data[last:sp.start])
		out.WriteString(Mask)
		found = append(found, Finding{Line: 1 + bytes.Count(data[:sp.start], []byte{'\n'}), Kind: sp.kind})
		last = sp.end
	}
	out.Write(data[last:])
	return out.Bytes(), found
}

// window bounds around a hint: a match starts at most before bytes
// before it and, unless it is longer than after, ends within after bytes.
const before, after = 64, 1024

// windows returns the merged [start, end) ranges of data around every
// occurrence of a hint.
func windows(data []byte, hints []string) [][2]int {
	var hits []int
	for _, h := range hints {
		for off := 0; ; {
			i := bytes.Index(data[off:], []byte(h))
			if i < 0 {
				break
			}
			hits = append(hits, off+i)
			off += i + 1
		}
	}
	if len(hits) == 0 {
		return nil
	}
	sort.Ints(hits)
	var out [][2]int
	for _, h := range hits {
		s, e := max(0, h-before), min(len(data), h+after)
		if n := len(out); n > 0 && s <= out[n-1][1] {
			out[n-1][1] = max(out[n-1][1], e)
			continue
		}
		out = append(out, [2]int{s, e})
	}
	return out
}

// String is Bytes for a string.
func String(s string) (string, []Finding) {
	b, f := Bytes([]byte(s))
	return string(b), f
}
