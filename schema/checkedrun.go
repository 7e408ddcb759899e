package schema

import (
	"context"
	"io"
	"sync"
)

// CheckedRunDir is a run directory whose first record stream also
// validates the run as ValidateRunDocuments does (manifest, claims,
// workload, every record, the checks across records, attachments), in the
// same pass that decodes the records: a reader of the records (replay)
// pays for the checks, not for a second read and decompression. Where
// validate would report problems, that stream ends with its
// *ValidationError (wrapping ErrInvalid) instead of io.EOF, so a result
// computed from it is never used. Later streams are not checked again.
type CheckedRunDir struct {
	*RunDir
	maxProblems int
	mu          sync.Mutex
	opened      bool
}

var _ Run = (*CheckedRunDir)(nil)

// OpenCheckedRunDir opens the run directory at path as OpenRunDir does;
// its first record stream lists at most maxProblems problems (≤ 0 means
// DefaultMaxProblems), counting the rest.
func OpenCheckedRunDir(path string, maxProblems int) (*CheckedRunDir, error) {
	rd, err := OpenRunDir(path)
	if err != nil {
		return nil, err
	}
	return &CheckedRunDir{RunDir: rd, maxProblems: maxProblems}, nil
}

// OpenRecords implements Run: the first stream checks the run (see
// CheckedRunDir), later ones are the run directory's own.
func (c *CheckedRunDir) OpenRecords() (RecordIterator, error) {
	c.mu.Lock()
	first := !c.opened
	c.opened = true
	c.mu.Unlock()
	if !first {
		return c.RunDir.OpenRecords()
	}
	rc, err := beginRunCheck(context.Background(), c.Path, c.maxProblems)
	if err != nil {
		return nil, err
	}
	rr, err := c.RunDir.OpenRecordReader()
	if err != nil {
		return nil, err
	}
	return &checkedRecords{rc: rc, p: recordPass{rr: rr, checker: rc.checker, col: rc.col}}, nil
}

// checkedRecords is a CheckedRunDir's first record stream.
type checkedRecords struct {
	rc   *runCheck
	p    recordPass
	done error // what every call returns once the records ended
}

// NextInto decodes the next record that decodes into rec, as
// RecordReader.NextInto does, checking it. After the last one it returns
// io.EOF for a valid run, else the run's *ValidationError; a line that
// does not decode is one of its problems, not an error of its own.
func (it *checkedRecords) NextInto(rec *Record) error {
	if it.done != nil {
		return it.done
	}
	if err := it.p.next(rec); err == nil {
		return nil
	}
	it.done = io.EOF
	if _, err := it.rc.end(); err != nil {
		it.done = err
	}
	return it.done
}

// Next is NextInto into a record the caller keeps.
func (it *checkedRecords) Next() (*Record, error) {
	rec := new(Record)
	if err := it.NextInto(rec); err != nil {
		return nil, err
	}
	it.p.rr.dec.detach(rec)
	return rec, nil
}

// Line returns the line number of the record last returned.
func (it *checkedRecords) Line() int { return it.p.rr.Line() }

// Problems returns the *ValidationError of the problems found so far, nil
// when none: a reader that stops at a record it cannot use (the run is
// then likely invalid) reports them rather than its own error. It must
// not be called while another goroutine reads the stream.
func (it *checkedRecords) Problems() error {
	if it.done != nil && it.done != io.EOF {
		return it.done
	}
	return it.rc.col.err()
}

// Close releases the records file.
func (it *checkedRecords) Close() error { return it.p.rr.Close() }
