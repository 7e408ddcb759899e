package capture

import (
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/benchseal/benchseal/schema"
)

// sink appends records to records.jsonl as requests finish. Records are
// encoded by the goroutine that finished the request, gathered in memory
// and written by one flusher goroutine every interval (or sooner when a
// megabyte is pending). A killed process may leave a torn last line (a
// large buffer is not written atomically); a write that fails or is cut
// short (a full disk, a file-size limit) is undone: the file is truncated
// back to the end of the last complete line and no further records are
// written, so the run kept is valid and marked incomplete.
//
// The memory it holds is bounded: when max bytes are pending (the disk is
// slower than the load), add waits for the flusher to take them. Waiting
// holds up the request that finished, so a stalled disk shows as send lag
// in the records rather than as a process that grows until it is killed.
type sink struct {
	f        *os.File
	write    func([]byte) (int, error) // f.Write; tests replace it
	mu       sync.Mutex
	room     *sync.Cond // signalled when the flusher takes the buffer
	max      int
	waits    int64 // times add waited for room, for tests
	closing  bool  // set by close: add no longer waits
	buf      []byte
	bufN     int64 // records in buf
	spare    []byte
	n        int64 // records written completely
	written  int64 // bytes written, always at a line end
	failed   bool  // a write failed: records are no longer kept
	err      error
	kick     chan struct{}
	stop     chan struct{}
	done     chan struct{}
	interval time.Duration
	encPool  sync.Pool
}

const (
	sinkKickBytes = 1 << 20
	sinkMaxBytes  = 64 << 20
)

func newSink(path string, interval time.Duration) (*sink, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, fmt.Errorf("create records: %w", err)
	}
	return newSinkFile(f, interval), nil
}

// newSinkFile starts a sink writing to f, which it closes.
func newSinkFile(f *os.File, interval time.Duration) *sink {
	if interval <= 0 {
		interval = 200 * time.Millisecond
	}
	s := &sink{f: f, write: f.Write, max: sinkMaxBytes, kick: make(chan struct{}, 1), stop: make(chan struct{}), done: make(chan struct{}), interval: interval}
	s.room = sync.NewCond(&s.mu)
	go s.loop()
	return s
}

// add encodes and queues one record, waiting while max bytes are pending.
// A record that cannot be encoded fails the sink (close returns the error),
// so it is never dropped silently.
func (s *sink) add(rec *schema.Record) {
	bp, _ := s.encPool.Get().(*[]byte)
	if bp == nil {
		b := make([]byte, 0, 1024)
		bp = &b
	}
	b, err := schema.AppendRecord((*bp)[:0], rec)
	if err != nil {
		s.mu.Lock()
		if s.err == nil {
			s.err = fmt.Errorf("encode record %q: %w", rec.ID, err)
		}
		s.mu.Unlock()
		return
	}
	b = append(b, '\n')
	s.mu.Lock()
	for len(s.buf) > 0 && len(s.buf)+len(b) > s.max && !s.closing {
		s.waits++
		select {
		case s.kick <- struct{}{}:
		default:
		}
		s.room.Wait()
	}
	if s.failed {
		s.mu.Unlock()
		*bp = b
		s.encPool.Put(bp)
		return
	}
	s.buf = append(s.buf, b...)
	s.bufN++
	big := len(s.buf) >= sinkKickBytes
	s.mu.Unlock()
	*bp = b
	s.encPool.Put(bp)
	if big {
		select {
		case s.kick <- struct{}{}:
		default:
		}
	}
}

func (s *sink) loop() {
	defer close(s.done)
	t := time.NewTicker(s.interval)
	defer t.Stop()
	for {
		select {
		case <-t.C:
		case <-s.kick:
		case <-s.stop:
			s.flush()
			return
		}
		s.flush()
	}
}

// flush writes what is pending. Only the flusher goroutine calls it. A
// write that fails or is cut short is undone (truncated back to the last
// complete line) and fails the sink: later records are dropped.
func (s *sink) flush() {
	s.mu.Lock()
	b, n := s.buf, s.bufN
	s.buf, s.bufN = s.spare[:0], 0
	s.room.Broadcast()
	s.mu.Unlock()
	if len(b) > 0 {
		w, err := s.write(b)
		if err == nil && w < len(b) {
			err = io.ErrShortWrite
		}
		s.mu.Lock()
		if err == nil {
			s.written += int64(w)
			s.n += n
		} else {
			s.failed = true
			s.buf, s.bufN = nil, 0
			s.room.Broadcast()
			if s.err == nil {
				s.err = fmt.Errorf("write records: %w", err)
			}
			if w > 0 {
				if terr := s.f.Truncate(s.written); terr != nil {
					s.err = fmt.Errorf("%w; removing the torn line: %w", s.err, terr)
				}
			}
		}
		s.mu.Unlock()
	}
	s.spare = b[:0]
	if cap(s.spare) > 16<<20 {
		s.spare = nil
	}
}

// count returns the number of records written completely to the file.
func (s *sink) count() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n
}

// close flushes everything, syncs and closes the file.
func (s *sink) close() error {
	s.mu.Lock()
	s.closing = true
	s.room.Broadcast()
	s.mu.Unlock()
	close(s.stop)
	<-s.done
	s.mu.Lock()
	err := s.err
	s.mu.Unlock()
	if serr := s.f.Sync(); err == nil && serr != nil {
		err = fmt.Errorf("sync records: %w", serr)
	}
	if cerr := s.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("close records: %w", cerr)
	}
	return err
}
