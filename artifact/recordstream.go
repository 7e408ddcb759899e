package artifact

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"sync"

	"github.com/benchseal/benchseal/schema"
	"golang.org/x/sync/errgroup"
)

// The record stream reads shards ahead of its caller: each shard is read in
// its own goroutine in one pass (stored digest and size, bounded
// decompression, uncompressed digest and size, strict decoding of every
// line), at most streamWorkers() shards at once, and hands its records over
// in batches. The caller still sees the shards in manifest order and every
// error at the record where it occurred, exactly as a sequential read
// would report it.
const (
	streamBatch    = 256 // records per batch
	streamInFlight = 4   // batches a shard may decode ahead of its reader
)

// streamWorkers is how many shards are read at once: one per two cores, at
// most 4. The reader of a stream and, in verify, the claims recompute each
// keep a core busy beside the shard being read, so on 2 cores a second
// shard would only add its decoder's memory.
func streamWorkers() int { return max(1, min(runtime.GOMAXPROCS(0)/2, 4)) }

// OpenRecords streams every record of every shard, in manifest order
// (load points in the manifest's order, then repeats ascending), each shard
// in the run's original file order (schema.Run). Digests and sizes are
// checked while streaming: a mismatch is returned by Next as an error at
// the end of the shard, so callers must treat any error as fatal.
func (b *Bundle) OpenRecords() (schema.RecordIterator, error) {
	return b.OpenRecordStream()
}

// OpenRecordStream is OpenRecords returning the concrete stream, which also
// reports the shard and line of the last record. Close it to stop the
// shards being read ahead.
func (b *Bundle) OpenRecordStream() (*RecordStream, error) {
	ctx, cancel := context.WithCancel(context.Background())
	s := &RecordStream{layers: b.RecordLayers(), i: -1, cancel: cancel}
	s.shards = make([]chan shardBatch, len(s.layers))
	for i := range s.shards {
		s.shards[i] = make(chan shardBatch, streamInFlight)
	}
	var g errgroup.Group
	g.SetLimit(streamWorkers())
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		// Shards start in manifest order, so the one the caller reads
		// always has a worker: a worker ahead of it blocks only on its
		// own full channel, after its reader's worker started.
		for i := range s.layers {
			if ctx.Err() != nil {
				break
			}
			g.Go(func() error {
				readShard(ctx, b, s.layers[i], s.shards[i])
				return nil
			})
		}
		g.Wait()
	}()
	return s, nil
}

// RecordStream streams the records of a bundle shard by shard.
type RecordStream struct {
	layers []Layer
	shards []chan shardBatch
	cancel context.CancelFunc
	wg     sync.WaitGroup

	i    int // shard being read
	cur  shardBatch
	pos  int
	line int
	err  error
}

// shardBatch is a run of consecutive records of one shard; err (io.EOF at
// the end of the shard) follows the records.
type shardBatch struct {
	recs  []*schema.Record
	first int // line of recs[0]
	err   error
}

// Name returns the title of the current shard ("records/<point>/<repeat>.jsonl.zst").
func (s *RecordStream) Name() string {
	if s.i < 0 || s.i >= len(s.layers) {
		return ""
	}
	return s.layers[s.i].Title
}

// Line returns the line, within the current shard, of the record last
// returned.
func (s *RecordStream) Line() int { return s.line }

// Next returns the next record, or io.EOF after the last one.
func (s *RecordStream) Next() (*schema.Record, error) {
	if s.err != nil {
		return nil, s.err
	}
	for {
		if s.pos < len(s.cur.recs) {
			rec := s.cur.recs[s.pos]
			s.line = s.cur.first + s.pos
			s.pos++
			return rec, nil
		}
		if s.i >= 0 {
			switch err := s.cur.err; {
			case err == io.EOF:
			case err != nil:
				s.line = s.cur.first + len(s.cur.recs)
				s.err = err
				s.cancel()
				return nil, err
			default:
				s.nextBatch()
				continue
			}
		}
		s.i++
		if s.i >= len(s.layers) {
			s.err = io.EOF
			return nil, io.EOF
		}
		s.nextBatch()
	}
}

func (s *RecordStream) nextBatch() {
	s.cur, s.pos = <-s.shards[s.i], 0
}

// Close ends the stream and waits for the shards being read ahead to stop.
func (s *RecordStream) Close() error {
	s.cancel()
	s.wg.Wait()
	if s.err == nil || s.err == io.EOF {
		s.err = errStreamClosed
	}
	return nil
}

var errStreamClosed = fmt.Errorf("record stream closed")

