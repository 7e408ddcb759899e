package schema

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/klauspost/compress/zstd"
)

// NewZstdWriter returns the zstd encoder benchseal writes with. Its options
// are pinned so that the same input gives the same bytes on any machine and
// with any GOMAXPROCS.
func NewZstdWriter(w io.Writer) (*zstd.Encoder, error) {
	return zstd.NewWriter(w,
		zstd.WithEncoderLevel(zstd.SpeedDefault),
		zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(4<<20),
		zstd.WithEncoderCRC(true),
		zstd.WithZeroFrames(true),
		zstd.WithLowerEncoderMem(false),
		zstd.WithSingleSegment(false))
}

// RecordWriter writes records as JSON Lines, optionally zstd-compressed.
type RecordWriter struct {
	bw  *bufio.Writer
	zw  *zstd.Encoder
	buf []byte
	n   int64
}

// NewRecordWriter writes records to w; compress selects zstd.
func NewRecordWriter(w io.Writer, compress bool) (*RecordWriter, error) {
	rw := &RecordWriter{}
	if compress {
		zw, err := NewZstdWriter(w)
		if err != nil {
			return nil, err
		}
		rw.zw = zw
		w = zw
	}
	rw.bw = bufio.NewWriterSize(w, 256<<10)
	return rw, nil
}

// Write appends one record.
func (rw *RecordWriter) Write(rec *Record) error {
	var err error
	rw.buf, err = AppendRecord(rw.buf[:0], rec)
	if err != nil {
		return err
	}
	rw.buf = append(rw.buf, '\n')
	_, err = rw.bw.Write(rw.buf)
	rw.n++
	return err
}

// Count returns the number of records written.
func (rw *RecordWriter) Count() int64 { return rw.n }

// Close flushes and ends the stream. It does not close the underlying
// writer.
func (rw *RecordWriter) Close() error {
	if err := rw.bw.Flush(); err != nil {
		return err
	}
	if rw.zw != nil {
		return rw.zw.Close()
	}
	return nil
}

// MarshalDocument returns the canonical indented JSON of a manifest or
// claims document, ending with a newline.
func MarshalDocument(v any) ([]byte, error) {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return nil, err
	}
	return append(b, '\n'), nil
}

// RunWriter builds a run directory in a staging directory beside its
// destination (StagedDir) and moves it into place on Commit, so a failed or
// killed write never leaves a partial run at the destination and never
// touches an existing one.
type RunWriter struct {
	dest      string
	sd        *StagedDir
	records   *os.File
	rw        *RecordWriter
	done      bool
	reclaimed []Reclaimed
	// recordsClosed is set by CloseRecords, with its error in closeErr.
	recordsClosed bool
	closeErr      error
}

// CreateRun starts writing a run directory at dest. dest must not exist,
// or be an empty directory.
func CreateRun(dest string, compressRecords bool) (*RunWriter, error) {
	if err := checkFreeDest(dest, true); err != nil {
		return nil, fmt.Errorf("create run: %w", err)
	}
	reclaimed, err := ReclaimStale(dest)
	if err != nil {
		return nil, err
	}
	sd, err := NewStagedDir(dest)
	if err != nil {
		return nil, fmt.Errorf("create run %s: %w", dest, err)
	}
	name := RecordsFile
	if compressRecords {
		name = RecordsZstdFile
	}
	f, err := os.Create(sd.Join(name))
	if err != nil {
		sd.Discard()
		return nil, fmt.Errorf("create run %s: %w", dest, err)
	}
	rw, err := NewRecordWriter(f, compressRecords)
	if err != nil {
		f.Close()
		sd.Discard()
		return nil, err
	}
	return &RunWriter{dest: dest, sd: sd, records: f, rw: rw, reclaimed: reclaimed}, nil
}

// Records returns the record writer.
func (w *RunWriter) Records() *RecordWriter { return w.rw }

// WriteRecord appends one record.
func (w *RunWriter) WriteRecord(rec *Record) error { return w.rw.Write(rec) }

// SetManifest writes manifest.json.
func (w *RunWriter) SetManifest(m *Manifest) error {
	return w.writeDoc(ManifestFile, m)
}

// SetClaims writes claims.json.
func (w *RunWriter) SetClaims(c *Claims) error {
	return w.writeDoc(ClaimsFile, c)
}

func (w *RunWriter) writeDoc(name string, v any) error {
	b, err := MarshalDocument(v)
	if err != nil {
		return fmt.Errorf("write %s: %w", name, err)
	}
	return w.sd.WriteFile(name, b)
}

// WriteWorkload writes workload.jsonl from r and returns its SHA-256 (hex)
// and the number of lines.
func (w *RunWriter) WriteWorkload(r io.Reader) (sum string, items int, err error) {
	f, err := os.Create(w.sd.Join(WorkloadFile))
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	lc := &lineCounter{}
	if _, err := io.Copy(io.MultiWriter(f, h, lc), r); err != nil {
		return "", 0, fmt.Errorf("write %s: %w", WorkloadFile, err)
	}
	return hex.EncodeToString(h.Sum(nil)), lc.n, f.Close()
}

type lineCounter struct{ n int }

func (c *lineCounter) Write(p []byte) (int, error) {
	for _, b := range p {
		if b == '\n' {
			c.n++
		}
	}
	return len(p), nil
}

// AddAttachment copies r byte-for-byte to attachments/name and returns its
// SHA-256 (hex) and size. name is a slash-separated relative path.
func (w *RunWriter) AddAttachment(name string, r io.Reader) (sum string, size int64, err error) {
	clean := filepath.Clean(filepath.FromSlash(name))
	if name == "" || filepath.IsAbs(clean) || clean == "." || strings.HasPrefix(clean, "..") {
		return "", 0, fmt.Errorf("attachment %q: must be a relative path inside attachments/", name)
	}
	p := filepath.Join(w.sd.Path(), AttachmentsDir, clean)
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return "", 0, err
	}
	f, err := os.Create(p)
	if err != nil {
		return "", 0, err
	}
	defer f.Close()
	h := sha256.New()
	size, err = io.Copy(io.MultiWriter(f, h), r)
	if err != nil {
		return "", 0, fmt.Errorf("write attachment %s: %w", name, err)
	}
	return hex.EncodeToString(h.Sum(nil)), size, f.Close()
}

// CloseRecords ends the record stream, so that the staged records file
// can be read back (RecordsPath) before Commit; no record can be written
// after it. Commit calls it when it was not called.
func (w *RunWriter) CloseRecords() error {
	if w.recordsClosed {
		return w.closeErr
	}
	w.recordsClosed = true
	err := w.rw.Close()
	if cerr := w.records.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		w.closeErr = fmt.Errorf("write records: %w", err)
	}
	return w.closeErr
}

// RecordsPath returns the path of the staged records file.
func (w *RunWriter) RecordsPath() string { return w.records.Name() }

// Commit finishes the records and moves the run into place: every file
// and directory is synced before the rename (StagedDir.Publish).
func (w *RunWriter) Commit() error {
	if w.done {
		return errors.New("run already committed or aborted")
	}
	w.done = true
	if err := w.CloseRecords(); err != nil {
		w.sd.Discard()
		return err
	}
	if err := w.sd.Publish(true); err != nil {
		return fmt.Errorf("create run: %w", err)
	}
	return nil
}

// Abort removes everything written so far.
func (w *RunWriter) Abort() {
	if w.done {
		return
	}
	w.done = true
	if !w.recordsClosed {
		w.records.Close()
	}
	w.sd.Discard()
}
