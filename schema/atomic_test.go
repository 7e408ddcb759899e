package schema

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestWriteFileAtomicReplacesWithTheGivenModeAndLeavesNoTemporaries(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "key")
	if err := os.WriteFile(p, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFileAtomic(p, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(p)
	if err != nil || string(b) != "secret" {
		t.Fatalf("content %q, %v", b, err)
	}
	st, err := os.Stat(p)
	if err != nil {
		t.Fatal(err)
	}
	if st.Mode().Perm() != 0o600 {
		t.Errorf("mode %v, want 0600", st.Mode().Perm())
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the file", len(entries))
	}
	err = WriteFileAtomic(filepath.Join(dir, "missing", "f"), []byte("x"), 0o644)
	if err == nil || strings.Contains(err.Error(), ".tmp-") || !strings.Contains(err.Error(), filepath.Join("missing", "f")) {
		t.Errorf("writing into a missing directory: err = %v, want one naming the file asked for", err)
	}
}
