package verify

import (
	"context"
	"errors"
	"io"
	"sync"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/internal/progress"
	"github.com/benchseal/benchseal/schema"
)

// feedBatch is how many records cross from the content check to the claims
// recompute at once.
const feedBatch = 512

// recordFeed is the bundle as the claims recompute sees it: its first
// OpenRecords returns the records the content check decodes, handed over as
// they stream, so each records layer is read and decompressed once for
// both. Everything else is the bundle's own (attachments included). A
// second OpenRecords streams the bundle again. The recompute's result is
// only used when the content check passed, so it never rests on records
// that check rejected.
type recordFeed struct {
	*artifact.Bundle
	ch       chan []*schema.Record
	stop     chan struct{} // closed when the recompute no longer reads
	stopOnce sync.Once
	batch    []*schema.Record
	err      error // why the feed ended early; read after ch is closed
	mu       sync.Mutex
	opened   bool
}

func newRecordFeed(b *artifact.Bundle) *recordFeed {
	return &recordFeed{Bundle: b, ch: make(chan []*schema.Record, 4), stop: make(chan struct{})}
}

// errFeedEnded ends the recompute's stream when the content check stopped
// before the last record.
var errFeedEnded = errors.New("records stream ended early (the content check stopped)")

// push hands one record to the recompute; it never blocks once the
// recompute has stopped reading.
func (f *recordFeed) push(rec *schema.Record) {
	f.batch = append(f.batch, rec)
	if len(f.batch) == feedBatch {
		f.flush()
	}
}

func (f *recordFeed) flush() {
	if len(f.batch) == 0 {
		return
	}
	select {
	case f.ch <- f.batch:
	case <-f.stop:
	}
	f.batch = make([]*schema.Record, 0, feedBatch)
}

// finish ends the stream: complete when err is nil, otherwise with err.
// It must be called exactly once.
func (f *recordFeed) finish(err error) {
	if err == nil {
		f.flush()
	} else {
		f.err = err
	}
	close(f.ch)
}

// done tells a producer still pushing that nobody reads any more.
func (f *recordFeed) done() { f.stopOnce.Do(func() { close(f.stop) }) }

// OpenRecords implements schema.Run.
func (f *recordFeed) OpenRecords() (schema.RecordIterator, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.opened {
		return f.Bundle.OpenRecords()
	}
	f.opened = true
	return &feedIterator{f: f}, nil
}

type feedIterator struct {
	f   *recordFeed
	cur []*schema.Record
}

// Next implements schema.RecordIterator.
func (it *feedIterator) Next() (*schema.Record, error) {
	for len(it.cur) == 0 {
		b, ok := <-it.f.ch
		if !ok {
			if it.f.err != nil {
				return nil, it.f.err
			}
			return nil, io.EOF
		}
		it.cur = b
	}
	rec := it.cur[0]
	it.cur = it.cur[1:]
	return rec, nil
}

// Close implements schema.RecordIterator.
func (it *feedIterator) Close() error {
	it.f.done()
	return nil
}

// claimsRun is a claims recompute running beside the content check.
type claimsRun struct {
	feed   *recordFeed
	cancel context.CancelFunc
	out    chan claimsResult
}

type claimsResult struct {
	checks []schema.ClaimCheck
	flags  []schema.PointFlags
	err    error
}

// startClaims starts the claims recompute over the records the content
// check will push into the returned run's feed.
func (v *Verifier) startClaims(ctx context.Context, b *artifact.Bundle) *claimsRun {
	// The recompute reads the records this pass feeds it: their count is
	// verify's to report, not the replay's.
	cctx, cancel := context.WithCancel(progress.Off(ctx))
	c := &claimsRun{feed: newRecordFeed(b), cancel: cancel, out: make(chan claimsResult, 1)}
	go func() {
		var r claimsResult
		if fc, ok := v.checker.(FlagChecker); ok {
			r.checks, r.flags, r.err = fc.CheckClaimsAndFlags(cctx, c.feed)
		} else {
			r.checks, r.err = v.checker.CheckClaims(cctx, c.feed)
		}
		c.feed.done()
		c.out <- r
	}()
	return c
}

// wait returns the recompute's result.
func (c *claimsRun) wait() claimsResult {
	r := <-c.out
	c.cancel()
	return r
}

// abandon stops the recompute and waits for it to end.
func (c *claimsRun) abandon() {
	c.cancel()
	c.feed.done()
	<-c.out
}
