package capture

import (
	"os"
	"path/filepath"
	"strings"
	"sync"

	"github.com/benchseal/benchseal/schema"
)

// attachWriter writes a scraper's answers as attachment files on a
// goroutine of its own, in the order they were taken, so that a scrape
// loop never waits on the disk: schema.WriteFileAtomic syncs each file
// and its directory, and on a busy 2-core machine one such write took up
// to 0.67 s, during which a loop of 20 ms accelerator scrapes took none
// (scrapes 0.9 s apart inside a 0.9 s point: its energy lower bound fell
// to 0). A scrape's times, name and digest are fixed when it is taken;
// a write that fails is reported by done, and its scrape then names the
// error instead of a file, as when the write was made in the loop.
// The zero value is ready; the goroutine starts with the first write.
type attachWriter struct {
	jobs   chan attachJob
	closed chan struct{}
	mu     sync.Mutex
	failed map[int]error
	stop   sync.Once
}

// attachJob is one file to write; i is its scrape's index in the
// scraper's list.
type attachJob struct {
	i    int
	path string
	b    []byte
}

// attachQueue is how many answers may wait for the disk before a scrape
// loop does (a few MiB of scrape answers at most).
const attachQueue = 256

// write queues b for path, the file of scrape i. Calls come in scrape
// order (under the scraper's lock) and never after done.
func (w *attachWriter) write(i int, path string, b []byte) {
	if w.jobs == nil {
		w.jobs = make(chan attachJob, attachQueue)
		w.closed = make(chan struct{})
		go w.loop()
	}
	w.jobs <- attachJob{i: i, path: path, b: b}
}

func (w *attachWriter) loop() {
	defer close(w.closed)
	for j := range w.jobs {
		err := os.MkdirAll(filepath.Dir(j.path), 0o755)
		if err == nil {
			err = schema.WriteFileAtomic(j.path, j.b, 0o644)
		}
		if err != nil {
			w.mu.Lock()
			if w.failed == nil {
				w.failed = map[int]error{}
			}
			w.failed[j.i] = err
			w.mu.Unlock()
		}
	}
}

// done waits until every queued file is written, stops the goroutine and
// returns the failed writes by scrape index, each as a manifest string
// (no control characters). Calling it again returns the same.
func (w *attachWriter) done() map[int]string {
	if w.jobs != nil {
		w.stop.Do(func() { close(w.jobs) })
		<-w.closed
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	out := map[int]string{}
	for i, err := range w.failed {
		out[i] = schema.EscapeText(strings.TrimSpace(err.Error()), false)
	}
	return out
}
