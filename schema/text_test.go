package schema_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// TestControlCharactersInDocumentsAreRefused: manifest and claims strings
// (keys and values) hold no control characters (a model
// name carrying "\nVERIFIED\n" and ESC[8m rewrote a rejected verdict on a
// terminal); the error names the field. engine.server (a server's reply,
// never printed) may keep its line breaks, nothing else.
func TestControlCharactersInDocumentsAreRefused(t *testing.T) {
	cases := []struct {
		name  string
		file  string
		edit  func(m map[string]any)
		field string // "" = valid
	}{
		{"plain unicode text", schema.ManifestFile, func(m map[string]any) {
			m["model"].(map[string]any)["name"] = "décodeur · 7b × H100 — 模型"
		}, ""},
		{"escape sequence in the model name", schema.ManifestFile, func(m map[string]any) {
			m["model"].(map[string]any)["name"] = "m\x1b[8m"
		}, `"model.name"`},
		{"newline in the title", schema.ManifestFile, func(m map[string]any) { m["title"] = "t\nVERIFIED" }, `"title"`},
		{"carriage return in a command line", schema.ManifestFile, func(m map[string]any) {
			m["client"].(map[string]any)["command_line"] = []any{"x\rVERIFIED"}
		}, `"client.command_line[0]"`},
		{"C1 control in the run id", schema.ManifestFile, func(m map[string]any) { m["run_id"] = "r\u009b2J" }, `"run_id"`},
		{"bidi override in hardware", schema.ManifestFile, func(m map[string]any) {
			m["hardware"].(map[string]any)["accelerator"] = "\u202eH100"
		}, `"hardware.accelerator"`},
		{"control character in a key", schema.ManifestFile, func(m map[string]any) {
			m["engine"].(map[string]any)["server"] = map[string]any{"/v1/\x1bmodels": "{}"}
		}, "key"},
		{"a server reply keeps its line breaks", schema.ManifestFile, func(m map[string]any) {
			m["engine"].(map[string]any)["server"] = map[string]any{"/v1/models": "{\n\t\"data\": []\r\n}\n"}
		}, ""},
		{"a server reply holds no escape sequence", schema.ManifestFile, func(m map[string]any) {
			m["engine"].(map[string]any)["server"] = map[string]any{"/v1/models": "{}\x1b[8m"}
		}, `"engine.server./v1/models"`},
		{"claims", schema.ClaimsFile, func(m map[string]any) { m["definitions"] = "benchseal\u2066" }, `"definitions"`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			dir := baseRun(t, false)
			p := filepath.Join(dir, c.file)
			if c.file == schema.ClaimsFile {
				write(t, p, `{"schema":"benchseal/claims/v1","definitions":"benchseal","tolerance":1e-9,"points":[]}`)
			}
			editJSON(t, p, c.edit)
			err := schema.ValidateRunDocuments(dir, 10)
			if c.field == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("accepted")
			}
			if !strings.Contains(err.Error(), c.field) || !strings.Contains(err.Error(), "control character U+") {
				t.Fatalf("error %q does not name %s and the character", err, c.field)
			}
		})
	}
}

// TestEscapeText pins the one quoting rule of text output.
func TestEscapeText(t *testing.T) {
	for _, c := range []struct {
		in        string
		keepLines bool
		want      string
	}{
		{"plain · × ü", false, "plain · × ü"},
		{"a\nb\tc\rd\x1b[0m", false, `a\nb\tc\rd\u001b[0m`},
		{"a\nb\tc\rd\x1b[0m", true, "a\nb\tc\\rd\\u001b[0m"},
		{"\u202e\u2066\u200f\u061c\u2028\u0085\x7f", false, `\u202e\u2066\u200f\u061c\u2028\u0085\u007f`},
		{"bad \xff", false, `bad \xff`},
		{`back\slash`, false, `back\slash`},
	} {
		if got := schema.EscapeText(c.in, c.keepLines); got != c.want {
			t.Errorf("EscapeText(%q, %v) = %q, want %q", c.in, c.keepLines, got, c.want)
		}
	}
}

// Attachment names that cannot be written side by
// side (a file that is also a folder, names equal but for case) or that
// hold a control character are refused.
func TestCheckAttachmentNames(t *testing.T) {
	for _, c := range []struct {
		names []string
		bad   string
	}{
		{[]string{"a/b", "a/c", "ab", "b/a"}, ""},
		{[]string{"a", "a/b"}, `"a" is a file and also the folder of attachment "a/b"`},
		{[]string{"x/A", "x/a/b"}, `"x/A" is a file and also the folder of attachment "x/a/b"`},
		{[]string{"A", "a"}, `"A" and "a" differ only in letter case`},
		{[]string{"log\x1b[8m.txt"}, "control character U+001B"},
	} {
		err := schema.CheckAttachmentNames(c.names)
		switch {
		case c.bad == "" && err != nil:
			t.Errorf("%q: %v", c.names, err)
		case c.bad != "" && (err == nil || !strings.Contains(err.Error(), c.bad)):
			t.Errorf("%q: error %v, want %q", c.names, err, c.bad)
		}
	}
}

// A run directory's manifest.json or records file that
// is a symbolic link is refused, as attachments are.
func TestRunDirRefusesSymlinkedFiles(t *testing.T) {
	for _, name := range []string{schema.ManifestFile, schema.RecordsFile} {
		t.Run(name, func(t *testing.T) {
			dir := baseRun(t, false)
			p := filepath.Join(dir, name)
			moved := filepath.Join(t.TempDir(), name)
			if err := os.Rename(p, moved); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(moved, p); err != nil {
				t.Fatal(err)
			}
			err := schema.ValidateRunDocuments(dir, 10)
			if err == nil || !strings.Contains(err.Error(), name+" is a symbolic link") {
				t.Fatalf("err = %v, want %s refused as a symbolic link", err, name)
			}
		})
	}
}
