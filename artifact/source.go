package artifact

import (
	"archive/tar"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"sort"
	"strings"
)

// source is a read-only view of the files of an OCI layout: a directory or
// a tar. Names are slash-separated and relative ("index.json",
// "blobs/sha256/<hex>").
type source interface {
	// names lists the files, sorted.
	names() []string
	// size returns the size of a file, or false when it does not exist.
	size(name string) (int64, bool)
	// open opens a file for reading.
	open(name string) (io.ReadCloser, error)
	close() error
}

// checkLayoutName accepts only the names an OCI layout written by benchseal
// may contain.
func checkLayoutName(name string) error {
	switch name {
	case "oci-layout", "index.json":
		return nil
	}
	hexPart, ok := strings.CutPrefix(name, "blobs/sha256/")
	if !ok {
		return fmt.Errorf("unexpected file %q in layout", name)
	}
	if _, err := ParseDigest("sha256:" + hexPart); err != nil {
		return fmt.Errorf("unexpected blob name %q", name)
	}
	return nil
}

// dirSource reads a layout directory through os.Root, refusing links and
// anything but regular files.
type dirSource struct {
	root  *os.Root
	files map[string]int64
	list  []string
}

func openDir(p string) (*dirSource, error) {
	root, err := os.OpenRoot(p)
	if err != nil {
		return nil, invalid(CheckContainer, p, "open directory: %v", err)
	}
	ds := &dirSource{root: root, files: map[string]int64{}}
	err = fs.WalkDir(root.FS(), ".", func(name string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if len(ds.files) > MaxTarEntries {
			return fmt.Errorf("more than %d files", MaxTarEntries)
		}
		switch {
		case d.Type()&fs.ModeSymlink != 0:
			return fmt.Errorf("%s: symbolic link", name)
		case d.IsDir():
			if name == "." || name == "blobs" || name == "blobs/sha256" {
				return nil
			}
			return fmt.Errorf("unexpected directory %q in layout", name)
		case !d.Type().IsRegular():
			return fmt.Errorf("%s: not a regular file", name)
		}
		if err := checkLayoutName(name); err != nil {
			return err
		}
		info, err := d.Info()
		if err != nil {
			return err
		}
		ds.files[name] = info.Size()
		ds.list = append(ds.list, name)
		return nil
	})
	if err != nil {
		root.Close()
		return nil, invalid(CheckContainer, p, "%v", err)
	}
	sort.Strings(ds.list)
	return ds, nil
}

func (d *dirSource) names() []string { return d.list }

func (d *dirSource) size(name string) (int64, bool) {
	s, ok := d.files[name]
	return s, ok
}

func (d *dirSource) open(name string) (io.ReadCloser, error) {
	if _, ok := d.files[name]; !ok {
		return nil, invalid(CheckContainer, name, "missing from layout")
	}
	fi, err := d.root.Lstat(name)
	if err != nil {
		return nil, invalid(CheckContainer, name, "%v", err)
	}
	if !fi.Mode().IsRegular() {
		return nil, invalid(CheckContainer, name, "not a regular file")
	}
	f, err := d.root.Open(name)
	if err != nil {
		return nil, invalid(CheckContainer, name, "%v", err)
	}
	return f, nil
}

func (d *dirSource) close() error { return d.root.Close() }

// tarSource indexes a tar file once (headers only) and reads entries by
// offset, so no blob is ever extracted to disk or held in memory.
type tarSource struct {
	f     *os.File
	files map[string]tarEntry
	list  []string
}

type tarEntry struct{ off, size int64 }

// countingReader tracks the offset of the underlying file; it implements
// io.Seeker so archive/tar skips entry data instead of reading it.
type countingReader struct {
	f   *os.File
	pos int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.f.Read(p)
	c.pos += int64(n)
	return n, err
}

func (c *countingReader) Seek(off int64, whence int) (int64, error) {
	n, err := c.f.Seek(off, whence)
	if err == nil {
		c.pos = n
	}
	return n, err
}

func openTar(p string) (*tarSource, error) {
	f, err := os.Open(p)
	if err != nil {
		return nil, invalid(CheckContainer, p, "open tar: %v", err)
	}
	ts, err := indexTar(f)
	if err != nil {
		f.Close()
		return nil, wrapInvalid(CheckContainer, p, err)
	}
	return ts, nil
}

