package capture

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"testing"
	"time"

	"github.com/benchseal/benchseal/schema"
)

// TestSinkBoundsMemory: when the records file does not take bytes (a
// stalled disk; here a pipe nobody reads), add waits for room instead of
// gathering every record in memory, and nothing is lost or reordered once
// the writes go through.
func TestSinkBoundsMemory(t *testing.T) {
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	defer pr.Close()
	s := newSinkFile(pw, time.Millisecond)
	s.max = 4 << 10
	const n = 4000 // ≈ 400 KB of records: far more than the pipe's buffer
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := range n {
			s.add(&schema.Record{ID: strconv.Itoa(i), Status: schema.StatusOK, ChunksNS: []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}})
		}
	}()
	// Until add has had to wait, the adder cannot have finished: it can
	// queue at most max bytes beyond what the blocked pipe took.
	for waited := false; !waited; {
		select {
		case <-done:
			t.Fatalf("all %d records were queued while the file took none: the sink buffer is unbounded", n)
		default:
		}
		s.mu.Lock()
		waited = s.waits > 0
		if len(s.buf) > s.max {
			t.Errorf("pending %d bytes, more than the bound %d", len(s.buf), s.max)
		}
		s.mu.Unlock()
		runtime.Gosched()
	}
	lines := make(chan []string)
	go func() {
		var got []string
		sc := bufio.NewScanner(pr)
		for sc.Scan() {
			got = append(got, sc.Text())
		}
		lines <- got
	}()
	<-done
	s.close() // the pipe cannot be synced: only the content matters here
	got := <-lines
	if len(got) != n {
		t.Fatalf("read %d records, want %d", len(got), n)
	}
	for i, l := range got {
		rec, err := schema.DecodeRecord([]byte(l))
		if err != nil {
			t.Fatalf("line %d: %v", i+1, err)
		}
		if rec.ID != strconv.Itoa(i) {
			t.Fatalf("line %d holds record %s, want %d", i+1, rec.ID, i)
		}
	}
}
