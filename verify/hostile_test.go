package verify_test

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/klauspost/compress/zstd"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/verify"
)

// TestVerifyRejectsDataAfterTheRecordsFrame crafts records blobs whose
// first zstd frame is the valid shard (so the declared uncompressed digest
// and size still match) followed by more bytes, re-digests them into the
// manifest and re-signs the statement: only the rule "the blob is exactly
// one zstd frame" can reject them, and `zstd -d` would otherwise produce
// more lines than were checked.
func TestVerifyRejectsDataAfterTheRecordsFrame(t *testing.T) {
	moreLines := []byte(`{"x":1}` + "\n" + `{"x":2}` + "\n")
	h := uint32(len(moreLines))<<3 | 1
	rawFrame := func(wd byte) []byte {
		return append([]byte{0x28, 0xb5, 0x2f, 0xfd, 0x00, wd, byte(h), byte(h >> 8), byte(h >> 16)}, moreLines...)
	}
	var zf bytes.Buffer
	zw, _ := zstd.NewWriter(&zf, zstd.WithEncoderConcurrency(1))
	zw.Write(moreLines)
	zw.Close()
	skip := []byte{0x50, 0x2a, 0x4d, 0x18, 4, 0, 0, 0, 'j', 'u', 'n', 'k'}
	cases := map[string]func(good []byte) []byte{
		"trailing garbage":                 func(g []byte) []byte { return append(g, "GARBAGE!"...) },
		"extra frame, window over the cap": func(g []byte) []byte { return append(g, rawFrame(0x70)...) },
		"extra frame, small window":        func(g []byte) []byte { return append(g, rawFrame(0x50)...) },
		"extra encoder frame":              func(g []byte) []byte { return append(g, zf.Bytes()...) },
		"trailing skippable frame":         func(g []byte) []byte { return append(g, skip...) },
		"leading skippable frame":          func(g []byte) []byte { return append(append([]byte{}, skip...), g...) },
	}
	for name, craft := range cases {
		t.Run(name, func(t *testing.T) {
			p := artifacttest.PackRun(t, filepath.Join(t.TempDir(), "b"), artifacttest.RunOptions{})
			b, err := artifact.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			i := len(b.Layers()) - 2 // the last records shard
			l := b.Layers()[i]
			b.Close()
			if l.Kind != artifact.KindRecords {
				t.Fatalf("layer %d is %s", i, l.Kind)
			}
			good, err := os.ReadFile(filepath.Join(p, "blobs", "sha256", l.Descriptor.Digest.Encoded()))
			if err != nil {
				t.Fatal(err)
			}
			artifacttest.ReplaceLayer(t, p, i, craft(good), nil)
			sig := artifacttest.SignStatementOf(t, p)
			v := newVerifier(t, []*artifact.PublicKey{artifacttest.Publisher(t).Public()})
			res, err := v.Verify(context.Background(), p, verify.Policy{Detached: [][]byte{sig}})
			if err == nil || res.Verified {
				t.Fatal("VERIFIED a records blob with data after its frame")
			}
			if c := res.Check(verify.CheckUncompressed); c == nil || c.Status != verify.StatusFailed {
				t.Errorf("want the uncompressed check to fail, got %+v", c)
			}
		})
	}
}

// TestVerifyStopsAfterTheSignatureFails: with no valid signature the
// content checks are not run (they would only describe content nobody
// vouches for) unless AllChecks asks for them.
func TestVerifyStopsAfterTheSignatureFails(t *testing.T) {
	p, _ := artifacttest.SignedBundle(t, filepath.Join(t.TempDir(), "b"))
	v := newVerifier(t, []*artifact.PublicKey{artifacttest.Reviewer(t).Public()}) // not the signer
	for _, all := range []bool{false, true} {
		res, err := v.Verify(context.Background(), p, verify.Policy{AllChecks: all})
		if err == nil || res.Verified {
			t.Fatal("verified with the wrong key")
		}
		c := res.Check(verify.CheckUncompressed)
		switch {
		case !all && c.Status != verify.StatusSkipped:
			t.Errorf("content checked after the signature failed: %+v", c)
		case !all && !strings.Contains(c.Reason, "verify --all-checks") || strings.Contains(c.Reason, "AllChecks"):
			t.Errorf("the skip names the Go field, not the flag: %+v", c)
		case all && c.Status != verify.StatusPassed:
			t.Errorf("AllChecks: uncompressed check %+v, want passed", c)
		}
	}
}

