package importer

import (
	"context"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/importer/internal/importtest"
	"github.com/benchseal/benchseal/schema"
)

// A GenAI-Perf summary records the command's headers in input_config; a
// real one carried the user's API key there. Nothing written may hold it.
func TestImportRedactsCredentials(t *testing.T) {
	const key = "sk-proj-Zx9TESTKEYdoNotUse0123456789abcdef"
	files := importtest.Load(t, "genai-perf", fixtures["genai-perf"]...)
	files[1] = ingest.File{Name: files[1].Name, Data: []byte(strings.Replace(string(files[1].Data), "{",
		`{"input_config": {"endpoint": {"type": "chat", "streaming": true}, "input": {"header": ["Authorization: Bearer `+key+`"]}},`, 1))}
	dest := filepath.Join(t.TempDir(), "run")
	res, err := Import(context.Background(), "genai-perf", files, dest, Options{})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Warnings) != 1 || !strings.Contains(res.Warnings[0], "line 1 (authorization header)") || strings.Contains(res.Warnings[0], key) {
		t.Errorf("warnings %q", res.Warnings)
	}
	filepath.WalkDir(dest, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, _ := os.ReadFile(p)
		if strings.Contains(string(b), key) || strings.Contains(string(b), "Zx9TESTKEY") {
			t.Errorf("%s holds the key", p)
		}
		return nil
	})
	rd, err := schema.OpenRunDir(dest)
	if err != nil {
		t.Fatal(err)
	}
	var got *schema.SourceFile
	for i, f := range rd.Manifest().Source.Files {
		if f.Name == files[1].Name {
			got = &rd.Manifest().Source.Files[i]
		}
	}
	if got == nil || got.OriginalSHA256 == "" || got.OriginalSHA256 == got.SHA256 || len(got.Redactions) != 1 {
		t.Fatalf("source file %+v: want the original's digest and one redaction", got)
	}
	if err := schema.ValidateRunDocuments(dest, 0); err != nil {
		t.Fatalf("redacted run does not validate: %v", err)
	}
}