// readShard reads one shard in one pass and sends its records to out,
// ending with io.EOF or the error that stopped it. It stops early, without
// sending, when ctx is cancelled.
func readShard(ctx context.Context, b *Bundle, l Layer, out chan<- shardBatch) {
	send := func(sb shardBatch) bool {
		select {
		case out <- sb:
			return true
		case <-ctx.Done():
			return false
		}
	}
	rc, err := b.OpenLayer(l)
	if err != nil {
		send(shardBatch{first: 1, err: err})
		return
	}
	defer rc.Close()
	src := &errRecorder{r: rc}
	rr := schema.NewRecordReader(src, l.Title)
	var st batchStore
	batch := shardBatch{first: 1}
	var n int64
	fail := func(err error) { batch.err = err; send(batch) }
	for {
		rec := st.next()
		err := rr.NextInto(rec)
		if err == io.EOF {
			break
		}
		n++
		if err != nil {
			var de *schema.DecodeError
			switch {
			case src.err != nil && src.err != io.EOF:
				// The line was cut short by the layer failing its
				// checks (more data than the declared size, a decoder
				// error): that is the cause to report.
				fail(wrapInvalid(CheckUncompressed, l.Title, src.err))
			case errors.As(err, &de):
				fail(invalid(CheckSchema, fmt.Sprintf("%s:%d", l.Title, rr.Line()), "%v", &schema.DecodeError{Field: de.Field, Msg: de.Msg}))
			default:
				fail(wrapInvalid(CheckUncompressed, l.Title, errors.Unwrap(err)))
			}
			return
		}
		if rec.Point != l.Point || rec.Repeat != l.Repeat {
			fail(invalid(CheckSchema, fmt.Sprintf("%s:%d", l.Title, rr.Line()),
				"record of point %q repeat %d in the shard of point %q repeat %d", rec.Point, rec.Repeat, l.Point, l.Repeat))
			return
		}
		batch.recs = append(batch.recs, st.keep(rec))
		if len(batch.recs) == streamBatch {
			if !send(batch) {
				return
			}
			batch = shardBatch{first: rr.Line() + 1}
		}
	}
	if n != l.Records {
		fail(invalid(CheckSchema, l.Title, "%d records, the layer declares %d", n, l.Records))
		return
	}
	fail(io.EOF)
}

// batchStore holds decoded records in a few large allocations instead of
// several per record: records, their chunk arrays and orig bytes are
// carved from slabs that stay alive while any record in them is used.
type batchStore struct {
	recs  []schema.Record
	ints  []int64
	bytes []byte
	vals  []int64
}

const (
	slabRecords = 256
	slabInts    = 32 << 10
	slabBytes   = 64 << 10
)

// next returns a zeroed record to decode into.
func (s *batchStore) next() *schema.Record {
	if len(s.recs) == cap(s.recs) {
		s.recs = make([]schema.Record, 0, slabRecords)
	}
	s.recs = s.recs[:len(s.recs)+1]
	return &s.recs[len(s.recs)-1]
}

// keep moves what rec borrows from the reader's buffers into the slabs
// and returns rec, which is then the caller's for good.
func (s *batchStore) keep(rec *schema.Record) *schema.Record {
	if rec.ChunksNS != nil {
		rec.ChunksNS = s.ints64(rec.ChunksNS)
	}
	if rec.ChunkTokens != nil {
		rec.ChunkTokens = s.ints64(rec.ChunkTokens)
	}
	if rec.Orig != nil {
		if len(s.bytes)+len(rec.Orig) > cap(s.bytes) {
			s.bytes = make([]byte, 0, max(slabBytes, len(rec.Orig)))
		}
		n := len(s.bytes)
		s.bytes = append(s.bytes, rec.Orig...)
		rec.Orig = s.bytes[n:len(s.bytes):len(s.bytes)]
	}
	if rec.Item != nil {
		rec.Item = s.val(*rec.Item)
	}
	if rec.Shard != nil {
		rec.Shard = s.val(*rec.Shard)
	}
	if rec.Session != nil {
		rec.Session = s.val(*rec.Session)
	}
	if rec.Turn != nil {
		rec.Turn = s.val(*rec.Turn)
	}
	if rec.ScheduledNS != nil {
		rec.ScheduledNS = s.val(*rec.ScheduledNS)
	}
	return rec
}

func (s *batchStore) ints64(v []int64) []int64 {
	if len(s.ints)+len(v) > cap(s.ints) {
		s.ints = make([]int64, 0, max(slabInts, len(v)))
	}
	n := len(s.ints)
	s.ints = append(s.ints, v...)
	return s.ints[n:len(s.ints):len(s.ints)]
}

func (s *batchStore) val(v int64) *int64 {
	if len(s.vals) == cap(s.vals) {
		s.vals = make([]int64, 0, 5*slabRecords)
	}
	s.vals = append(s.vals, v)
	return &s.vals[len(s.vals)-1]
}

// errRecorder passes reads through, keeping the first error.
type errRecorder struct {
	r   io.Reader
	err error
}

func (e *errRecorder) Read(p []byte) (int, error) {
	n, err := e.r.Read(p)
	if err != nil && e.err == nil {
		e.err = err
	}
	return n, err
}
