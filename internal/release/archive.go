package release

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"time"
)

// Entry is one file of an archive: Name is its path inside the archive
// (slash-separated, no leading slash), Source the file on disk it is
// read from. Executable entries get mode 0755, others 0644.
type Entry struct {
	Name       string
	Source     string
	Executable bool
}

// checkEntries rejects names that unpack outside the archive's directory
// or twice, and returns the entries sorted by name: the order of the
// archive never depends on the order of the arguments.
func checkEntries(entries []Entry) ([]Entry, error) {
	out := slices.Clone(entries)
	slices.SortFunc(out, func(a, b Entry) int { return strings.Compare(a.Name, b.Name) })
	for i, e := range out {
		if e.Name == "" || path.IsAbs(e.Name) || path.Clean(e.Name) != e.Name || e.Name == ".." || strings.HasPrefix(e.Name, "../") {
			return nil, fmt.Errorf("archive entry %q: want a clean relative path", e.Name)
		}
		if i > 0 && out[i-1].Name == e.Name {
			return nil, fmt.Errorf("archive entry %q: given twice", e.Name)
		}
	}
	return out, nil
}

// dirs lists the parent directories of the entries, each once, sorted.
func dirs(entries []Entry) []string {
	seen := map[string]bool{}
	var out []string
	for _, e := range entries {
		for d := path.Dir(e.Name); d != "."; d = path.Dir(d) {
			if !seen[d] {
				seen[d] = true
				out = append(out, d)
			}
		}
	}
	slices.Sort(out)
	return out
}

func mode(e Entry) fs.FileMode {
	if e.Executable {
		return 0o755
	}
	return 0o644
}

// WriteTarGz writes entries as a gzip-compressed tar: directories first,
// then files, each sorted by name; every entry owned by 0:0 with no
// owner names and modified at mtime (whole seconds, UTC); the gzip
// header carries no name and no time. The same entries, bytes and mtime
// give the same archive bytes with the same Go version.
func WriteTarGz(w io.Writer, entries []Entry, mtime time.Time) error {
	entries, err := checkEntries(entries)
	if err != nil {
		return err
	}
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	tw := tar.NewWriter(zw)
	mtime = mtime.UTC().Truncate(time.Second)
	for _, d := range dirs(entries) {
		if err := tw.WriteHeader(&tar.Header{Typeflag: tar.TypeDir, Name: d + "/", Mode: 0o755, ModTime: mtime, Format: tar.FormatUSTAR}); err != nil {
			return fmt.Errorf("tar %s: %w", d, err)
		}
	}
	for _, e := range entries {
		if err := tarFile(tw, e, mtime); err != nil {
			return err
		}
	}
	if err := tw.Close(); err != nil {
		return err
	}
	return zw.Close()
}

func tarFile(tw *tar.Writer, e Entry, mtime time.Time) error {
	f, err := os.Open(e.Source)
	if err != nil {
		return fmt.Errorf("archive %s: %w", e.Name, err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return fmt.Errorf("archive %s: %w", e.Name, err)
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("archive %s: %s is not a regular file", e.Name, e.Source)
	}
	h := &tar.Header{Typeflag: tar.TypeReg, Name: e.Name, Mode: int64(mode(e)), Size: st.Size(), ModTime: mtime, Format: tar.FormatUSTAR}
	if err := tw.WriteHeader(h); err != nil {
		return fmt.Errorf("tar %s: %w", e.Name, err)
	}
	if n, err := io.Copy(tw, f); err != nil || n != st.Size() {
		// %v: err is nil when the file shrank while being copied, which
		// %w would print as %!w(<nil>).
		return fmt.Errorf("tar %s: copied %d of %d bytes: %v", e.Name, n, st.Size(), err)
	}
	return nil
}

// WriteZip writes entries as a zip (deflate): directories first, then
// files, each sorted by name, modified at mtime (UTC, whole seconds), no
// comment. The same entries, bytes and mtime give the same archive bytes
// with the same Go version.
func WriteZip(w io.Writer, entries []Entry, mtime time.Time) error {
	entries, err := checkEntries(entries)
	if err != nil {
		return err
	}
	zw := zip.NewWriter(w)
	mtime = mtime.UTC().Truncate(time.Second)
	for _, d := range dirs(entries) {
		h := &zip.FileHeader{Name: d + "/", Method: zip.Store, Modified: mtime}
		h.SetMode(fs.ModeDir | 0o755)
		if _, err := zw.CreateHeader(h); err != nil {
			return fmt.Errorf("zip %s: %w", d, err)
		}
	}
	for _, e := range entries {
		if err := zipFile(zw, e, mtime); err != nil {
			return err
		}
	}
	return zw.Close()
}

func zipFile(zw *zip.Writer, e Entry, mtime time.Time) error {
	f, err := os.Open(e.Source)
	if err != nil {
		return fmt.Errorf("archive %s: %w", e.Name, err)
	}
	defer f.Close()
	h := &zip.FileHeader{Name: e.Name, Method: zip.Deflate, Modified: mtime}
	h.SetMode(mode(e))
	out, err := zw.CreateHeader(h)
	if err != nil {
		return fmt.Errorf("zip %s: %w", e.Name, err)
	}
	if _, err := io.Copy(out, f); err != nil {
		return fmt.Errorf("zip %s: %w", e.Name, err)
	}
	return nil
}
