package schema

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestStagedDirPublish(t *testing.T) {
	tests := []struct {
		name    string
		setup   func(dest string) // what is at dest before Publish
		emptyOK bool
		wantErr string
	}{
		{"absent", func(string) {}, false, ""},
		{"absent, empty allowed", func(string) {}, true, ""},
		{"empty dir replaced", func(d string) { os.Mkdir(d, 0o755) }, true, ""},
		{"empty dir refused", func(d string) { os.Mkdir(d, 0o755) }, false, "already exists"},
		{"non-empty dir", func(d string) {
			os.Mkdir(d, 0o755)
			os.WriteFile(filepath.Join(d, "keep"), []byte("old"), 0o644)
		}, true, "not empty"},
		{"file", func(d string) { os.WriteFile(d, []byte("old"), 0o644) }, true, "already exists"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			parent := t.TempDir()
			dest := filepath.Join(parent, "out")
			sd, err := NewStagedDir(dest)
			if err != nil {
				t.Fatal(err)
			}
			if err := sd.WriteFile("a/b.txt", []byte("new")); err != nil {
				t.Fatal(err)
			}
			tt.setup(dest) // after staging began, as a racing writer would
			before := snapshot(t, parent)
			err = sd.Publish(tt.emptyOK)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) || !strings.Contains(err.Error(), dest) {
					t.Fatalf("Publish = %v, want an error naming %s and saying %q", err, dest, tt.wantErr)
				}
				// The destination is as it was and the staging is gone.
				after := snapshot(t, parent)
				for k := range before {
					if strings.HasPrefix(k, filepath.Base(sd.Path())) {
						delete(before, k)
					}
				}
				if !equalMaps(before, after) {
					t.Fatalf("failed Publish changed the parent:\nbefore %v\nafter  %v", before, after)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			got, err := os.ReadFile(filepath.Join(dest, "a", "b.txt"))
			if err != nil || string(got) != "new" {
				t.Fatalf("published file = %q, %v", got, err)
			}
			if ents, _ := os.ReadDir(parent); len(ents) != 1 {
				t.Fatalf("parent holds %d entries after Publish, want only out", len(ents))
			}
			sd.Discard() // after Publish: must not remove the published directory
			if _, err := os.Stat(dest); err != nil {
				t.Fatalf("Discard after Publish removed the output: %v", err)
			}
			if err := sd.Publish(true); err == nil {
				t.Fatal("second Publish succeeded")
			}
		})
	}
}

func TestStagedDirDiscardLeavesNothing(t *testing.T) {
	parent := t.TempDir()
	sd, err := NewStagedDir(filepath.Join(parent, "out"))
	if err != nil {
		t.Fatal(err)
	}
	if err := sd.WriteFile("x", []byte("1")); err != nil {
		t.Fatal(err)
	}
	sd.Discard()
	if ents, _ := os.ReadDir(parent); len(ents) != 0 {
		t.Fatalf("Discard left %d entries", len(ents))
	}
}

// snapshot maps each entry name under dir (recursively) to its content
// ("<dir>" for directories).
func snapshot(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
		if err != nil || p == dir {
			return err
		}
		rel, _ := filepath.Rel(dir, p)
		if e.IsDir() {
			out[rel] = "<dir>"
			return nil
		}
		b, _ := os.ReadFile(p)
		out[rel] = string(b)
		return nil
	})
	return out
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
