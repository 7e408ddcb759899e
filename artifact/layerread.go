package artifact

import (
	"errors"
	"fmt"
	"io"

	"github.com/benchseal/benchseal/schema"
)

// OpenBlob streams the stored bytes of a layer; the size and digest are
// checked as the bytes stream, and a mismatch is returned as an error by
// Read (before io.EOF).
func (b *Bundle) OpenBlob(l Layer) (io.ReadCloser, error) {
	rc, err := b.src.open(blobPath(l.Descriptor.Digest))
	if err != nil {
		return nil, err
	}
	vr := newVerifyingReader(rc, l.Descriptor.Digest, l.Descriptor.Size, CheckDescriptors, string(l.Descriptor.Digest), describe(l.Descriptor))
	return struct {
		io.Reader
		io.Closer
	}{vr, rc}, nil
}

// OpenLayer streams the uncompressed content of a layer. The stored digest
// and size, and the uncompressed digest and size, are checked as the bytes
// stream; decompression uses a bounded window and never produces more than
// the declared uncompressed size.
func (b *Bundle) OpenLayer(l Layer) (io.ReadCloser, error) {
	rc, err := b.src.open(blobPath(l.Descriptor.Digest))
	if err != nil {
		return nil, err
	}
	stored := newVerifyingReader(rc, l.Descriptor.Digest, l.Descriptor.Size, CheckDescriptors, string(l.Descriptor.Digest), describe(l.Descriptor))
	if !l.Compressed {
		return struct {
			io.Reader
			io.Closer
		}{stored, rc}, nil
	}
	zr, err := schema.NewZstdReader(stored)
	if err != nil {
		rc.Close()
		return nil, wrapInvalid(CheckUncompressed, l.Title, err)
	}
	return &layerReader{
		rc: rc, stored: stored, zr: zr,
		un: newVerifyingReader(&zstdErrReader{zr: zr, title: l.Title}, l.UncompressedDigest, l.UncompressedSize, CheckUncompressed, l.Title, fmt.Sprintf("the uncompressed content of %q", l.Title)),
	}, nil
}

// zstdErrReader names the layer in decompression errors.
type zstdErrReader struct {
	zr    io.Reader
	title string
}

func (z *zstdErrReader) Read(p []byte) (int, error) {
	n, err := z.zr.Read(p)
	if err != nil && err != io.EOF {
		var ae *Error
		if errors.As(err, &ae) {
			return n, err
		}
		return n, invalid(CheckUncompressed, z.title, "decompress: %v", err)
	}
	return n, err
}

type layerReader struct {
	rc     io.Closer
	stored *verifyingReader
	zr     io.Closer
	un     *verifyingReader
	done   bool
}

func (l *layerReader) Read(p []byte) (int, error) {
	if l.done {
		return 0, io.EOF
	}
	n, err := l.un.Read(p)
	if err == io.EOF || (err == nil && l.un.done) {
		// The frame ended: the stored stream must be fully consumed and
		// match its digest too.
		if _, derr := io.Copy(io.Discard, l.stored); derr != nil {
			return n, derr
		}
		if !l.stored.done {
			return n, invalid(CheckDescriptors, string(l.stored.want), "stored blob not fully consumed")
		}
		l.done = true
		if n > 0 {
			return n, nil
		}
		return 0, io.EOF
	}
	return n, err
}

func (l *layerReader) Close() error {
	l.zr.Close()
	return l.rc.Close()
}
