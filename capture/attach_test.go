package capture

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestAttachWriterWritesInOrderAndReportsFailures: every queued answer
// lands in its file byte for byte by the time done returns; a write that
// cannot be made (its directory is a file) is reported under its scrape's
// index, naming the path, and the others are still written; done again
// says the same.
func TestAttachWriterWritesInOrderAndReportsFailures(t *testing.T) {
	dir := t.TempDir()
	blocker := filepath.Join(dir, "blocker")
	if err := os.WriteFile(blocker, []byte("a file, not a directory"), 0o644); err != nil {
		t.Fatal(err)
	}
	var w attachWriter
	const n = 3 * attachQueue // more than the queue holds: write waits, never drops
	want := map[int][]byte{}
	for i := 0; i < n; i++ {
		b := []byte(fmt.Sprintf("# answer %d\n", i))
		p := filepath.Join(dir, "scrapes", fmt.Sprintf("%06d.prom", i))
		if i == 7 {
			p = filepath.Join(blocker, "000007.prom")
		} else {
			want[i] = b
		}
		w.write(i, p, b)
	}
	failed := w.done()
	if len(failed) != 1 || !strings.Contains(failed[7], "blocker") {
		t.Fatalf("done() = %v, want only scrape 7's failure, naming its path", failed)
	}
	for i, b := range want {
		got, err := os.ReadFile(filepath.Join(dir, "scrapes", fmt.Sprintf("%06d.prom", i)))
		if err != nil || !bytes.Equal(got, b) {
			t.Fatalf("scrape %d: %q, %v; want %q", i, got, err, b)
		}
	}
	if again := w.done(); len(again) != 1 || again[7] != failed[7] {
		t.Errorf("done() again = %v, want %v", again, failed)
	}
}

// TestAttachWriterUnusedIsDone: a scraper that stored no answer has
// nothing to wait for.
func TestAttachWriterUnusedIsDone(t *testing.T) {
	var w attachWriter
	if got := w.done(); len(got) != 0 {
		t.Errorf("done() of an unused writer = %v", got)
	}
}
