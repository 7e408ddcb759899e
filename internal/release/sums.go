package release

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// File is one release file with its digest.
type File struct {
	// Name is the file's base name, as SHA256SUMS and the provenance's
	// subjects name it.
	Name   string
	SHA256 string
}

// HashFiles returns each path's base name and SHA-256, sorted by name.
// Two paths with one base name are an error: SHA256SUMS could not tell
// them apart.
func HashFiles(paths []string) ([]File, error) {
	var out []File
	for _, p := range paths {
		f, err := os.Open(p)
		if err != nil {
			return nil, fmt.Errorf("hash release file: %w", err)
		}
		h := sha256.New()
		_, err = io.Copy(h, f)
		f.Close()
		if err != nil {
			return nil, fmt.Errorf("hash %s: %w", p, err)
		}
		out = append(out, File{Name: filepath.Base(p), SHA256: hex.EncodeToString(h.Sum(nil))})
	}
	slices.SortFunc(out, func(a, b File) int { return strings.Compare(a.Name, b.Name) })
	for i := 1; i < len(out); i++ {
		if out[i].Name == out[i-1].Name {
			return nil, fmt.Errorf("hash release files: two files are named %s", out[i].Name)
		}
	}
	return out, nil
}

// SHA256SUMS formats files as sha256sum(1) writes and `sha256sum -c`
// reads them: "<hex>  <name>\n" per file, in the given (sorted) order.
func SHA256SUMS(files []File) []byte {
	var b strings.Builder
	for _, f := range files {
		fmt.Fprintf(&b, "%s  %s\n", f.SHA256, f.Name)
	}
	return []byte(b.String())
}
