package cli

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestCommandDocsAreCurrent keeps docs/cli (written by `make docs`) in step
// with the commands' help. Run `go test ./cmd/... -update` to rewrite it.
func TestCommandDocsAreCurrent(t *testing.T) {
	want := filepath.Join("..", "..", "..", "..", "docs", "cli")
	got := t.TempDir()
	root := NewRoot(DefaultDeps(&IO{In: bytes.NewReader(nil), Out: &bytes.Buffer{}, ErrOut: &bytes.Buffer{}, Getenv: func(string) string { return "" }}))
	if err := writeDocs(root, got); err != nil {
		t.Fatal(err)
	}
	if *update {
		if err := os.RemoveAll(want); err != nil {
			t.Fatal(err)
		}
		if err := writeDocs(root, want); err != nil {
			t.Fatal(err)
		}
		return
	}
	gen, err := os.ReadDir(got)
	if err != nil {
		t.Fatal(err)
	}
	have, err := os.ReadDir(want)
	if err != nil {
		t.Fatalf("docs/cli missing: run make docs (%v)", err)
	}
	if len(gen) != len(have) {
		t.Errorf("docs/cli has %d files, the commands make %d: run make docs", len(have), len(gen))
	}
	for _, e := range gen {
		g, _ := os.ReadFile(filepath.Join(got, e.Name()))
		h, err := os.ReadFile(filepath.Join(want, e.Name()))
		if err != nil || !bytes.Equal(g, h) {
			t.Errorf("docs/cli/%s is stale: run make docs", e.Name())
		}
	}
}
