package capture

import (
	"bufio"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"syscall"
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

// TestSinkShortWriteLeavesWholeLines: a write cut short in the middle of
// the buffer (a full disk, a file-size limit) is undone back to the last
// complete line, and no record is written after it, so records.jsonl holds
// only whole records and count says how many.
func TestSinkShortWriteLeavesWholeLines(t *testing.T) {
	for _, tc := range []struct {
		name string
		fail func(f *os.File, b []byte) (int, error)
	}{
		{"short", func(f *os.File, b []byte) (int, error) { return f.Write(b[:len(b)/2]) }},
		{"error", func(f *os.File, b []byte) (int, error) {
			n, _ := f.Write(b[:len(b)/3])
			return n, syscall.ENOSPC
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(t.TempDir(), schema.RecordsFile)
			f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY|os.O_APPEND, 0o644)
			if err != nil {
				t.Fatal(err)
			}
			s := newSinkFile(f, time.Hour)
			writes := 0
			s.write = func(b []byte) (int, error) {
				writes++
				if writes == 2 {
					return tc.fail(f, b)
				}
				return f.Write(b)
			}
			rec := func(i int) *schema.Record {
				return &schema.Record{ID: strconv.Itoa(i), Status: schema.StatusOK, ChunksNS: []int64{1, 2, 3, 4, 5, 6, 7, 8, 9, 10}}
			}
			for i := range 10 {
				s.add(rec(i))
			}
			s.flush() // write 1: complete
			for i := 10; i < 30; i++ {
				s.add(rec(i))
			}
			s.flush() // write 2: cut short
			for i := 30; i < 40; i++ {
				s.add(rec(i))
			}
			if err := s.close(); err == nil {
				t.Fatal("close after a failed write returned no error")
			}
			if writes != 2 {
				t.Errorf("%d writes; want none after the failed one", writes)
			}
			data, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if len(data) == 0 || data[len(data)-1] != '\n' {
				t.Fatalf("records.jsonl ends in a torn line: %q", data[max(0, len(data)-40):])
			}
			lines := strings.Split(strings.TrimSuffix(string(data), "\n"), "\n")
			if len(lines) != 10 || s.count() != 10 {
				t.Fatalf("%d lines, count %d; want the 10 written before the failure", len(lines), s.count())
			}
			for i, l := range lines {
				if _, err := schema.DecodeRecord([]byte(l)); err != nil {
					t.Fatalf("line %d: %v", i+1, err)
				}
			}
		})
	}
}
