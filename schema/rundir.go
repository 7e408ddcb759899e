package schema

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
)

// File names inside a run directory.
const (
	ManifestFile    = "manifest.json"
	RecordsFile     = "records.jsonl"
	RecordsZstdFile = "records.jsonl.zst"
	WorkloadFile    = "workload.jsonl"
	ClaimsFile      = "claims.json"
	AttachmentsDir  = "attachments"
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
// claims. It does not validate them (see ValidateRunDocuments).
func OpenRunDir(path string) (*RunDir, error) {
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("open run directory: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("open run directory %s: not a directory", path)
	}
	rd := &RunDir{Path: path}
	if err := checkRunFiles(path); err != nil {
		return nil, fmt.Errorf("open run directory %s: %w", path, err)
	}
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
		if err := CheckAttachmentNames(rd.Attachments); err != nil {
			return nil, fmt.Errorf("open run directory %s: %w", path, err)
		}
	}
	return rd, nil
}

// checkRunFiles refuses a run's own files (manifest, claims, records,
// workload) that are symbolic links, as attachments are: a link would make
// pack or merge of someone else's run directory read a file from
// elsewhere. (A named pipe, which streams what a writer sends into the
// directory, is read like a file.)
func checkRunFiles(dir string) error {
	for _, n := range []string{ManifestFile, ClaimsFile, RecordsFile, RecordsZstdFile, WorkloadFile} {
		if fi, err := os.Lstat(filepath.Join(dir, n)); err == nil && fi.Mode()&os.ModeSymlink != 0 {
			return fmt.Errorf("%s is a symbolic link (a run's files must be in its directory)", n)
		}
	}
	return nil
}

// Manifest returns the decoded manifest.
func (rd *RunDir) Manifest() *Manifest { return rd.manifest }

// Claims returns the decoded claims, or nil when the run has none.
func (rd *RunDir) Claims() *Claims { return rd.claims }

// OpenRecords opens the run's records for streaming, decompressing a
// records.jsonl.zst file (in a goroutine of its own, a few buffers ahead of
// the reader, until Close). Each call starts a new stream.
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
		ra := newReadAhead(zr)
		r = ra
		// Stop the read-ahead goroutine before closing what it reads.
		closers = append(closers, closerFunc(func() error { ra.close(); return zr.Close() }))
	}
	closers = append(closers, f)
	rr := NewRecordReader(r, rd.RecordsPath)
	rr.closers = closers
	return rr, nil
}

type closerFunc func() error

func (f closerFunc) Close() error { return f() }

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

// Bytes returns the line of the record last returned, without its
// newline, valid until the next call.
func (rr *RecordReader) Bytes() []byte { return rr.sc.Bytes() }

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
// pointers (ChunksNS, ChunkTokens, Orig, Item, Shard, ScheduledNS) alias buffers
// the reader reuses, valid only until the next call. A decoding error is a
// *DecodeError naming file, line and field; the reader can go on with the
// next line after one. An error reading the source (for example a corrupt
// zstd stream) is not a *DecodeError and ends the stream.
func (rr *RecordReader) NextInto(rec *Record) error {
	if !rr.sc.Scan() {
		if err := rr.sc.Err(); err != nil {
			if errors.Is(err, bufio.ErrTooLong) {
				err = lineTooLongError{}
			}
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

// Read-ahead of a decompressed stream: one goroutine decompresses up to
// readAheadDepth buffers of readAheadSize bytes ahead of the reader, so that
// decompression runs alongside line splitting and decoding. Memory is
// bounded by the buffers: readAheadDepth+1 of them at most.
const (
	readAheadSize  = 1 << 20
	readAheadDepth = 3
)

// readAhead is an io.Reader over src that reads src in its own goroutine.
// It returns the same bytes, then the same error, as src would.
type readAhead struct {
	full chan readAheadBuf
	free chan []byte
	done chan struct{}
	wg   sync.WaitGroup

	buf []byte // buffer being read from, returned to free when drained
	cur []byte // unread part of buf
	err error  // sticky error of src, after buf
}

type readAheadBuf struct {
	b   []byte
	err error
}

func newReadAhead(src io.Reader) *readAhead {
	ra := &readAhead{
		full: make(chan readAheadBuf, readAheadDepth),
		free: make(chan []byte, readAheadDepth+1),
		done: make(chan struct{}),
	}
	for range readAheadDepth + 1 {
		ra.free <- make([]byte, readAheadSize)
	}
	ra.wg.Add(1)
	go ra.fill(src)
	return ra
}

// fill reads src into free buffers until an error (io.EOF included) or
// close.
func (ra *readAhead) fill(src io.Reader) {
	defer ra.wg.Done()
	for {
		var b []byte
		select {
		case b = <-ra.free:
		case <-ra.done:
			return
		}
		b = b[:cap(b)]
		n := 0
		var err error
		for empty := 0; n < len(b) && err == nil; {
			var m int
			m, err = src.Read(b[n:])
			n += m
			if empty = empty + 1; m > 0 {
				empty = 0
			} else if empty == 100 {
				err = io.ErrNoProgress
			}
		}
		select {
		case ra.full <- readAheadBuf{b[:n], err}:
		case <-ra.done:
			return
		}
		if err != nil {
			return
		}
	}
}

func (ra *readAhead) Read(p []byte) (int, error) {
	for len(ra.cur) == 0 {
		if ra.err != nil {
			return 0, ra.err
		}
		if ra.buf != nil {
			ra.free <- ra.buf // never blocks: free holds every buffer
			ra.buf = nil
		}
		x := <-ra.full
		ra.buf, ra.cur, ra.err = x.b, x.b, x.err
	}
	n := copy(p, ra.cur)
	ra.cur = ra.cur[n:]
	return n, nil
}

// close stops the goroutine and waits for it. It is idempotent.
func (ra *readAhead) close() {
	select {
	case <-ra.done:
	default:
		close(ra.done)
	}
	ra.wg.Wait()
}

// ReadAttachment returns the bytes of the attachment called name (a
// slash-separated path relative to attachments/), which must be listed in
// Attachments.
func (rd *RunDir) ReadAttachment(name string) ([]byte, error) {
	i := sort.SearchStrings(rd.Attachments, name)
	if i == len(rd.Attachments) || rd.Attachments[i] != name {
		return nil, fmt.Errorf("%s/%s does not exist", AttachmentsDir, name)
	}
	f, err := os.Open(filepath.Join(rd.Path, AttachmentsDir, filepath.FromSlash(name)))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, MaxAttachmentSize+1))
	if err != nil {
		return nil, err
	}
	if len(b) > MaxAttachmentSize {
		return nil, fmt.Errorf("%s/%s: larger than %d bytes", AttachmentsDir, name, MaxAttachmentSize)
	}
	return b, nil
}

// lineTooLongError is the error of a record line longer than
// MaxRecordLineSize: bad input (it is ErrInvalid) and bufio.ErrTooLong.
type lineTooLongError struct{}

func (lineTooLongError) Error() string {
	return fmt.Sprintf("line longer than %d bytes", MaxRecordLineSize)
}

// Is reports ErrInvalid and bufio.ErrTooLong.
func (lineTooLongError) Is(target error) bool {
	return target == ErrInvalid || target == bufio.ErrTooLong
}
