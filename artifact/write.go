package artifact

import (
	"archive/tar"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/benchseal/benchseal/schema"
	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// stage is a layout being built in a schema.StagedDir beside its
// destination (named for it, locked while this process runs, reclaimed by a
// later run if this one is killed).
type stage struct {
	dir string
	sd  *schema.StagedDir
}

func newStage(out string) (*stage, error) {
	sd, err := schema.NewStagedDir(out)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(sd.Join("blobs/sha256"), 0o755); err != nil {
		sd.Discard()
		return nil, err
	}
	return &stage{dir: sd.Path(), sd: sd}, nil
}

// discard removes the stage and drops its lock; it does nothing once the
// stage was published.
func (s *stage) discard() { s.sd.Discard() }

// blobWriter writes one blob to a temporary file and names it by its digest
// when committed.
type blobWriter struct {
	st *stage
	f  *os.File
	h  interface {
		io.Writer
		Sum([]byte) []byte
	}
	n int64
}

func (s *stage) newBlob() (*blobWriter, error) {
	f, err := os.CreateTemp(filepath.Join(s.dir, "blobs", "sha256"), ".blob-")
	if err != nil {
		return nil, err
	}
	return &blobWriter{st: s, f: f, h: sha256.New()}, nil
}

func (b *blobWriter) Write(p []byte) (int, error) {
	n, err := b.f.Write(p)
	b.h.Write(p[:n])
	b.n += int64(n)
	return n, err
}

func (b *blobWriter) commit() (digest.Digest, int64, error) {
	if err := b.f.Sync(); err != nil {
		b.abort()
		return "", 0, err
	}
	if err := b.f.Close(); err != nil {
		os.Remove(b.f.Name())
		return "", 0, err
	}
	d := digest.NewDigestFromBytes(digest.SHA256, b.h.Sum(nil))
	if err := os.Chmod(b.f.Name(), 0o644); err != nil {
		os.Remove(b.f.Name())
		return "", 0, err
	}
	if err := os.Rename(b.f.Name(), filepath.Join(b.st.dir, filepath.FromSlash(blobPath(d)))); err != nil {
		os.Remove(b.f.Name())
		return "", 0, err
	}
	return d, b.n, nil
}

func (b *blobWriter) abort() {
	b.f.Close()
	os.Remove(b.f.Name())
}

func (s *stage) putBytes(p []byte) (digest.Digest, int64, error) {
	bw, err := s.newBlob()
	if err != nil {
		return "", 0, err
	}
	if _, err := bw.Write(p); err != nil {
		bw.abort()
		return "", 0, err
	}
	return bw.commit()
}

// marshalDoc encodes an OCI document canonically (encoding/json: struct
// field order, sorted map keys, no indentation).
func marshalDoc(v any) ([]byte, error) { return json.Marshal(v) }

// finishLayout writes oci-layout and index.json into the stage.
func (s *stage) finishLayout(index []byte) error {
	layout, _ := json.Marshal(ocispec.ImageLayout{Version: ocispec.ImageLayoutVersion})
	if err := s.sd.WriteFile(ocispec.ImageLayoutFile, layout); err != nil {
		return err
	}
	return s.sd.WriteFile(ocispec.ImageIndexFile, index)
}

// publish moves the finished stage to out: as a directory (rename) or, when
// out ends in ".tar", as a deterministic tar written to a temporary file and
// renamed. out must not exist.
func (s *stage) publish(out string, mtime time.Time) error {
	defer s.discard()
	if _, err := os.Lstat(out); err == nil {
		return fmt.Errorf("%s already exists (refusing to overwrite)", out)
	} else if !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	if !IsTarPath(out) {
		return s.sd.Publish(false)
	}
	src, err := openDir(s.dir)
	if err != nil {
		return err
	}
	defer src.close()
	return writeTarAtomic(out, src, nil, mtime, false)
}

// IsTarPath reports whether a bundle path names a tar file.
func IsTarPath(p string) bool { return strings.HasSuffix(p, ".tar") }

// writeTarAtomic writes the files of src, with replace overriding or adding
// files by name, as a deterministic tar at out (temporary file, then
// rename). Entries are sorted bytewise, regular files only, mode 0644,
// uid/gid 0, no user names, every mtime set to mtime, USTAR format.
func writeTarAtomic(out string, src source, replace map[string][]byte, mtime time.Time, overwrite bool) error {
	if !overwrite {
		if _, err := os.Lstat(out); err == nil {
			return fmt.Errorf("%s already exists (refusing to overwrite)", out)
		}
	}
	names := map[string]bool{}
	for _, n := range src.names() {
		names[n] = true
	}
	for n := range replace {
		names[n] = true
	}
	list := make([]string, 0, len(names))
	for n := range names {
		list = append(list, n)
	}
	sort.Strings(list)
	f, _, err := schema.NewStagingFile(out, 0o644)
	if err != nil {
		return err
	}
	tmp := f.Name()
	fail := func(err error) error {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := fault("tar-write"); err != nil {
		return fail(err)
	}
	tw := tar.NewWriter(f)
	mt := mtime.UTC().Truncate(time.Second)
	for _, n := range list {
		var size int64
		data, inMem := replace[n]
		if inMem {
			size = int64(len(data))
		} else {
			size, _ = src.size(n)
		}
		hdr := &tar.Header{
			Typeflag: tar.TypeReg,
			Name:     n,
			Mode:     0o644,
			Size:     size,
			ModTime:  mt,
			Format:   tar.FormatUSTAR,
		}
		if err := tw.WriteHeader(hdr); err != nil {
			return fail(err)
		}
		if inMem {
			if _, err := tw.Write(data); err != nil {
				return fail(err)
			}
			continue
		}
		rc, err := src.open(n)
		if err != nil {
			return fail(err)
		}
		_, err = io.Copy(tw, rc)
		rc.Close()
		if err != nil {
			return fail(err)
		}
	}
	if err := tw.Close(); err != nil {
		return fail(err)
	}
	if err := f.Sync(); err != nil {
		return fail(err)
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, out); err != nil {
		os.Remove(tmp)
		return err
	}
	return schema.SyncDir(filepath.Dir(filepath.Clean(out)))
}
