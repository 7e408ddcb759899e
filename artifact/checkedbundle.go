package artifact

import (
	"bytes"
	"fmt"
	"io"
	"strings"
	"sync"

	"github.com/benchseal/benchseal/schema"
)

// CheckedBundle is a bundle whose first record stream also checks the
// run as verify's schema check does — the manifest and claims documents,
// the workload layer's hash and items against the manifest, every record
// (schema.RecordChecker) and the checks across records — in the pass that
// decodes the records, so that replay of a bundle never reports numbers
// from records a run directory's validation would refuse. A bundle's
// blobs are checked against their digests and sizes as they stream, as
// always. What it does not check is what only verify does: signatures, a
// trace replay's workload items against its trace, the shards'
// consistency with the plan, attachments and claims. Where problems are
// found the stream ends with a *schema.ValidationError (wrapping
// schema.ErrInvalid) instead of io.EOF. Later streams are not checked
// again.
type CheckedBundle struct {
	*Bundle
	maxProblems int
	mu          sync.Mutex
	opened      bool

	// The workload layer, read once (Workload) for the record checks and
	// for a trace replay's items.
	wOnce sync.Once
	w     *schema.WorkloadItems
	wps   []schema.Problem
	werr  error
}

var _ schema.Run = (*CheckedBundle)(nil)

// Checked returns b whose first record stream checks the run (see
// CheckedBundle), listing at most maxProblems problems (≤ 0 means
// schema.DefaultMaxProblems) and counting the rest.
func (b *Bundle) Checked(maxProblems int) *CheckedBundle {
	if maxProblems <= 0 {
		maxProblems = schema.DefaultMaxProblems
	}
	return &CheckedBundle{Bundle: b, maxProblems: maxProblems}
}

// OpenRecords implements schema.Run: the first stream checks the run (see
// CheckedBundle), later ones are the bundle's own.
func (c *CheckedBundle) OpenRecords() (schema.RecordIterator, error) {
	c.mu.Lock()
	first := !c.opened
	c.opened = true
	c.mu.Unlock()
	rs, err := c.Bundle.OpenRecordStream()
	if err != nil || !first {
		return rs, err
	}
	m := c.Manifest()
	it := &checkedBundleRecords{rs: rs, rc: schema.NewRecordChecker(m), max: c.maxProblems}
	items, err := c.Workload()
	if err != nil {
		rs.Close()
		return nil, err
	}
	it.rc.SetWorkload(items)
	it.add(schema.ValidateManifest(m, TitleManifest))
	it.add(c.wps)
	if cl := c.Claims(); cl != nil {
		it.add(schema.ValidateClaims(cl, m, TitleClaims))
	}
	return it, nil
}

// Workload returns the workload layer's items (nil without a workload
// layer), read and checked once (workloadItems): the first record stream
// bounds the records by them, and a trace replay reads its items from
// them.
func (c *CheckedBundle) Workload() (*schema.WorkloadItems, error) {
	c.wOnce.Do(func() { c.w, c.wps, c.werr = c.workloadItems() })
	return c.w, c.werr
}

// workloadItems reads the workload layer's items, which bound the
// records' token counts (and fix a trace replay's schedule), as verify
// reads them, and checks the layer against the manifest as verify's
// schema check does (WorkloadProblems): items a manifest does not name
// bound nothing. nil, nil without a workload layer.
func (c *CheckedBundle) workloadItems() (*schema.WorkloadItems, []schema.Problem, error) {
	for _, l := range c.Layers() {
		if l.Kind != KindWorkload {
			continue
		}
		rc, err := c.OpenLayer(l)
		if err != nil {
			return nil, nil, err
		}
		defer rc.Close()
		w := schema.NewWorkloadItems()
		lines := &lineCounter{}
		if _, err := io.Copy(io.MultiWriter(w, lines), rc); err != nil {
			return nil, nil, err
		}
		w.Close()
		return w, WorkloadProblems(c.Manifest(), l, lines.n), nil
	}
	return nil, nil, nil
}

// WorkloadProblems compares a workload layer that streamed to its
// recorded uncompressed digest (so that digest is the workload file's
// SHA-256) and holds lines lines with the manifest's workload.sha256 and
// workload.items, as validate compares a run directory's workload.jsonl.
// verify's schema check and CheckedBundle both report them.
func WorkloadProblems(m *schema.Manifest, l Layer, lines int) []schema.Problem {
	var ps []schema.Problem
	sum := strings.TrimPrefix(string(l.UncompressedDigest), "sha256:")
	if m.Workload.SHA256 != "" && m.Workload.SHA256 != sum {
		ps = append(ps, schema.Problem{File: l.Title, Field: "workload.sha256", Message: fmt.Sprintf("the manifest says %s, the workload hashes to %s", m.Workload.SHA256, sum)})
	}
	if m.Workload.Items > 0 && m.Workload.Items != lines {
		ps = append(ps, schema.Problem{File: l.Title, Field: "workload.items", Message: fmt.Sprintf("the manifest says %d items, the workload has %d lines", m.Workload.Items, lines)})
	}
	return ps
}

// lineCounter counts the newlines written to it.
type lineCounter struct{ n int }

func (c *lineCounter) Write(p []byte) (int, error) {
	c.n += bytes.Count(p, []byte{'\n'})
	return len(p), nil
}

// checkedBundleRecords is a CheckedBundle's first record stream.
type checkedBundleRecords struct {
	rs       *RecordStream
	rc       *schema.RecordChecker
	max      int
	problems []schema.Problem
	omitted  int
	done     error // what every call returns once the records ended
}

func (it *checkedBundleRecords) add(ps []schema.Problem) {
	for _, p := range ps {
		if len(it.problems) < it.max {
			it.problems = append(it.problems, p)
		} else {
			it.omitted++
		}
	}
}

// Next returns the next record, checked. After the last one it returns
// io.EOF for a valid run, else its *schema.ValidationError; a stream
// error (a blob that does not match its digest, a line that does not
// decode) is returned as it is.
func (it *checkedBundleRecords) Next() (*schema.Record, error) {
	if it.done != nil {
		return nil, it.done
	}
	rec, err := it.rs.Next()
	switch {
	case err == io.EOF:
		it.add(it.rc.Finish())
		it.done = io.EOF
		if e := it.Problems(); e != nil {
			it.done = e
		}
		return nil, it.done
	case err != nil:
		it.done = err
		return nil, err
	}
	if len(it.problems) < it.max {
		it.add(it.rc.Check(it.rs.Name(), it.rs.Line(), rec))
	} else {
		it.omitted += it.rc.Count(it.rs.Line(), rec)
	}
	return rec, nil
}

// Problems returns the problems found so far as a *schema.ValidationError,
// or nil: what a reader that stops at a record it cannot take reports
// instead (that record is likely one of them).
func (it *checkedBundleRecords) Problems() error {
	if len(it.problems) == 0 && it.omitted == 0 {
		return nil
	}
	return &schema.ValidationError{Problems: it.problems, Omitted: it.omitted}
}

// Close implements schema.RecordIterator.
func (it *checkedBundleRecords) Close() error { return it.rs.Close() }
