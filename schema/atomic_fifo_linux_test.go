package schema

import (
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestWriteFileAtomicWritesThroughAPipe: a named pipe (as /dev/null or
// /dev/stdout, not a regular file) is written to, and stays a pipe: a
// rename over it would have put a regular file in its place.
func TestWriteFileAtomicWritesThroughAPipe(t *testing.T) {
	p := filepath.Join(t.TempDir(), "pipe")
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Skip("no named pipes here:", err)
	}
	got := make(chan []byte, 1)
	go func() {
		f, err := os.Open(p)
		if err != nil {
			got <- nil
			return
		}
		b, _ := io.ReadAll(f)
		f.Close()
		got <- b
	}()
	if err := WriteFileAtomic(p, []byte("report\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	select {
	case b := <-got:
		if string(b) != "report\n" {
			t.Errorf("the pipe's reader got %q", b)
		}
	case <-time.After(10 * time.Second):
		t.Error("nothing was written to the pipe in 10 s")
	}
	if fi, err := os.Lstat(p); err != nil || fi.Mode()&os.ModeNamedPipe == 0 {
		t.Errorf("after the write %s is %v (%v), want the named pipe", p, fi.Mode(), err)
	}
}
