package schema

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
)

// Problem is one validation finding, located by file, line (0 when the
// problem is not about one line) and field (a dotted JSON path).
type Problem struct {
	File    string `json:"file"`
	Line    int    `json:"line,omitempty"`
	Field   string `json:"field,omitempty"`
	Message string `json:"message"`
}

// String formats the problem as `file:line: field "x": message`, the shape
// of a *DecodeError.
func (p Problem) String() string {
	return (&DecodeError{File: p.File, Line: p.Line, Field: p.Field, Msg: p.Message}).Error()
}

// ValidationError reports the problems found in a run. It wraps ErrInvalid.
type ValidationError struct {
	Problems []Problem
	// Omitted counts problems found beyond the reporting cap.
	Omitted int
}

// Error lists the problems, one per line.
func (e *ValidationError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "invalid run: %d problem(s)", len(e.Problems)+e.Omitted)
	for _, p := range e.Problems {
		b.WriteString("\n  ")
		b.WriteString(p.String())
	}
	if e.Omitted > 0 {
		fmt.Fprintf(&b, "\n  ... and %d more", e.Omitted)
	}
	return b.String()
}

// Unwrap returns ErrInvalid.
func (e *ValidationError) Unwrap() error { return ErrInvalid }

// collector caps a problem list and counts the rest.
type collector struct {
	max     int
	list    []Problem
	omitted int
}

// full reports whether the cap is reached: further problems are only
// counted.
func (c *collector) full() bool { return c.max > 0 && len(c.list) >= c.max }

func (c *collector) add(ps ...Problem) {
	for _, p := range ps {
		if c.max > 0 && len(c.list) >= c.max {
			c.omitted++
			continue
		}
		c.list = append(c.list, p)
	}
}

// addErr turns a decoding error into problems, or returns it when it is
// not about the content (for example an I/O error).
func (c *collector) addErr(err error) error {
	var de *DecodeError
	var ve *ValidationError
	switch {
	case errors.As(err, &de):
		c.add(de.Problem())
	case errors.As(err, &ve):
		c.add(ve.Problems...)
		c.omitted += ve.Omitted
	default:
		return err
	}
	return nil
}

// ValidateRunDocuments validates the documents of the run directory at
// dir: the manifest and claims against their JSON Schemas and semantic
// rules, every record (streamed, never loaded whole) and the checks across
// records, the workload hash and the attachments; not the stored scrapes
// against the records (artifact.ValidatePackable adds those). It returns nil for a valid run, a
// *ValidationError listing at most maxProblems problems (≤ 0 means
// DefaultMaxProblems) and counting the rest, or another error when the
// directory cannot be read.
func ValidateRunDocuments(dir string, maxProblems int) error {
	_, err := checkRunDir(context.Background(), dir, maxProblems, nil)
	return err
}

// CheckRunDir is ValidateRunDocuments stopping with ctx's error when ctx
// is cancelled, that also returns what it counted in the records, valid or
// not. With each set it hands each record that decoded to each, with the
// bytes of its line, as it streams past the checks (both valid only during
// the call), so a caller that needs the records too reads and decompresses
// them once. A record handed to each may still be found invalid (by its
// own checks or by those across records): act on the records only when
// the error returned is nil. An error from each stops validation and is
// returned.
func CheckRunDir(ctx context.Context, dir string, maxProblems int, each func(line []byte, rec *Record) error) (*RunSummary, error) {
	return checkRunDir(ctx, dir, maxProblems, each)
}

func checkRunDir(ctx context.Context, dir string, maxProblems int, each func([]byte, *Record) error) (*RunSummary, error) {
	rc, err := beginRunCheck(ctx, dir, maxProblems)
	if err != nil {
		return nil, err
	}
	if err := checkRecords(ctx, dir, rc.checker, rc.col, each); err != nil {
		return nil, err
	}
	return rc.end()
}

// runCheck is a validation of a run directory between its documents and
// its records: the problems found so far, the workload's (listed after the
// records'), and the checker the records go through.
type runCheck struct {
	dir       string
	col, wcol *collector
	checker   *RecordChecker
}