func indexTar(f *os.File) (*tarSource, error) {
	st, err := f.Stat()
	if err != nil {
		return nil, err
	}
	total := st.Size()
	cr := &countingReader{f: f}
	tr := tar.NewReader(cr)
	ts := &tarSource{f: f, files: map[string]tarEntry{}}
	seen := map[string]bool{}
	var end int64 // offset just past the last entry's data and padding
	for n := 0; ; n++ {
		if n > MaxTarEntries {
			return nil, fmt.Errorf("more than %d tar entries", MaxTarEntries)
		}
		hdr, err := tr.Next()
		if err == io.EOF {
			if err := checkTarEnd(f, end, total); err != nil {
				return nil, err
			}
			break
		}
		if err != nil {
			return nil, fmt.Errorf("read tar: %w", err)
		}
		if hdr.Size >= 0 && hdr.Size <= MaxBlobSize {
			end = cr.pos + (hdr.Size+511)&^511
		}
		name, err := cleanTarName(hdr.Name)
		if err != nil {
			return nil, err
		}
		if seen[name] {
			return nil, fmt.Errorf("duplicate tar entry %q", hdr.Name)
		}
		seen[name] = true
		if err := checkUSTAR(f, cr.pos, hdr, name); err != nil {
			return nil, err
		}
		if hdr.Typeflag == tar.TypeDir {
			continue
		}
		if err := checkLayoutName(name); err != nil {
			return nil, err
		}
		switch {
		case hdr.Size < 0 || hdr.Size > MaxBlobSize:
			return nil, fmt.Errorf("tar entry %q: size %d out of range (0 to %d bytes)", hdr.Name, hdr.Size, MaxBlobSize)
		case cr.pos+hdr.Size > total:
			return nil, fmt.Errorf("tar entry %q: the archive is truncated: the entry declares %d bytes, only %d follow its header", hdr.Name, hdr.Size, total-cr.pos)
		}
		if err := checkTarPadding(f, cr.pos, hdr.Size, hdr.Name); err != nil {
			return nil, err
		}
		ts.files[name] = tarEntry{off: cr.pos, size: hdr.Size}
		ts.list = append(ts.list, name)
	}
	sort.Strings(ts.list)
	return ts, nil
}

// checkUSTAR refuses a tar entry that is not written the way pack writes
// one: a plain USTAR header (no PAX extended or global header, no GNU long
// name or link, no v7, GNU or star header), of type '0' (a regular file) or
// '5' (only the directories "blobs" and "blobs/sha256", which tar programs
// add), whose stored name is exactly the layout name (no "./", "//" or
// trailing slash on a file). Tar readers disagree on which name wins when
// an entry carries several (Go's archive/tar takes a GNU long name over a
// PAX path, GNU tar the PAX path), so one archive could hold two layouts;
// with one plain name per entry every reader sees the same files. data is
// the offset of the entry's data, just past its 512-byte header.
func checkUSTAR(f io.ReaderAt, data int64, hdr *tar.Header, name string) error {
	if hdr.Format != tar.FormatUSTAR || len(hdr.PAXRecords) > 0 {
		return fmt.Errorf("tar entry %q: %v header; a bundle tar is plain USTAR (no PAX extended or global headers, no GNU long names)", hdr.Name, tarFormatName(hdr.Format))
	}
	var raw [512]byte
	if data < 512 {
		return fmt.Errorf("tar entry %q: header offset %d", hdr.Name, data)
	}
	if _, err := f.ReadAt(raw[:], data-512); err != nil {
		return fmt.Errorf("read tar header of %q: %w", hdr.Name, err)
	}
	const typeflagOff = 156
	switch flag := raw[typeflagOff]; {
	case flag == tar.TypeReg && hdr.Typeflag == tar.TypeReg:
		if hdr.Name != name {
			return fmt.Errorf("tar entry %q: the stored name is not the plain layout name %q", hdr.Name, name)
		}
	case flag == tar.TypeDir && hdr.Typeflag == tar.TypeDir:
		if name != "blobs" && name != "blobs/sha256" {
			return fmt.Errorf("unexpected directory %q in tar", hdr.Name)
		}
		if hdr.Name != name && hdr.Name != name+"/" {
			return fmt.Errorf("tar entry %q: the stored name is not the plain layout name %q", hdr.Name, name+"/")
		}
		if hdr.Size != 0 {
			return fmt.Errorf("tar directory entry %q has %d bytes of data", hdr.Name, hdr.Size)
		}
	case hdr.Typeflag == tar.TypeReg || hdr.Typeflag == tar.TypeDir:
		return fmt.Errorf("tar entry %q: type flag %q; a bundle tar has '0' (regular file) entries only", hdr.Name, flag)
	default:
		return fmt.Errorf("tar entry %q: type %q is not a regular file (links, devices and fifos are refused)", hdr.Name, hdr.Typeflag)
	}
	return nil
}

