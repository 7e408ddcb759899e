package schema

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/klauspost/compress/zstd"

	"github.com/benchseal/benchseal/internal/errcond"
)

// ErrZstdStream is the root of the errors ZstdReader returns about the shape
// of a compressed stream (anything but exactly one zstd frame).
var ErrZstdStream = errors.New("not exactly one zstd frame")

// ZstdReader decompresses a stream that must be exactly one standard zstd
// frame: no skippable frame, no second frame, no byte after the frame's
// end. It is the one zstd reader of benchseal, shared by run directories
// and bundles, so what is hashed, validated and recomputed is exactly what
// `zstd -d` produces from the same bytes. The window is bounded by
// ZstdMaxWindow and decoding uses no extra goroutines.
//
// Read returns io.EOF only once the frame has ended, its checksum (when
// present) matched, and the source is at its end; any decoder error is
// returned, never dropped.
type ZstdReader struct {
	fc  *frameChecker
	dec *zstd.Decoder
	out int64 // bytes decompressed
	err error
}

// NewZstdReader returns a ZstdReader over r.
func NewZstdReader(r io.Reader) (*ZstdReader, error) {
	fc := &frameChecker{r: r}
	dec, err := zstd.NewReader(fc,
		zstd.WithDecoderConcurrency(1),
		zstd.WithDecoderMaxWindow(ZstdMaxWindow),
		zstd.WithDecoderMaxMemory(1<<40),
		zstd.WithDecoderLowmem(true))
	if err != nil {
		return nil, err
	}
	return &ZstdReader{fc: fc, dec: dec}, nil
}

// Read decompresses into p.
func (z *ZstdReader) Read(p []byte) (int, error) {
	if z.err != nil {
		return 0, z.err
	}
	n, err := z.dec.Read(p)
	z.out += int64(n)
	if z.out > MinRatioCheckSize && z.out/MaxCompressionRatio > z.fc.off {
		z.err = fmt.Errorf("zstd: %d bytes decompressed from %d compressed bytes, over %d times: refused as a decompression bomb", z.out, z.fc.off, MaxCompressionRatio)
		return n, z.err
	}
	switch {
	case err == nil:
		return n, nil
	case err == io.EOF:
		if cerr := z.fc.finish(); cerr != nil {
			z.err = cerr
			return n, cerr
		}
		z.err = io.EOF
		return n, io.EOF
	default:
		// The frame checker's error says more than the decoder's view of
		// it (the decoder may report a short read instead).
		if z.fc.err != nil && !errors.Is(z.fc.err, io.EOF) {
			err = z.fc.err
		} else {
			err = fmt.Errorf("zstd: %w", err)
		}
		z.err = err
		return n, err
	}
}

// Close releases the decoder. It does not close the source.
func (z *ZstdReader) Close() error {
	z.dec.Close()
	return nil
}

// Frame parsing states of frameChecker.
const (
	fcMagic = iota
	fcHeader
	fcBlockHeader
	fcBlockBody
	fcChecksum
	fcDone
)

// frameChecker passes a compressed stream through while following the zstd
// frame format (RFC 8878 §3.1.1) just far enough to know where the first
// frame ends, and fails on anything else: a stream that does not start with
// the zstd magic number (a skippable frame included), and any byte after
// the end of the frame.
type frameChecker struct {
	r     io.Reader
	state int
	hdr   [18]byte // magic, frame header or block header being collected
	nh    int      // bytes of hdr collected
	want  int      // bytes hdr must reach in the current state
	skip  int64    // bytes of block body or checksum left
	last  bool     // the current block is the frame's last
	csum  bool     // the frame has a content checksum
	off   int64    // offset in the compressed stream
	err   error
}

var zstdMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

func (c *frameChecker) Read(p []byte) (int, error) {
	if c.err != nil {
		return 0, c.err
	}
	n, err := c.r.Read(p)
	if perr := c.parse(p[:n]); perr != nil {
		c.err = perr
		return n, perr
	}
	if err != nil {
		if err == io.EOF && c.state != fcDone {
			err = errcond.Errorf(ErrZstdStream, "not exactly one zstd frame: truncated at byte %d", c.off)
		}
		c.err = err
		return n, err
	}
	return n, nil
}

