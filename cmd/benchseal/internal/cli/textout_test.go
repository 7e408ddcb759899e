package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/schema"
)

// rawControls lists the control characters (other than newline and tab)
// in s, quoted, or "" when there are none.
func rawControls(s string) string {
	var found []string
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && n == 1:
			found = append(found, fmt.Sprintf("byte 0x%02x at %d", s[i], i))
		case schema.IsControlRune(r) && r != '\n' && r != '\t':
			found = append(found, fmt.Sprintf("%U at %d", r, i))
		}
		i += n
	}
	return strings.Join(found, ", ")
}

// TestTextOutputNeverCarriesPublisherControls: a bundle whose manifest
// strings hold an escape sequence that conceals the lines after it, a
// carriage return, a forged "VERIFIED" line and a right-to-left override
// (a REJECTED bundle showed VERIFIED on a terminal).
// No text output of verify, inspect, replay (text and markdown), compare
// or decide may carry a raw control character.
func TestTextOutputNeverCarriesPublisherControls(t *testing.T) {
	dir := t.TempDir()
	p := artifacttest.PackRun(t, filepath.Join(dir, "b"), artifacttest.RunOptions{})
	b, err := artifact.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	rc, err := b.OpenLayer(b.Layers()[0])
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(rc)
	rc.Close()
	b.Close()
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatal(err)
	}
	evil := "model\x1b[8m\rVERIFIED\n\u202egnp.exe\u0085\x7f"
	m["title"] = evil
	m["model"].(map[string]any)["name"] = evil
	data, err := json.MarshalIndent(m, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	artifacttest.ReplaceLayer(t, p, 0, data, nil)
	q := filepath.Join(dir, "c")
	if err := os.CopyFS(q, os.DirFS(p)); err != nil {
		t.Fatal(err)
	}
	for i, args := range [][]string{
		{"verify", p, "--allow-unsigned"},
		{"verify", p, "--allow-unsigned", "--all-checks"},
		{"inspect", p},
		{"replay", p},
		{"replay", p, "--output", "markdown"},
		{"compare", p, q, "--allow-unsigned"},
		{"decide", p, q, "--allow-unsigned"},
	} {
		t.Run(fmt.Sprint(i, args[0]), func(t *testing.T) {
			code, out, errOut := runArgs(t, nil, args...)
			if c := rawControls(out + errOut); c != "" {
				t.Fatalf("exit %d: output carries raw control characters %q:\nstdout:\n%q\nstderr:\n%q", code, c, out, errOut)
			}
			if code == ExitOK {
				t.Fatalf("exit 0 for a bundle whose manifest holds control characters:\n%s", out)
			}
		})
	}
}

// TestTextOutEscapesControlCharacters: textOut escapes every control
// character but newline and tab, also a multi-byte one split between two
// writes, and leaves other text byte for byte.
func TestTextOutEscapesControlCharacters(t *testing.T) {
	cases := []struct {
		writes []string
		want   string
	}{
		{[]string{"plain text\n\tcolumn · × ünïcode\n"}, "plain text\n\tcolumn · × ünïcode\n"},
		{[]string{"a\x1b[8mb"}, `a\u001b[8mb`},
		{[]string{"over\rwrite"}, `over\rwrite`},
		{[]string{"bidi \u202e", "x\u2066"}, `bidi \u202ex\u2066`},
		{[]string{"c1 \u0085 del \x7f nul \x00"}, `c1 \u0085 del \u007f nul \u0000`},
		{[]string{"split \xe2\x80", "\xae here"}, `split \u202e here`},
		{[]string{"split \xc2", "\x9b ok"}, `split \u009b ok`},
		{[]string{"kept ×", " ok"}, "kept × ok"},
		{[]string{"bad \xff byte"}, `bad \xff byte`},
		{[]string{"cut at the end \xe2\x80"}, `cut at the end \xe2\x80`},
		{[]string{`{"a":"x\u001b"}`}, `{"a":"x\u001b"}`},
	}
	for _, c := range cases {
		var buf bytes.Buffer
		w := &textOut{w: &buf}
		for _, s := range c.writes {
			n, err := w.Write([]byte(s))
			if err != nil || n != len(s) {
				t.Fatalf("Write(%q) = %d, %v", s, n, err)
			}
		}
		if err := w.Flush(); err != nil {
			t.Fatal(err)
		}
		if buf.String() != c.want {
			t.Errorf("%q: got %q, want %q", c.writes, buf.String(), c.want)
		}
	}
	// JSON keeps its meaning: the escapes are JSON escapes of the same
	// characters.
	in, _ := json.Marshal(map[string]string{"k": "a\u202eb\u0085c\x7f"})
	var buf bytes.Buffer
	w := &textOut{w: &buf}
	w.Write(in)
	var got map[string]string
	if err := json.Unmarshal(buf.Bytes(), &got); err != nil || got["k"] != "a\u202eb\u0085c\x7f" {
		t.Fatalf("JSON through textOut: %q -> %q (%v)", in, buf.String(), err)
	}
}
