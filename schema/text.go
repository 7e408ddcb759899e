package schema

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// IsControlRune reports whether r changes how a terminal or text viewer
// shows the text around it rather than being shown itself: the C0 controls
// (U+0000 to U+001F, tab and newline included), DEL, the C1 controls
// (U+0080 to U+009F), the line and paragraph separators U+2028 and U+2029,
// and the bidirectional formatting characters (U+061C, U+200E, U+200F,
// U+202A to U+202E, U+2066 to U+2069). A publisher's string holding one
// could rewrite a verdict on screen (an escape sequence that hides the
// lines after it, a newline followed by "VERIFIED", text reordered
// right to left), so strings of manifests, claims and plans may not hold
// them (CheckText) and text output escapes them (EscapeText).
func IsControlRune(r rune) bool {
	switch {
	case r < 0x20, r >= 0x7f && r <= 0x9f:
		return true
	case r == 0x2028, r == 0x2029, r == 0x061c, r == 0x200e, r == 0x200f:
		return true
	case r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
		return true
	}
	return false
}

// CheckText returns an error naming the first control character
// (IsControlRune) in s, or nil.
func CheckText(s string) error {
	for i, r := range s {
		if IsControlRune(r) {
			return fmt.Errorf("control character U+%04X at byte %d (text a terminal would act on instead of showing it)", r, i)
		}
	}
	return nil
}

// EscapeText is the one quoting rule for publisher text in text output:
// every control character (IsControlRune) becomes a visible escape (\n,
// \t, \r or \uXXXX, which JSON reads as the same character) and each
// byte of invalid UTF-8 becomes \xNN; other text is unchanged. keepLines
// keeps newlines and tabs as they are (for whole reports, whose own lines
// and columns they are).
func EscapeText(s string, keepLines bool) string {
	i := 0
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		if escapedRune(r, n, keepLines) {
			break
		}
		i += n
	}
	if i == len(s) {
		return s
	}
	var b strings.Builder
	b.WriteString(s[:i])
	for i < len(s) {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case !escapedRune(r, n, keepLines):
			b.WriteString(s[i : i+n])
		case r == utf8.RuneError && n == 1:
			fmt.Fprintf(&b, `\x%02x`, s[i])
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\r':
			b.WriteString(`\r`)
		default:
			fmt.Fprintf(&b, `\u%04x`, r)
		}
		i += n
	}
	return b.String()
}

// escapedRune reports whether EscapeText escapes the rune r of n bytes.
func escapedRune(r rune, n int, keepLines bool) bool {
	if r == utf8.RuneError && n == 1 {
		return true
	}
	if keepLines && (r == '\n' || r == '\t') {
		return false
	}
	return IsControlRune(r)
}

// CheckAttachmentNames checks the attachment paths of a run (relative to
// attachments/, slash-separated) for names that cannot be shown or cannot
// be written side by side to a file system: a control character
// (IsControlRune), two names equal but for letter case (one overwrites the
// other on a case-insensitive file system), or a name that is a folder of
// another ("a" and "a/b": one of them cannot be created). The error names
// the first such name.
func CheckAttachmentNames(names []string) error {
	folded := make(map[string]string, len(names))
	for _, n := range names {
		if err := CheckText(n); err != nil {
			return fmt.Errorf("attachment %q: %w", n, err)
		}
		k := strings.ToLower(strings.ToUpper(n))
		if prev, dup := folded[k]; dup {
			return fmt.Errorf("attachments %q and %q differ only in letter case: one would overwrite the other on a case-insensitive file system", prev, n)
		}
		folded[k] = n
	}
	for k, n := range folded {
		for i := 0; i < len(k); i++ {
			if k[i] != '/' {
				continue
			}
			if dir, ok := folded[k[:i]]; ok {
				return fmt.Errorf("attachment %q is a file and also the folder of attachment %q: both cannot be written", dir, n)
			}
		}
	}
	return nil
}
