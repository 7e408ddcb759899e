package verify_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"sort"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/verify"
)

// positions returns up to n+2 byte offsets spread over a file of size.
func positions(size int64, n int) []int64 {
	seen := map[int64]bool{}
	var out []int64
	add := func(p int64) {
		if p >= 0 && p < size && !seen[p] {
			seen[p] = true
			out = append(out, p)
		}
	}
	add(0)
	add(size - 1)
	for i := 1; i <= n; i++ {
		add(size * int64(i) / int64(n+1))
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}

// TestVerifyTamperedDirectoryFails flips one byte at many positions of
// every file of a signed layout directory (oci-layout, index.json, the run
// manifest, every layer, the referrer manifest and the Sigstore bundle);
// every single change must be rejected.
func TestVerifyTamperedDirectoryFails(t *testing.T) {
	p, pub := artifacttest.SignedBundle(t, filepath.Join(t.TempDir(), "b"))
	v := newVerifier(t, []*artifact.PublicKey{pub})
	ctx := context.Background()
	if _, err := v.Verify(ctx, p, verify.Policy{}); err != nil {
		t.Fatal(err)
	}
	var files []string
	filepath.Walk(p, func(f string, fi os.FileInfo, err error) error {
		if err == nil && fi.Mode().IsRegular() {
			files = append(files, f)
		}
		return nil
	})
	total := 0
	for _, f := range files {
		orig, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		rel, _ := filepath.Rel(p, f)
		for _, pos := range positions(int64(len(orig)), 24) {
			for _, mask := range []byte{0x01, 0x80} {
				mod := bytes.Clone(orig)
				mod[pos] ^= mask
				os.WriteFile(f, mod, 0o644)
				res, err := v.Verify(ctx, p, verify.Policy{})
				total++
				if err == nil || res.Verified {
					t.Errorf("%s: byte %d ^ %#x accepted", rel, pos, mask)
				} else if !errors.Is(err, verify.ErrRejected) {
					t.Errorf("%s: byte %d: not a rejection: %v", rel, pos, err)
				}
			}
		}
		os.WriteFile(f, orig, 0o644)
	}
	if _, err := v.Verify(ctx, p, verify.Policy{}); err != nil {
		t.Fatalf("restored bundle: %v", err)
	}
	t.Logf("%d tampered variants over %d files, all rejected", total, len(files))
}

// TestVerifyTamperedTarFails flips bytes inside every tar entry's data.
func TestVerifyTamperedTarFails(t *testing.T) {
	p, pub := artifacttest.SignedBundle(t, filepath.Join(t.TempDir(), "b.tar"))
	v := newVerifier(t, []*artifact.PublicKey{pub})
	ctx := context.Background()
	orig, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	// Find each entry's data range.
	type span struct {
		name     string
		off, len int64
	}
	var spans []span
	cr := &countReader{r: bytes.NewReader(orig)}
	tr := tar.NewReader(cr)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		spans = append(spans, span{h.Name, cr.n, h.Size})
		io.Copy(io.Discard, tr)
	}
	total := 0
	for _, s := range spans {
		for _, pos := range positions(s.len, 12) {
			mod := bytes.Clone(orig)
			mod[s.off+pos] ^= 0x01
			os.WriteFile(p, mod, 0o644)
			res, err := v.Verify(ctx, p, verify.Policy{})
			total++
			if err == nil || res.Verified {
				t.Errorf("%s: byte %d accepted", s.name, pos)
			}
		}
	}
	// Header bytes too (name, size, checksum fields of the first entry).
	for _, pos := range []int64{0, 10, 100, 124, 130, 136, 148, 156} {
		mod := bytes.Clone(orig)
		mod[pos] ^= 0x01
		os.WriteFile(p, mod, 0o644)
		if res, err := v.Verify(ctx, p, verify.Policy{}); err == nil || res.Verified {
			t.Errorf("header byte %d accepted", pos)
		}
		total++
	}
	t.Logf("%d tampered tar variants, all rejected", total)
}

type countReader struct {
	r *bytes.Reader
	n int64
}

func (c *countReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}

// TestVerifyTamperedLayerNamesTheLayerAndBothDigests: the rejection of a
// changed layer says which layer (its title) and labels the digest the
// manifest expects and the digest of the content found.
func TestVerifyTamperedLayerNamesTheLayerAndBothDigests(t *testing.T) {
	p, pub := artifacttest.SignedBundle(t, filepath.Join(t.TempDir(), "b"))
	b, err := artifact.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	var l artifact.Layer
	for _, x := range b.Layers() {
		if x.Title != artifact.TitleManifest {
			l = x
		}
	}
	b.Close()
	f := filepath.Join(p, "blobs", "sha256", l.Descriptor.Digest.Encoded())
	orig, err := os.ReadFile(f)
	if err != nil {
		t.Fatal(err)
	}
	mod := bytes.Clone(orig)
	mod[len(mod)/2] ^= 0x01
	os.WriteFile(f, mod, 0o644)
	_, err = newVerifier(t, []*artifact.PublicKey{pub}).Verify(context.Background(), p, verify.Policy{})
	for _, want := range []string{l.Title, "expected " + string(l.Descriptor.Digest), "content is sha256:"} {
		if err == nil || !bytes.Contains([]byte(err.Error()), []byte(want)) {
			t.Errorf("rejection %v does not say %q", err, want)
		}
	}
}
