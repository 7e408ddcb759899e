package redact

import (
	"bytes"
	"regexp"
	"sort"
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
// submatch.
type rule struct {
	kind string
	re   *regexp.Regexp
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
	{"authorization header", regexp.MustCompile(`(?i)authorization\\?["']?\s*[:=]\s*\\?["']?((?:bearer|basic|token)\s+[^\s"'\\,;]+|[^\s"'\\,;]{8,})`)},
	// A Bearer token anywhere else.
	{"bearer token", regexp.MustCompile(`(?i)\bbearer\s+([A-Za-z0-9._~+/=-]{8,})`)},
	// A credential-named field or variable: "api_key": "…", API_KEY=…,
	// --api-key …, token: … (values of at least 8 characters that are not
	// plain numbers).
	{"credential field", regexp.MustCompile(`(?i)(?:^|[^A-Za-z0-9_-])(?:` + fieldNames + `)\\?["']?\s*[:=]\s*\\?["']?` + secretValue)},
	{"credential flag", regexp.MustCompile(`(?i)--(?:` + fieldNames + `)\s+["']?` + secretValue)},
	// Key formats.
	{"sk- key", regexp.MustCompile(`\b(sk-[A-Za-z0-9_-]{16,})`)},
	{"hf_ token", regexp.MustCompile(`\b(hf_[A-Za-z0-9]{20,})`)},
	{"nvapi- key", regexp.MustCompile(`\b(nvapi-[A-Za-z0-9_-]{20,})`)},
	{"github token", regexp.MustCompile(`\b((?:ghp|gho|ghu|ghs|ghr|github_pat)_[A-Za-z0-9_]{20,})`)},
	{"aws access key", regexp.MustCompile(`\b((?:AKIA|ASIA)[0-9A-Z]{16})\b`)},
	{"slack token", regexp.MustCompile(`\b(xox[abposr]-[A-Za-z0-9-]{10,})`)},
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
		for _, m := range r.re.FindAllSubmatchIndex(data, -1) {
			s, e := m[len(m)-2], m[len(m)-1]
			if s < 0 || e-s < minSecret || string(data[s:e]) == Mask {
				continue
			}
			spans = append(spans, span{s, e, r.kind})
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

// String is Bytes for a string.
func String(s string) (string, []Finding) {
	b, f := Bytes([]byte(s))
	return string(b), f
}
