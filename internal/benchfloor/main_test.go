package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
	"testing/iotest"

	"github.com/klauspost/compress/zstd"
)

// TestScanCountsEveryInteger: integers split across reads (one byte a read)
// and one ending the file are each counted once.
func TestScanCountsEveryInteger(t *testing.T) {
	const text = `{"id":12,"ttft_ns":3400,"chunk_ns":[5,60,700]}` + "\n" + `{"id":13}` + "\n" + `99`
	var buf bytes.Buffer
	w, err := zstd.NewWriter(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte(text)); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	name := filepath.Join(t.TempDir(), "records.jsonl.zst")
	if err := os.WriteFile(name, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	var s scan
	if err := scanFile(name, &s); err != nil {
		t.Fatal(err)
	}
	if s.n != 7 || s.sum != 12+3400+5+60+700+13+99 {
		t.Fatalf("scanFile: %d integers, sum %d; want 7, %d", s.n, s.sum, 12+3400+5+60+700+13+99)
	}
	var one scan
	if err := scanReader(iotest.OneByteReader(bytes.NewReader([]byte(text))), &one); err != nil {
		t.Fatal(err)
	}
	if one.end(); one.n != 7 || one.sum != s.sum {
		t.Fatalf("one byte a read: %d integers, sum %d; want 7, %d", one.n, one.sum, s.sum)
	}
}

// TestScanFileNamesBadInput: a file that is not zstd is an error.
func TestScanFileNamesBadInput(t *testing.T) {
	name := filepath.Join(t.TempDir(), "plain.jsonl")
	if err := os.WriteFile(name, []byte(`{"id":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	var s scan
	if err := scanFile(name, &s); err == nil {
		t.Fatal("scanFile of a plain file: no error")
	}
}
