package schema

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"

	"github.com/klauspost/compress/zstd"
)

// File names inside a run directory.
const (
	ManifestFile      = "manifest.json"
	RecordsFile       = "records.jsonl"
	RecordsZstdFile   = "records.jsonl.zst"
	WorkloadFile      = "workload.jsonl"
	ClaimsFile        = "claims.json"
	AttachmentsDir    = "attachments"
	MaxRecordLineSize = 64 << 20 // longest accepted records.jsonl line
)

// ErrInvalid is the root of every validation error of this package.
var ErrInvalid = errors.New("invalid run")

// RunDir is an opened run directory. Its records are streamed, never loaded
// whole.
type RunDir struct {
	Path     string
	manifest *Manifest
	claims   *Claims
	// RecordsPath is the records file (records.jsonl or records.jsonl.zst).
	RecordsPath string
	// WorkloadPath is empty when the run has no workload.jsonl.
	WorkloadPath string
	// Attachments lists files under attachments/, as slash-separated paths
	// relative to that folder, sorted.
	Attachments []string
}

// OpenRunDir opens the run directory at path and decodes its manifest and
// claims. It does not validate them (see ValidateRunDir).
func OpenRunDir(path string) (*RunDir, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("open run directory: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("open run directory %s: not a directory", path)
	}
	rd := &RunDir{Path: path}
	mf := filepath.Join(path, ManifestFile)
	f, err := os.Open(mf)
	if err != nil {
		return nil, fmt.Errorf("open run directory: %w", err)
	}
	rd.manifest, err = DecodeManifest(f, mf)
	f.Close()
	if err != nil {
		return nil, err
	}
	cf := filepath.Join(path, ClaimsFile)
	if f, err := os.Open(cf); err == nil {
		rd.claims, err = DecodeClaims(f, cf)
		f.Close()
		if err != nil {
			return nil, err
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("open run directory: %w", err)
	}
	plain, zst := filepath.Join(path, RecordsFile), filepath.Join(path, RecordsZstdFile)
	_, errPlain := os.Stat(plain)
	_, errZst := os.Stat(zst)
	switch {
	case errPlain == nil && errZst == nil:
		return nil, fmt.Errorf("open run directory %s: both %s and %s exist; keep one", path, RecordsFile, RecordsZstdFile)
	case errPlain == nil:
		rd.RecordsPath = plain
	case errZst == nil:
		rd.RecordsPath = zst
	default:
		return nil, fmt.Errorf("open run directory %s: %s (or %s) is missing", path, RecordsFile, RecordsZstdFile)
	}
	if _, err := os.Stat(filepath.Join(path, WorkloadFile)); err == nil {
		rd.WorkloadPath = filepath.Join(path, WorkloadFile)
	}
	ad := filepath.Join(path, AttachmentsDir)
	if st, err := os.Stat(ad); err == nil && st.IsDir() {
		err := filepath.WalkDir(ad, func(p string, d os.DirEntry, err error) error {
			if err != nil {
				return err
			}
			if d.IsDir() {
				return nil
			}
			if !d.Type().IsRegular() {
				return fmt.Errorf("attachment %s: not a regular file", p)
			}
			rel, err := filepath.Rel(ad, p)
			if err != nil {
				return err
			}
			rd.Attachments = append(rd.Attachments, filepath.ToSlash(rel))
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("open run directory: %w", err)
		}
		sort.Strings(rd.Attachments)
	}
	return rd, nil
}

// Manifest returns the decoded manifest.
func (rd *RunDir) Manifest() *Manifest { return rd.manifest }

// Claims returns the decoded claims, or nil when the run has none.
func (rd *RunDir) Claims() *Claims { return rd.claims }

// OpenRecords opens the run's records for streaming, decompressing a
// records.jsonl.zst file. Each call starts a new stream.
func (rd *RunDir) OpenRecords() (RecordIterator, error) {
	return rd.OpenRecordReader()
}

// OpenRecordReader is OpenRecords returning the concrete reader, which also
// reports line numbers.
func (rd *RunDir) OpenRecordReader() (*RecordReader, error) {
	f, err := os.Open(rd.RecordsPath)
	if err != nil {
		return nil, fmt.Errorf("open records: %w", err)
	}
	var r io.Reader = f
	var closers []io.Closer
	if filepath.Ext(rd.RecordsPath) == ".zst" {
		zr, err := NewZstdReader(f)
		if err != nil {
			f.Close()
			return nil, fmt.Errorf("open records %s: %w", rd.RecordsPath, err)
		}
		r = zr
		closers = append(closers, closerFunc(func() error { zr.Close(); return nil }))
	}
	closers = append(closers, f)
	rr := NewRecordReader(r, rd.RecordsPath)
	rr.closers = closers
	return rr, nil
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

// ZstdMaxWindow is the largest zstd window benchseal accepts when reading.
const ZstdMaxWindow = 8 << 20

// NewZstdReader returns a zstd decoder for untrusted input with a bounded
// window and memory, and no extra goroutines.
func NewZstdReader(r io.Reader) (*zstd.Decoder, error) {
	return zstd.NewReader(r,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderMaxWindow(ZstdMaxWindow),
		zstd.WithDecoderMaxMemory(1<<40),
		zstd.WithDecoderLowmem(true))
}

// RecordReader streams records from a JSON Lines source. Decoding is strict:
// unknown fields, duplicate keys and wrong types are errors naming the file,
// line and field (a *DecodeError).
type RecordReader struct {
	name    string
	sc      *bufio.Scanner
	line    int
	dec     recordDecoder
	closers []io.Closer
}

// NewRecordReader reads records from r; name is used in errors.
func NewRecordReader(r io.Reader, name string) *RecordReader {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 256<<10), MaxRecordLineSize)
	return &RecordReader{name: name, sc: sc}
}

// Name returns the file name used in errors.
func (rr *RecordReader) Name() string { return rr.name }

// Line returns the line number of the record last returned.
func (rr *RecordReader) Line() int { return rr.line }

// Next returns the next record, or io.EOF after the last one. The record
// is the caller's to keep. Blank lines are errors.
func (rr *RecordReader) Next() (*Record, error) {
	rec := new(Record)
	if err := rr.NextInto(rec); err != nil {
		return nil, err
	}
	rr.dec.detach(rec)
	return rec, nil
}

// NextInto decodes the next record into rec, or returns io.EOF after the
// last one. It does not allocate for chunk arrays: rec's slices and
// pointers (ChunksNS, ChunkTokens, Orig, Item, ScheduledNS) alias buffers
// the reader reuses, valid only until the next call. A decoding error is a
// *DecodeError naming file, line and field; the reader can go on with the
// next line after one. An error reading the source (for example a corrupt
// zstd stream) is not a *DecodeError and ends the stream.
func (rr *RecordReader) NextInto(rec *Record) error {
	if !rr.sc.Scan() {
		if err := rr.sc.Err(); err != nil {
			return fmt.Errorf("%s:%d: read records: %w", rr.name, rr.line+1, err)
		}
		return io.EOF
	}
	rr.line++
	if err := rr.dec.decode(rr.sc.Bytes(), rec); err != nil {
		var de *DecodeError
		if errors.As(err, &de) {
			de.File, de.Line = rr.name, rr.line
		}
		return err
	}
	return nil
}

// Close releases the underlying file, if the reader owns one.
func (rr *RecordReader) Close() error {
	var errs []error
	for _, c := range rr.closers {
		errs = append(errs, c.Close())
	}
	rr.closers = nil
	return errors.Join(errs...)
}