// tarFormatName names a tar header format for an error message.
func tarFormatName(f tar.Format) string {
	switch {
	case f == tar.FormatPAX:
		return "PAX"
	case f == tar.FormatGNU:
		return "GNU"
	case f == tar.FormatUnknown:
		return "non-standard (v7, mixed PAX and GNU, or malformed USTAR)"
	}
	return "non-USTAR (" + f.String() + ")"
}

// checkTarPadding refuses non-zero bytes in the padding that rounds an
// entry's data (size bytes at offset data) up to a 512-byte block: tar
// readers skip it, so it is bytes no reader checks, and pack writes zeros.
func checkTarPadding(f io.ReaderAt, data, size int64, entry string) error {
	pad := (512 - size%512) % 512
	if pad == 0 {
		return nil
	}
	buf := make([]byte, pad)
	if _, err := f.ReadAt(buf, data+size); err != nil {
		return fmt.Errorf("tar entry %q: read padding: %w", entry, err)
	}
	for i, c := range buf {
		if c != 0 {
			return fmt.Errorf("tar entry %q: non-zero byte in the padding after its data (offset %d)", entry, data+size+int64(i))
		}
	}
	return nil
}

// checkTarEnd checks what follows the last entry of a tar, at offset end of
// a file of total bytes: exactly the end-of-archive marker (two zero
// blocks) and, at most, zero padding to a record boundary. Data after the
// marker (a second archive appended) or a missing marker is refused: a
// bundle tar is what pack writes, and every tool must read the same files
// from it.
func checkTarEnd(f io.ReaderAt, end, total int64) error {
	tail := total - end
	switch {
	case tail < 1024:
		return fmt.Errorf("tar has no end-of-archive marker (two zero blocks) after its last entry")
	case tail > 1024+MaxTarPadding || tail%512 != 0:
		return fmt.Errorf("tar has %d bytes after its last entry; want the end-of-archive marker and at most %d bytes of zero padding", tail, MaxTarPadding)
	}
	buf := make([]byte, tail)
	if _, err := f.ReadAt(buf, end); err != nil {
		return fmt.Errorf("read tar end: %w", err)
	}
	for i, c := range buf {
		if c != 0 {
			return fmt.Errorf("tar has data after its end-of-archive marker (byte %d)", end+int64(i))
		}
	}
	return nil
}

// cleanTarName turns a tar name into a layout name, refusing absolute and
// non-local names. It strips a leading "./" and a trailing slash, which
// checkUSTAR then refuses on a file (a duplicate via "./" is named as such).
func cleanTarName(n string) (string, error) {
	orig := n
	n = strings.TrimPrefix(n, "./")
	n = strings.TrimSuffix(n, "/")
	if n == "." {
		n = ""
	}
	if strings.Contains(n, "\\") || strings.HasPrefix(n, "/") || strings.ContainsRune(n, 0) {
		return "", fmt.Errorf("unsafe tar entry name %q", orig)
	}
	if n != "" && (path.Clean(n) != n || !fs.ValidPath(n)) {
		return "", fmt.Errorf("unsafe tar entry name %q", orig)
	}
	return n, nil
}

func (t *tarSource) names() []string { return t.list }

func (t *tarSource) size(name string) (int64, bool) {
	e, ok := t.files[name]
	return e.size, ok
}

func (t *tarSource) open(name string) (io.ReadCloser, error) {
	e, ok := t.files[name]
	if !ok {
		return nil, invalid(CheckContainer, name, "missing from layout")
	}
	return io.NopCloser(io.NewSectionReader(t.f, e.off, e.size)), nil
}

func (t *tarSource) close() error { return t.f.Close() }

// openSource opens a layout directory or tar file.
func openSource(p string) (source, error) {
	st, err := os.Lstat(p)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, fmt.Errorf("open bundle: %w", err)
		}
		return nil, fmt.Errorf("open bundle: %w", err)
	}
	switch {
	case st.IsDir():
		return openDir(p)
	case st.Mode().IsRegular():
		return openTar(p)
	default:
		return nil, invalid(CheckContainer, p, "not a directory or a regular file")
	}
}

// readAllLimited reads a whole small file, refusing more than limit bytes.
func readAllLimited(src source, name string, limit int64, check string) ([]byte, error) {
	sz, ok := src.size(name)
	if !ok {
		return nil, invalid(check, name, "missing")
	}
	if sz > limit {
		return nil, invalid(check, name, "size %d over the limit %d", sz, limit)
	}
	rc, err := src.open(name)
	if err != nil {
		return nil, err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, limit+1))
	if err != nil {
		return nil, invalid(check, name, "read: %v", err)
	}
	if int64(len(b)) > limit {
		return nil, invalid(check, name, "over the limit %d", limit)
	}
	return b, nil
}
