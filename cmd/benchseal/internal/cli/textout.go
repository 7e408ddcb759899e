package cli

import (
	"io"
	"unicode/utf8"

	"github.com/benchseal/benchseal/schema"
)

// textOut is what every command writes its standard output through: each
// control character (schema.IsControlRune) other than newline and tab is
// written as a visible escape (schema.EscapeText), so no string a
// publisher put in a bundle (a model name holding an escape sequence that
// hides the lines after it, a carriage return that overwrites a verdict)
// acts on the reader's terminal, whichever field or report carries it.
// Newlines in publisher text are refused where the text is validated
// (manifests, claims and plans hold no control characters). JSON output
// passes unchanged in meaning: encoding/json escapes C0 controls itself and
// the escapes written for the others are JSON escapes of the same
// characters.
type textOut struct {
	w       io.Writer
	partial []byte // the start of a UTF-8 sequence split between writes
}

// Write escapes p and writes it; a multi-byte character split between two
// writes is held until the next write (or Flush) completes it.
func (t *textOut) Write(p []byte) (int, error) {
	n := len(p)
	if len(t.partial) > 0 {
		p = append(t.partial, p...)
		t.partial = nil
	}
	// Hold back an incomplete final UTF-8 sequence (at most 3 bytes).
	for k := 1; k < utf8.UTFMax && k <= len(p); k++ {
		c := p[len(p)-k]
		if c < utf8.RuneSelf {
			break
		}
		if utf8.RuneStart(c) {
			if !utf8.FullRune(p[len(p)-k:]) {
				t.partial = append([]byte(nil), p[len(p)-k:]...)
				p = p[:len(p)-k]
			}
			break
		}
	}
	if len(p) == 0 {
		return n, nil
	}
	s := schema.EscapeText(string(p), true)
	if _, err := io.WriteString(t.w, s); err != nil {
		return 0, err
	}
	return n, nil
}

// Flush writes a held incomplete UTF-8 sequence, escaped.
func (t *textOut) Flush() error {
	if len(t.partial) == 0 {
		return nil
	}
	s := schema.EscapeText(string(t.partial), true)
	t.partial = nil
	_, err := io.WriteString(t.w, s)
	return err
}
