package artifact

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"strings"

	"github.com/opencontainers/go-digest"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"
)

// ParseDigest checks that d is "sha256:" followed by 64 lowercase hex
// digits and returns the hex part. Every other algorithm is refused.
func ParseDigest(d string) (string, error) {
	hexPart, ok := strings.CutPrefix(d, "sha256:")
	if !ok {
		return "", fmt.Errorf("digest %q: only sha256 is accepted", d)
	}
	if len(hexPart) != 64 {
		return "", fmt.Errorf("digest %q: want 64 hex digits", d)
	}
	for _, c := range hexPart {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return "", fmt.Errorf("digest %q: not lowercase hex", d)
		}
	}
	return hexPart, nil
}

// DigestBytes returns the sha256 digest of b.
func DigestBytes(b []byte) digest.Digest {
	s := sha256.Sum256(b)
	return digest.Digest("sha256:" + hex.EncodeToString(s[:]))
}

func blobPath(d digest.Digest) string {
	return "blobs/sha256/" + strings.TrimPrefix(string(d), "sha256:")
}

// verifyingReader passes through exactly size bytes, hashing them, and at
// the end checks the digest. Reading past size, or a short stream, is an
// error; so is a digest mismatch. It never returns io.EOF before the check.
type verifyingReader struct {
	r     io.Reader
	h     hash.Hash
	want  digest.Digest
	size  int64
	n     int64
	check string
	blob  string
	what  string // the blob as a reader knows it: layer title or media type
	done  bool
	err   error
}

func newVerifyingReader(r io.Reader, want digest.Digest, size int64, check, blob, what string) *verifyingReader {
	return &verifyingReader{r: r, h: sha256.New(), want: want, size: size, check: check, blob: blob, what: what}
}

// describe names a blob for a reader: its title annotation, else its media
// type.
func describe(d ocispec.Descriptor) string {
	if t := d.Annotations[AnnotationTitle]; t != "" {
		return fmt.Sprintf("%q (%s)", t, d.MediaType)
	}
	if d.MediaType != "" {
		return d.MediaType
	}
	return "blob"
}

func (v *verifyingReader) Read(p []byte) (int, error) {
	if v.err != nil {
		return 0, v.err
	}
	if v.done {
		return 0, io.EOF
	}
	if rem := v.size - v.n; int64(len(p)) > rem {
		p = p[:rem]
	}
	var n int
	var err error
	if len(p) > 0 {
		n, err = v.r.Read(p)
		v.h.Write(p[:n])
		v.n += int64(n)
	}
	if v.n == v.size {
		// Anything past the declared size is an error, and so is an error
		// of the source there (a decoder failing on what follows).
		var one [1]byte
		m, rerr := io.ReadFull(v.r, one[:])
		if m > 0 {
			v.err = invalid(v.check, v.blob, "more data than the declared size %d", v.size)
			return n, v.err
		}
		if rerr != io.EOF {
			v.err = wrapInvalid(v.check, v.blob, fmt.Errorf("after the declared size %d: %w", v.size, rerr))
			return n, v.err
		}
		if got := digest.NewDigestFromBytes(digest.SHA256, v.h.Sum(nil)); got != v.want {
			v.err = invalid(v.check, v.blob, "digest mismatch in %s: expected %s, content is %s", v.what, v.want, got)
			return n, v.err
		}
		v.done = true
		return n, nil
	}
	if err == io.EOF {
		v.err = invalid(v.check, v.blob, "size mismatch: %d bytes, declared %d", v.n, v.size)
		return n, v.err
	}
	if err != nil {
		v.err = wrapInvalid(v.check, v.blob, err)
		return n, v.err
	}
	return n, nil
}