func (c *frameChecker) parse(b []byte) error {
	for len(b) > 0 {
		switch c.state {
		case fcMagic, fcHeader, fcBlockHeader:
			if c.want == 0 {
				c.want = 4
				if c.state == fcBlockHeader {
					c.want = 3
				}
			}
			k := min(c.want-c.nh, len(b))
			copy(c.hdr[c.nh:], b[:k])
			c.nh += k
			c.off += int64(k)
			b = b[k:]
			if c.nh < c.want {
				continue
			}
			if err := c.headerDone(); err != nil {
				return err
			}
		case fcBlockBody, fcChecksum:
			k := int(min(c.skip, int64(len(b))))
			c.skip -= int64(k)
			c.off += int64(k)
			b = b[k:]
			if c.skip == 0 {
				c.endBody()
			}
		case fcDone:
			return errcond.Errorf(ErrZstdStream, "not exactly one zstd frame: %d bytes of data after the end of the frame (a second frame, a skippable frame or trailing bytes) at byte %d", len(b), c.off)
		}
	}
	return nil
}

// headerDone acts on a completed magic number, frame header or block
// header.
func (c *frameChecker) headerDone() error {
	switch c.state {
	case fcMagic:
		if string(c.hdr[:4]) != string(zstdMagic) {
			if m := binary.LittleEndian.Uint32(c.hdr[:4]); m&0xfffffff0 == 0x184d2a50 {
				return errcond.Errorf(ErrZstdStream, "not exactly one zstd frame: skippable frame at byte %d", c.off-4)
			}
			return errcond.Errorf(ErrZstdStream, "not exactly one zstd frame: no zstd magic number at byte %d", c.off-4)
		}
		c.state, c.nh, c.want = fcHeader, 0, 1
	case fcHeader:
		fhd := c.hdr[0]
		if c.want == 1 {
			if fhd&0x08 != 0 {
				return errcond.Errorf(ErrZstdStream, "not exactly one zstd frame: reserved bit set in the frame header")
			}
			single := fhd&0x20 != 0
			n := 1
			if !single {
				n++ // window descriptor
			}
			n += []int{0, 1, 2, 4}[fhd&3]
			switch fcs := fhd >> 6; {
			case fcs == 0 && single:
				n++
			case fcs == 1:
				n += 2
			case fcs == 2:
				n += 4
			case fcs == 3:
				n += 8
			}
			c.csum = fhd&0x04 != 0
			if n > 1 {
				c.want = n
				return nil
			}
		}
		c.state, c.nh, c.want = fcBlockHeader, 0, 0
	case fcBlockHeader:
		h := uint32(c.hdr[0]) | uint32(c.hdr[1])<<8 | uint32(c.hdr[2])<<16
		c.last = h&1 != 0
		size := int64(h >> 3)
		switch (h >> 1) & 3 {
		case 1: // RLE: one byte stored
			size = 1
		case 3:
			return errcond.Errorf(ErrZstdStream, "not exactly one zstd frame: reserved block type at byte %d", c.off-3)
		}
		c.nh, c.want = 0, 0
		c.state, c.skip = fcBlockBody, size
		if size == 0 {
			c.endBody()
		}
	}
	return nil
}

// endBody moves on after a block body or the checksum.
func (c *frameChecker) endBody() {
	switch {
	case c.state == fcChecksum:
		c.state = fcDone
	case !c.last:
		c.state = fcBlockHeader
	case c.csum:
		c.state, c.skip = fcChecksum, 4
	default:
		c.state = fcDone
	}
}

// finish is called when the decoder reported the end of its output: the
// frame must be complete and the source exhausted.
func (c *frameChecker) finish() error {
	if c.err != nil && c.err != io.EOF {
		return c.err
	}
	var buf [512]byte
	for empty := 0; c.err == nil; {
		if n, _ := c.Read(buf[:]); n > 0 {
			empty = 0
		} else if empty++; empty == 100 {
			return io.ErrNoProgress
		}
	}
	if c.err != io.EOF {
		return c.err
	}
	if c.state != fcDone {
		return errcond.Errorf(ErrZstdStream, "not exactly one zstd frame: the stream ended inside a frame at byte %d", c.off)
	}
	return nil
}