// beginRunCheck checks what ValidateRunDocuments checks before the records:
// the run's files, manifest, claims, workload and trace file. An error is
// a *ValidationError when the run's files are refused, else one reading
// the directory.
func beginRunCheck(ctx context.Context, dir string, maxProblems int) (*runCheck, error) {
	if maxProblems <= 0 {
		maxProblems = DefaultMaxProblems
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("validate run: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("validate run %s: not a directory", dir)
	}
	col := &collector{max: maxProblems}
	if err := checkRunFiles(dir); err != nil {
		return nil, &ValidationError{Problems: []Problem{{File: dir, Message: err.Error()}}}
	}

	// Manifest.
	var m *Manifest
	mf := filepath.Join(dir, ManifestFile)
	if f, err := os.Open(mf); err == nil {
		m, err = DecodeManifest(f, mf)
		f.Close()
		if err != nil {
			if err := col.addErr(err); err != nil {
				return nil, err
			}
		} else {
			col.add(ValidateManifest(m, mf)...)
		}
	} else if errors.Is(err, os.ErrNotExist) {
		col.add(Problem{File: mf, Message: "missing (a run directory must hold " + ManifestFile + ")"})
	} else {
		return nil, fmt.Errorf("validate run: %w", err)
	}

	// Claims.
	cf := filepath.Join(dir, ClaimsFile)
	if f, err := os.Open(cf); err == nil {
		c, err := DecodeClaims(f, cf)
		f.Close()
		if err != nil {
			if err := col.addErr(err); err != nil {
				return nil, err
			}
		} else {
			col.add(ValidateClaims(c, m, cf)...)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("validate run: %w", err)
	}

	// Workload, read before the records: its items bound their token
	// counts. Its problems are listed after theirs.
	wcol := &collector{max: col.max}
	items, err := checkWorkload(ctx, dir, m, wcol)
	if err != nil {
		return nil, err
	}
	if err := checkTraceFile(dir, m, items, wcol); err != nil {
		return nil, err
	}
	checker := NewRecordChecker(m)
	checker.SetWorkload(items)
	return &runCheck{dir: dir, col: col, wcol: wcol, checker: checker}, nil
}

// end finishes the check once the records went through it: the workload's
// problems, then the attachments'. It returns what the records counted
// and, for an invalid run, a *ValidationError.
func (rc *runCheck) end() (*RunSummary, error) {
	sum := rc.checker.Summary()
	rc.col.add(rc.wcol.list...)
	checkAttachments(rc.dir, rc.col)
	return &sum, rc.col.err()
}

// err is the *ValidationError of the problems collected, nil for none.
func (c *collector) err() error {
	if len(c.list) > 0 || c.omitted > 0 {
		return &ValidationError{Problems: c.list, Omitted: c.omitted}
	}
	return nil
}

func checkRecords(ctx context.Context, dir string, checker *RecordChecker, col *collector, each func([]byte, *Record) error) error {
	plain, zst := filepath.Join(dir, RecordsFile), filepath.Join(dir, RecordsZstdFile)
	_, errPlain := os.Stat(plain)
	_, errZst := os.Stat(zst)
	var path string
	switch {
	case errPlain == nil && errZst == nil:
		col.add(Problem{File: zst, Message: "both " + RecordsFile + " and " + RecordsZstdFile + " exist; keep one"})
		return nil
	case errPlain == nil:
		path = plain
	case errZst == nil:
		path = zst
	default:
		col.add(Problem{File: plain, Message: "missing (a run directory must hold " + RecordsFile + " or " + RecordsZstdFile + ")"})
		return nil
	}
	rd := &RunDir{Path: dir, RecordsPath: path}
	rr, err := rd.OpenRecordReader()
	if err != nil {
		col.add(Problem{File: path, Message: err.Error()})
		return nil
	}
	defer rr.Close()
	p := &recordPass{rr: rr, checker: checker, col: col}
	var rec Record
	for n := 1; ; n++ {
		if n%4096 == 0 {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		if err := p.next(&rec); err != nil {
			return nil // io.EOF: the problems say why reading stopped
		}
		if each != nil {
			if err := each(rr.Bytes(), &rec); err != nil {
				return err
			}
		}
	}
}

// recordPass reads the records of one file through a checker, the problems
// going to col: validate's record loop, shared by CheckRunDir and a
// CheckedRunDir's stream.
type recordPass struct {
	rr        *RecordReader
	checker   *RecordChecker
	col       *collector
	undecoded int
}

// next decodes the next record that decodes into rec and checks it (rec
// as RecordReader.NextInto leaves it). It returns io.EOF after the last
// record, having run the checks across records, or once reading stopped
// (a broken stream, too many lines that do not decode), a problem saying
// why. A line that does not decode is a problem, and skipped.
func (p *recordPass) next(rec *Record) error {
	path, col := p.rr.Name(), p.col
	for {
		err := p.rr.NextInto(rec)
		if err == io.EOF {
			p.finish()
			return io.EOF
		}
		if err != nil {
			var de *DecodeError
			if errors.As(err, &de) {
				col.add(de.Problem())
				p.undecoded++
				if p.undecoded > MaxUndecodedLines && col.full() {
					// Listed even past the cap: it says why the count stops.
					col.list = append(col.list, Problem{File: path, Line: p.rr.Line(), Message: fmt.Sprintf("stopped reading: over %d lines could not be decoded (the rest of the file was not checked)", MaxUndecodedLines)})
					return io.EOF
				}
				continue
			}
			// The stream itself is broken (truncated or corrupt zstd, a
			// line too long): report and stop.
			// Listed even past the cap: it says why the count stops.
			col.list = append(col.list, Problem{File: path, Line: p.rr.Line() + 1, Message: streamMessage(err)})
			return io.EOF
		}
		if col.full() {
			// Past the cap a problem is only counted: formatting
			// millions of messages nobody sees is the slow part.
			col.omitted += p.checker.Count(p.rr.Line(), rec)
		} else {
			col.add(p.checker.Check(path, p.rr.Line(), rec)...)
		}
		return nil
	}
}

// finish runs the checks across records, unless some line did not decode.
func (p *recordPass) finish() {
	if p.undecoded > 0 {
		p.col.add(Problem{File: p.rr.Name(), Message: fmt.Sprintf("checks across records skipped: %d line(s) could not be decoded", p.undecoded)})
		return
	}
	p.checker.lastFile = p.rr.Name()
	p.col.add(p.checker.Finish()...)
}

// streamMessage shortens a stream error for a problem that already names
// the file and line.
func streamMessage(err error) string {
	msg := err.Error()
	if i := strings.Index(msg, ": read records: "); i >= 0 {
		msg = msg[i+2:]
	}
	if errors.Is(err, bufio.ErrTooLong) {
		return fmt.Sprintf("line longer than %d bytes", MaxRecordLineSize)
	}
	return msg
}

// ContextReader returns a reader of r that fails with ctx's error once ctx
// is cancelled, so a long copy stops promptly on SIGINT or SIGTERM.
func ContextReader(ctx context.Context, r io.Reader) io.Reader { return ctxReader{ctx, r} }

type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

func checkWorkload(ctx context.Context, dir string, m *Manifest, col *collector) (*WorkloadItems, error) {
	wf := filepath.Join(dir, WorkloadFile)
	f, err := os.Open(wf)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("validate run: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	lc := &lineCounter{}
	items := NewWorkloadItems()
	if _, err := io.Copy(io.MultiWriter(h, lc, items), ctxReader{ctx, f}); err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, fmt.Errorf("validate run: read %s: %w", wf, err)
	}
	items.Close()
	if m == nil {
		return nil, nil
	}
	sum := hex.EncodeToString(h.Sum(nil))
	if m.Workload.SHA256 != "" && m.Workload.SHA256 != sum {
		col.add(Problem{File: wf, Field: "workload.sha256", Message: fmt.Sprintf("the manifest says %s, the file hashes to %s", m.Workload.SHA256, sum)})
	}
	if m.Workload.Items > 0 && m.Workload.Items != lc.n {
		col.add(Problem{File: wf, Field: "workload.items", Message: fmt.Sprintf("the manifest says %d items, the file has %d lines", m.Workload.Items, lc.n)})
	}
	return items, nil
}

// checkAttachments checks the run's attachments directory: regular files
// only, with names that can be unpacked side by side.
func checkAttachments(dir string, col *collector) {
	ad := filepath.Join(dir, AttachmentsDir)
	if st, err := os.Lstat(ad); err == nil {
		if !st.IsDir() {
			col.add(Problem{File: ad, Message: "must be a directory"})
		} else {
			var names []string
			filepath.WalkDir(ad, func(p string, d os.DirEntry, err error) error {
				if err != nil {
					col.add(Problem{File: p, Message: err.Error()})
					return nil
				}
				if !d.IsDir() && !d.Type().IsRegular() {
					col.add(Problem{File: p, Message: "attachment is not a regular file"})
				}
				if !d.IsDir() {
					if rel, err := filepath.Rel(ad, p); err == nil {
						names = append(names, filepath.ToSlash(rel))
					}
				}
				return nil
			})
			if err := CheckAttachmentNames(names); err != nil {
				col.add(Problem{File: ad, Message: err.Error()})
			}
		}
	}
}

// checkTraceFile rebuilds a trace replay's items from the trace file the
// run keeps (CheckTraceItems).
func checkTraceFile(dir string, m *Manifest, items *WorkloadItems, col *collector) error {
	if m == nil || m.Workload.Trace == nil || m.Workload.Trace.Stored != TraceAttachment {
		return nil
	}
	var data []byte
	f, err := os.Open(filepath.Join(dir, AttachmentsDir, TraceAttachment))
	if err == nil {
		data, err = io.ReadAll(io.LimitReader(f, MaxAttachmentSize))
		f.Close()
	}
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("validate run: %w", err)
	}
	col.add(CheckTraceItems(m, data, items, filepath.Join(dir, WorkloadFile))...)
	return nil
}
