package replay

import (
	"sync"

	"github.com/benchseal/benchseal/internal/progress"
	"github.com/benchseal/benchseal/schema"
)

// Records reach the engine through a pipeline: one goroutine reads and
// decodes them (and, for a compressed run, the reader decompresses in
// another), handing them over in batches whose storage is reused, so that
// neither a channel operation nor an allocation is paid per record.
const (
	batchRecords    = 512     // records per batch at most
	batchInts       = 1 << 16 // a batch ends early past this many chunk values
	batchesInFlight = 4       // bounds the memory of the pipeline
)

// recordInto is a record iterator that can decode into a record it does
// not own, valid until the next call (schema.RecordReader).
type recordInto interface {
	NextInto(rec *schema.Record) error
}

// recordBatch is a run of consecutive records.
type recordBatch struct {
	recs []*schema.Record
	// err ended the stream after recs (io.EOF after the last record).
	err error

	// Storage of records decoded by NextInto: the records themselves and
	// the arrays they point to, reset when the batch is reused.
	slots []batchSlot
	ints  []int64
	bytes []byte
}

type batchSlot struct {
	rec                               schema.Record
	item, shard, session, turn, sched int64
}

// recordStream reads an iterator in its own goroutine.
type recordStream struct {
	it   schema.RecordIterator
	into recordInto
	full chan *recordBatch
	free chan *recordBatch
	done chan struct{}
	wg   sync.WaitGroup
	read *progress.Counter // counts the records read, nil for none
}

// newRecordStream starts reading it, counting the records on read. Call
// stop before closing it.
func newRecordStream(it schema.RecordIterator, read *progress.Counter) *recordStream {
	s := &recordStream{
		it:   it,
		read: read,
		full: make(chan *recordBatch, batchesInFlight),
		free: make(chan *recordBatch, batchesInFlight),
		done: make(chan struct{}),
	}
	s.into, _ = it.(recordInto)
	for range batchesInFlight {
		s.free <- &recordBatch{}
	}
	s.wg.Add(1)
	go s.run()
	return s
}

func (s *recordStream) run() {
	defer s.wg.Done()
	for {
		var b *recordBatch
		select {
		case b = <-s.free:
		case <-s.done:
			return
		}
		b.fill(s.it, s.into)
		s.read.Add(int64(len(b.recs)))
		select {
		case s.full <- b:
		case <-s.done:
			return
		}
		if b.err != nil {
			return
		}
	}
}

// next returns the next batch; once a batch carries an error, next must
// not be called again.
func (s *recordStream) next() *recordBatch { return <-s.full }

// release gives a batch back for reuse; its records become invalid.
func (s *recordStream) release(b *recordBatch) { s.free <- b } // never blocks: free holds every batch

// stop ends the goroutine and waits for it. It is idempotent.
func (s *recordStream) stop() {
	select {
	case <-s.done:
	default:
		close(s.done)
	}
	s.wg.Wait()
}

// fill reads up to batchRecords records into b.
func (b *recordBatch) fill(it schema.RecordIterator, into recordInto) {
	b.recs, b.err = b.recs[:0], nil
	if into == nil {
		for len(b.recs) < batchRecords {
			rec, err := it.Next()
			if err != nil {
				b.err = err
				return
			}
			b.recs = append(b.recs, rec)
		}
		return
	}
	if b.slots == nil {
		b.slots = make([]batchSlot, batchRecords)
		b.ints = make([]int64, 0, batchInts)
	}
	b.ints, b.bytes = b.ints[:0], b.bytes[:0]
	for len(b.recs) < batchRecords && len(b.ints) < batchInts {
		sl := &b.slots[len(b.recs)]
		rec := &sl.rec
		if err := into.NextInto(rec); err != nil {
			b.err = err
			return
		}
		// Move what aliases the reader's buffers into the batch. Arrays
		// already handed out stay valid when an append reallocates.
		if rec.ChunksNS != nil {
			n := len(b.ints)
			b.ints = append(b.ints, rec.ChunksNS...)
			rec.ChunksNS = b.ints[n:len(b.ints):len(b.ints)]
		}
		if rec.ChunkTokens != nil {
			n := len(b.ints)
			b.ints = append(b.ints, rec.ChunkTokens...)
			rec.ChunkTokens = b.ints[n:len(b.ints):len(b.ints)]
		}
		if rec.Orig != nil {
			n := len(b.bytes)
			b.bytes = append(b.bytes, rec.Orig...)
			rec.Orig = b.bytes[n:len(b.bytes):len(b.bytes)]
		}
		if rec.Item != nil {
			sl.item = *rec.Item
			rec.Item = &sl.item
		}
		if rec.Shard != nil {
			sl.shard = *rec.Shard
			rec.Shard = &sl.shard
		}
		if rec.Session != nil {
			sl.session = *rec.Session
			rec.Session = &sl.session
		}
		if rec.Turn != nil {
			sl.turn = *rec.Turn
			rec.Turn = &sl.turn
		}
		if rec.ScheduledNS != nil {
			sl.sched = *rec.ScheduledNS
			rec.ScheduledNS = &sl.sched
		}
		b.recs = append(b.recs, rec)
	}
}
