package importer

import (
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/importer/internal/importtest"
)

// TestEveryExternalCheckRowIsTested: every row of docs/importers.md's
// external-check table that states counts is named (as a Go string
// literal) by an importer test, which checks the row against the import
// (importtest.WantDocRow); the table then cannot state a count nobody
// checks. Rows without counts (shape-only, reference-only) are exempt.
func TestEveryExternalCheckRowIsTested(t *testing.T) {
	var src strings.Builder
	root := filepath.Join(importtest.Root(), "importer")
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(p, "_test.go") || strings.HasSuffix(p, "docrows_test.go") {
			return err
		}
		b, err := os.ReadFile(p)
		src.Write(b)
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	rows := importtest.DocRows(t)
	if len(rows) < 10 {
		t.Fatalf("%d rows read from %s: table not found", len(rows), importtest.DocsFile)
	}
	for _, r := range rows {
		if !r.Numeric {
			continue
		}
		if !strings.Contains(src.String(), strconv.Quote(r.Fixture)) && !strings.Contains(src.String(), `"`+r.Fixture+`"`) {
			t.Errorf("%s: row %q states counts that no importer test checks (importtest.WantDocRow)", importtest.DocsFile, r.Fixture)
		}
	}
}
