package schema_test

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"
	"testing/iotest"

	"github.com/klauspost/compress/zstd"

	"github.com/benchseal/benchseal/schema"
)

func zstdFrame(t testing.TB, data []byte, opts ...zstd.EOption) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw, err := zstd.NewWriter(&buf, append([]zstd.EOption{zstd.WithEncoderConcurrency(1)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	zw.Write(data)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// rawFrame is a hand-made frame: no content size, a 1 MiB window, one raw
// last block holding data (as `28 b5 2f fd 00 50` + block header in the
// issue's reproduction).
func rawFrame(data []byte) []byte {
	h := uint32(len(data))<<3 | 1 // raw, last
	return append([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x50, byte(h), byte(h >> 8), byte(h >> 16)}, data...)
}

func skippable(data []byte) []byte {
	n := len(data)
	return append([]byte{0x50, 0x2a, 0x4d, 0x18, byte(n), byte(n >> 8), byte(n >> 16), byte(n >> 24)}, data...)
}

func cat(bs ...[]byte) []byte { return bytes.Join(bs, nil) }

func TestZstdReaderAcceptsExactlyOneFrame(t *testing.T) {
	content := bytes.Repeat([]byte(`{"a":1}`+"\n"), 1000)
	good := zstdFrame(t, content)
	for name, blob := range map[string][]byte{
		"pinned writer": good,
		"checksum":      zstdFrame(t, content, zstd.WithEncoderCRC(true)),
		"no checksum":   zstdFrame(t, content, zstd.WithEncoderCRC(false)),
		"empty content": zstdFrame(t, nil, zstd.WithZeroFrames(true)),
		"hand-made raw": rawFrame(content),
		"multi-segment": zstdFrame(t, content, zstd.WithSingleSegment(false), zstd.WithWindowSize(1<<20)),
	} {
		t.Run(name, func(t *testing.T) {
			for _, r := range []io.Reader{bytes.NewReader(blob), iotest.OneByteReader(bytes.NewReader(blob)), iotest.HalfReader(bytes.NewReader(blob))} {
				zr, err := schema.NewZstdReader(r)
				if err != nil {
					t.Fatal(err)
				}
				out, err := io.ReadAll(zr)
				zr.Close()
				if err != nil {
					t.Fatal(err)
				}
				if name != "empty content" && !bytes.Equal(out, content) {
					t.Fatalf("got %d bytes, want %d", len(out), len(content))
				}
			}
		})
	}
}

func TestZstdReaderRejectsAnythingAfterTheFrame(t *testing.T) {
	content := bytes.Repeat([]byte(`{"a":1}`+"\n"), 1000)
	good := zstdFrame(t, content)
	extra := []byte(`{"a":2}` + "\n")
	for name, blob := range map[string][]byte{
		"trailing garbage":         cat(good, []byte("GARBAGE!")),
		"one trailing byte":        cat(good, []byte{0}),
		"second frame":             cat(good, zstdFrame(t, extra)),
		"second hand-made frame":   cat(good, rawFrame(extra)),
		"trailing skippable frame": cat(good, skippable([]byte("x"))),
		"leading skippable frame":  cat(skippable([]byte("x")), good),
		"truncated":                good[:len(good)-1],
		"truncated header":         good[:5],
		"empty":                    nil,
		"not zstd":                 []byte("plain text\n"),
		"window over the cap":      cat([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x70, 0x41, 0, 0}, extra),
		"second frame, big window": cat(good, []byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, 0x70, 0x41, 0, 0}, extra),
		"corrupt checksum":         cat(good[:len(good)-1], []byte{good[len(good)-1] ^ 1}),
	} {
		t.Run(name, func(t *testing.T) {
			for _, r := range []io.Reader{bytes.NewReader(blob), iotest.OneByteReader(bytes.NewReader(blob))} {
				zr, err := schema.NewZstdReader(r)
				if err != nil {
					t.Fatal(err)
				}
				_, err = io.ReadAll(zr)
				zr.Close()
				if err == nil {
					t.Fatal("accepted")
				}
			}
		})
	}
	zr, _ := schema.NewZstdReader(bytes.NewReader(cat(good, []byte("GARBAGE!"))))
	if _, err := io.ReadAll(zr); !errors.Is(err, schema.ErrZstdStream) {
		t.Errorf("trailing garbage: %v, want ErrZstdStream", err)
	}
}

// TestRunDirRejectsTrailingZstdData: the run-directory path uses the same
// reader, so validate rejects what verify rejects.
func TestRunDirRejectsTrailingZstdData(t *testing.T) {
	dir := baseRun(t, true)
	p := dir + "/" + schema.RecordsZstdFile
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	if err := schema.ValidateRunDocuments(dir, 10); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, cat(b, []byte("GARBAGE!")), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := schema.ValidateRunDocuments(dir, 10); err == nil {
		t.Fatal("validate accepted an extra zstd frame")
	}
}

// FuzzZstdReader: the verifying reader never panics, and whatever it
// accepts is exactly one frame whose content equals what a plain zstd
// decoder produces from the same bytes (no byte of input left unchecked).
func FuzzZstdReader(f *testing.F) {
	content := bytes.Repeat([]byte(`{"a":1}`+"\n"), 50)
	good := zstdFrame(f, content)
	f.Add(good)
	f.Add(cat(good, []byte("GARBAGE!")))
	f.Add(cat(good, rawFrame([]byte("x\n"))))
	f.Add(rawFrame([]byte("x\n")))
	f.Add(cat(skippable([]byte("x")), good))
	f.Add(zstdFrame(f, content, zstd.WithEncoderCRC(false)))
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, blob []byte) {
		zr, err := schema.NewZstdReader(bytes.NewReader(blob))
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		out, err := io.ReadAll(io.LimitReader(zr, 16<<20))
		if err != nil {
			return
		}
		dec, _ := zstd.NewReader(nil, zstd.WithDecoderMaxWindow(schema.ZstdMaxWindow), zstd.WithDecoderConcurrency(1))
		defer dec.Close()
		want, derr := dec.DecodeAll(blob, nil)
		if derr != nil {
			t.Fatalf("accepted %d bytes the plain decoder rejects: %v", len(blob), derr)
		}
		if !bytes.Equal(out, want) && len(out) < 16<<20 {
			t.Fatalf("accepted output differs from the plain decoder's (%d vs %d bytes)", len(out), len(want))
		}
	})
}
