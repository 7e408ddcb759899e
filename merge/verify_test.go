package merge_test

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
	"github.com/benchseal/benchseal/merge"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/verify"
)

func verifyUnsigned(t *testing.T, bundle string) *verify.Result {
	t.Helper()
	v, err := verify.NewVerifier(nil, verify.WithClaimChecker(replay.ClaimChecker{}))
	if err != nil {
		t.Fatal(err)
	}
	res, _ := v.Verify(context.Background(), bundle, verify.Policy{AllowUnsignedUnsafe: true})
	if res == nil {
		t.Fatal("no result")
	}
	return res
}

func failures(res *verify.Result) string {
	var b strings.Builder
	for _, c := range res.Checks {
		if c.Status == verify.StatusFailed {
			fmt.Fprintf(&b, "%s: %s %s\n", c.Name, c.Reason, strings.Join(c.Problems, "; "))
		}
	}
	return b.String()
}

// TestMergedRunPacksAndVerifies: the README flow merge → pack → verify of
// an honest sharded run is VERIFIED. It was REJECTED when verify's record
// stream left record.shard aliased to the reader's buffer (every record of
// a layer then carried the shard of the last one decoded).
func TestMergedRunPacksAndVerifies(t *testing.T) {
	ts := sim(t)
	dir := t.TempDir()
	dirs := captureShards(t, ts.URL, plans()["rate"], dir, 2)
	out := filepath.Join(dir, "merged")
	if _, err := merge.Merge(context.Background(), dirs, out, merge.Options{}); err != nil {
		t.Fatal(err)
	}
	b := filepath.Join(dir, "merged.oci")
	if _, err := artifact.Pack(context.Background(), out, b, artifact.PackOptions{Created: artifacttest.Created}); err != nil {
		t.Fatal(err)
	}
	if res := verifyUnsigned(t, b); !res.Verified {
		t.Fatalf("honest merged bundle not verified:\n%s", failures(res))
	}
}

// TestVerifyRejectsAWrongShardOnAnEarlyRecord: a shard bundle whose first
// record (not the last, whose value an aliasing reader would show for
// every record) names another shard is rejected, naming the line and the
// field.
func TestVerifyRejectsAWrongShardOnAnEarlyRecord(t *testing.T) {
	ts := sim(t)
	dir := t.TempDir()
	dirs := captureShards(t, ts.URL, plans()["rate"], dir, 2)
	p := filepath.Join(dir, "shard-0.oci")
	if _, err := artifact.Pack(context.Background(), dirs[0], p, artifact.PackOptions{Created: artifacttest.Created}); err != nil {
		t.Fatal(err)
	}
	if res := verifyUnsigned(t, p); !res.Verified {
		t.Fatalf("honest shard bundle not verified:\n%s", failures(res))
	}
	bd, err := artifact.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	idx, title := -1, ""
	for i, l := range bd.Layers() {
		if l.Kind == artifact.KindRecords && l.Records >= 2 {
			idx, title = i, l.Title
			break
		}
	}
	if idx < 0 {
		t.Fatal("no records layer with two records")
	}
	l := bd.Layers()[idx]
	bd.Close()
	blob, err := os.ReadFile(filepath.Join(p, "blobs", "sha256", l.Descriptor.Digest.Encoded()))
	if err != nil {
		t.Fatal(err)
	}
	dec, _ := zstd.NewReader(nil)
	raw, err := dec.DecodeAll(blob, nil)
	dec.Close()
	if err != nil {
		t.Fatal(err)
	}
	first, rest, _ := bytes.Cut(raw, []byte("\n"))
	if !bytes.Contains(first, []byte(`"shard":0`)) {
		t.Fatalf("first record has no shard 0: %s", first)
	}
	edited := append(append(bytes.Replace(first, []byte(`"shard":0`), []byte(`"shard":1`), 1), '\n'), rest...)
	enc, _ := zstd.NewWriter(nil, zstd.WithEncoderConcurrency(1))
	z := enc.EncodeAll(edited, nil)
	enc.Close()
	artifacttest.ReplaceLayer(t, p, idx, z, map[string]string{
		artifact.AnnotationUncompressedDigest: string(artifact.DigestBytes(edited)),
		artifact.AnnotationUncompressedSize:   fmt.Sprint(len(edited)),
	})
	res := verifyUnsigned(t, p)
	if res.Verified {
		t.Fatal("VERIFIED a shard bundle whose first record names another shard")
	}
	f := failures(res)
	if !strings.Contains(f, title+":1:") || !strings.Contains(f, `field "shard"`) {
		t.Errorf("failure does not name %s:1 and field \"shard\":\n%s", title, f)
	}
}
