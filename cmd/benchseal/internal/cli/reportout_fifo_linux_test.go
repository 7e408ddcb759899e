package cli

import (
	"bytes"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// TestOutToAPipeWritesThrough: --out naming a device or pipe
// (/dev/null, /dev/stdout) writes the report to it and leaves it in
// place, where the staging file renamed over it had replaced it with a
// regular file.
func TestOutToAPipeWritesThrough(t *testing.T) {
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
	r := reportOut{path: p}
	rf, err := r.open(&IO{Out: &bytes.Buffer{}})
	if err != nil {
		t.Fatal(err)
	}
	io.WriteString(rf.w, "report\n")
	if err := rf.Commit(); err != nil {
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
		t.Errorf("after --out %s is %v (%v), want the named pipe", p, fi.Mode(), err)
	}
}
