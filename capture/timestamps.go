// How a chunk is timestamped.
//
// Every time in a record is nanoseconds on one monotonic clock, counted
// from the run's t=0 (markStart, taken just before the first request and
// stored as manifest.epoch_unix_ns):
//
//   - sent_ns is read in (*runner).do right before the request is handed
//     to the HTTP client.
//   - A chunk's time is the clock read right after the read() call that
//     delivered the end of its event's last data line, before the event is
//     split or parsed (SSEReader.fill stores it, Event.At carries it,
//     ReadStream collects it per content chunk). Bytes that arrive in one
//     read() share that read's time: the client cannot tell them apart.
//   - (*runner).readStream stores chunk times relative to sent_ns
//     (chunks_ns) and end_ns as the time of [DONE] or the error event.
//
// Parsing time therefore never enters a timestamp; a slow parser only
// delays the next read.

package capture

import (
	"time"

	"github.com/benchseal/benchseal/schema"
)

// now reads the run's clock: nanoseconds since t=0 (monotonic).
func (r *runner) now() int64 { return int64(time.Since(r.start)) }

// markStart takes the run's t=0 from the wall clock and dates m with it.
func (r *runner) markStart(m *schema.Manifest) {
	r.start = time.Now()
	m.EpochUnixNS = r.start.UnixNano()
	m.StartTime = r.start.UTC().Format(time.RFC3339Nano)
	m.FinishTime = m.StartTime
}