// TestVerifyReportsAShortDeclaredSizeAsSuch: a records layer whose declared
// uncompressed size is smaller than its content fails the uncompressed
// check, not the schema check (the cut-off line is a symptom).
func TestVerifyReportsAShortDeclaredSizeAsSuch(t *testing.T) {
	p := artifacttest.PackRun(t, filepath.Join(t.TempDir(), "b"), artifacttest.RunOptions{})
	b, err := artifact.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	i := len(b.Layers()) - 2
	l := b.Layers()[i]
	b.Close()
	good, _ := os.ReadFile(filepath.Join(p, "blobs", "sha256", l.Descriptor.Digest.Encoded()))
	artifacttest.ReplaceLayer(t, p, i, good, map[string]string{"dev.benchseal.uncompressed.size": fmt.Sprint(l.UncompressedSize - 10)})
	sig := artifacttest.SignStatementOf(t, p)
	v := newVerifier(t, []*artifact.PublicKey{artifacttest.Publisher(t).Public()})
	res, err := v.Verify(context.Background(), p, verify.Policy{Detached: [][]byte{sig}})
	if err == nil || res.Verified {
		t.Fatal("verified")
	}
	if c := res.Check(verify.CheckUncompressed); c.Status != verify.StatusFailed || !strings.Contains(c.Reason, "declared size") {
		t.Errorf("uncompressed check %+v, want a declared-size failure", c)
	}
}

// TestVerifyReadsEachStoredBlobOnce: verification is one streaming pass
// over each layer (stored digest, decompression, uncompressed digest,
// decoding, checks and the claims feed at once), so the bytes it reads
// after Open are at most every layer and signature blob once — and, when
// the signature fails, no more than hashing them takes.
func TestVerifyReadsEachStoredBlobOnce(t *testing.T) {
	for _, name := range []string{"dir", "b.tar"} {
		t.Run(name, func(t *testing.T) {
			p, pub := artifacttest.SignedBundle(t, filepath.Join(t.TempDir(), name))
			for _, key := range []*artifact.PublicKey{pub, artifacttest.Reviewer(t).Public()} {
				b, err := artifact.Open(p)
				if err != nil {
					t.Fatal(err)
				}
				var blobs, sigs int64
				for _, l := range b.Layers() {
					blobs += l.Descriptor.Size
				}
				for _, r := range b.Referrers() {
					sigs += r.Bundle.Size
				}
				opened := b.BytesRead()
				res, err := newVerifier(t, []*artifact.PublicKey{key}, verify.WithClaimChecker(replay.ClaimChecker{})).VerifyBundle(context.Background(), b, verify.Policy{})
				read := b.BytesRead() - opened
				b.Close()
				if (key == pub) != (err == nil) {
					t.Fatalf("key %s: %v", key.Fingerprint(), err)
				}
				if key == pub && res.Check(verify.CheckClaims).Status != verify.StatusPassed {
					t.Fatalf("claims not recomputed: %+v", res.Check(verify.CheckClaims))
				}
				// Signature blobs are small and may be read twice (the
				// signature check, then the descriptors check).
				if read > blobs+2*sigs {
					t.Errorf("key %s: read %d bytes after Open; the layers are %d bytes and the signature blobs %d", key.Fingerprint(), read, blobs, sigs)
				}
			}
		})
	}
}

// TestVerifyRejectsRecordShardsOutOfOrder: record shards follow the
// manifest's point order, then repeats ascending; a bundle whose shards
// were reordered (each intact, re-signed) holds the run's records in
// another order than the run's, and unpack would give that order back.
func TestVerifyRejectsRecordShardsOutOfOrder(t *testing.T) {
	for name, swap := range map[string][2]int{
		"repeats swapped": {0, 1}, // point 0 repeat 0 ↔ point 0 repeat 1
		"points swapped":  {0, 2}, // point 0 repeat 0 ↔ point 1 repeat 0
	} {
		t.Run(name, func(t *testing.T) {
			p := artifacttest.PackRun(t, filepath.Join(t.TempDir(), "b"), artifacttest.RunOptions{})
			b, err := artifact.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			first := -1
			for i, l := range b.Layers() {
				if l.Kind == artifact.KindRecords {
					first = i
					break
				}
			}
			b.Close()
			i, j := first+swap[0], first+swap[1]
			artifacttest.EditLayout(t, p, nil, func(m map[string]any) {
				ls := m["layers"].([]any)
				ls[i], ls[j] = ls[j], ls[i]
			})
			sig := artifacttest.SignStatementOf(t, p)
			v := newVerifier(t, []*artifact.PublicKey{artifacttest.Publisher(t).Public()})
			res, err := v.Verify(context.Background(), p, verify.Policy{Detached: [][]byte{sig}})
			if err == nil || res.Verified {
				t.Fatal("VERIFIED a bundle whose record shards are out of order")
			}
			if c := res.Check(verify.CheckConsistency); c == nil || c.Status != verify.StatusFailed || !strings.Contains(c.Reason, "out of order") {
				t.Errorf("want the consistency check to fail naming the order, got %+v", c)
			}
		})
	}
}
