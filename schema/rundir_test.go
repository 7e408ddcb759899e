package schema

import (
	"bytes"
	"errors"
	"io"
	"math/rand/v2"
	"testing"
	"testing/iotest"
)

func TestReadAheadReturnsSourceBytesThenError(t *testing.T) {
	data := make([]byte, 3*readAheadSize+12345)
	r := rand.New(rand.NewPCG(1, 1))
	for i := range data {
		data[i] = byte(r.Uint32())
	}
	t.Run("bytes", func(t *testing.T) {
		// A source returning short reads, as a decompressor does.
		ra := newReadAhead(iotest.HalfReader(bytes.NewReader(data)))
		defer ra.close()
		if err := iotest.TestReader(ra, data); err != nil {
			t.Fatal(err)
		}
	})
	t.Run("error", func(t *testing.T) {
		bad := errors.New("corrupt block")
		ra := newReadAhead(io.MultiReader(bytes.NewReader(data), iotest.ErrReader(bad)))
		defer ra.close()
		got, err := io.ReadAll(ra)
		if !errors.Is(err, bad) || !bytes.Equal(got, data) {
			t.Fatalf("read %d bytes, err %v; want %d bytes, then %v", len(got), err, len(data), bad)
		}
		if _, err := ra.Read(make([]byte, 1)); !errors.Is(err, bad) {
			t.Fatalf("read after the error: %v, want it again", err)
		}
	})
	t.Run("close-early", func(t *testing.T) {
		ra := newReadAhead(bytes.NewReader(data))
		if _, err := ra.Read(make([]byte, 10)); err != nil {
			t.Fatal(err)
		}
		ra.close() // must not hang with the goroutine blocked on full buffers
		ra.close()
	})
	t.Run("no-progress", func(t *testing.T) {
		ra := newReadAhead(iotest.ErrReader(nil)) // (0, nil) forever
		defer ra.close()
		if _, err := io.ReadAll(ra); !errors.Is(err, io.ErrNoProgress) {
			t.Fatalf("err = %v, want io.ErrNoProgress", err)
		}
	})
}
