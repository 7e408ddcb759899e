package artifact_test

import (
	"archive/tar"
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/schema"
)

func treeDigests(t *testing.T, dir string) map[string]string {
	t.Helper()
	out := map[string]string{}
	filepath.Walk(dir, func(p string, fi os.FileInfo, err error) error {
		if err != nil {
			t.Fatal(err)
		}
		if fi.Mode().IsRegular() {
			b, _ := os.ReadFile(p)
			rel, _ := filepath.Rel(dir, p)
			out[rel] = string(artifact.DigestBytes(b))
		}
		return nil
	})
	return out
}

func TestPackIsReproducible(t *testing.T) {
	tmp := t.TempDir()
	run := artifacttest.WriteRun(t, filepath.Join(tmp, "run"), artifacttest.RunOptions{})
	ctx := context.Background()
	opts := artifact.PackOptions{Created: artifacttest.Created}
	a, err := artifact.Pack(ctx, run, filepath.Join(tmp, "a"), opts)
	if err != nil {
		t.Fatal(err)
	}
	// Touch every file's mtime and change GOMAXPROCS.
	later := time.Now().Add(time.Hour)
	filepath.Walk(run, func(p string, fi os.FileInfo, err error) error { return os.Chtimes(p, later, later) })
	old := runtime.GOMAXPROCS(1)
	defer runtime.GOMAXPROCS(old)
	b, err := artifact.Pack(ctx, run, filepath.Join(tmp, "b"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if a.ManifestDigest != b.ManifestDigest {
		t.Fatalf("manifest digests differ: %s vs %s", a.ManifestDigest, b.ManifestDigest)
	}
	da, db := treeDigests(t, filepath.Join(tmp, "a")), treeDigests(t, filepath.Join(tmp, "b"))
	if len(da) != len(db) {
		t.Fatalf("file sets differ")
	}
	for k, v := range da {
		if db[k] != v {
			t.Errorf("%s differs", k)
		}
	}
	// Tar output twice is byte-identical too.
	if _, err := artifact.Pack(ctx, run, filepath.Join(tmp, "a.tar"), opts); err != nil {
		t.Fatal(err)
	}
	if _, err := artifact.Pack(ctx, run, filepath.Join(tmp, "b.tar"), opts); err != nil {
		t.Fatal(err)
	}
	ta, _ := os.ReadFile(filepath.Join(tmp, "a.tar"))
	tb, _ := os.ReadFile(filepath.Join(tmp, "b.tar"))
	if !bytes.Equal(ta, tb) {
		t.Fatal("tar bundles differ")
	}
	// Tar entries are sorted, regular, uid/gid 0, fixed mtime.
	tr := tar.NewReader(bytes.NewReader(ta))
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg || h.Uid != 0 || h.Gid != 0 || !h.ModTime.Equal(artifacttest.Created) {
			t.Errorf("entry %s: %+v", h.Name, h)
		}
		names = append(names, h.Name)
	}
	if !sort.StringsAreSorted(names) {
		t.Errorf("tar entries not sorted: %v", names)
	}
}

func TestPackRefusesExistingAndLeavesNothingOnFailure(t *testing.T) {
	tmp := t.TempDir()
	run := artifacttest.WriteRun(t, filepath.Join(tmp, "run"), artifacttest.RunOptions{})
	out := filepath.Join(tmp, "out")
	os.Mkdir(out, 0o755)
	os.WriteFile(filepath.Join(out, "keep"), []byte("x"), 0o644)
	if _, err := artifact.Pack(context.Background(), run, out, artifact.PackOptions{}); err == nil {
		t.Fatal("pack over an existing path succeeded")
	}
	if b, _ := os.ReadFile(filepath.Join(out, "keep")); string(b) != "x" {
		t.Fatal("existing path damaged")
	}
	// A cancelled pack leaves nothing behind.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	out2 := filepath.Join(tmp, "out2.tar")
	if _, err := artifact.Pack(ctx, run, out2, artifact.PackOptions{}); err == nil {
		t.Fatal("cancelled pack succeeded")
	}
	ents, _ := os.ReadDir(tmp)
	for _, e := range ents {
		if e.Name() != "run" && e.Name() != "out" {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

func TestPackCreatedDefaultsToFinishTime(t *testing.T) {
	tmp := t.TempDir()
	run := artifacttest.WriteRun(t, filepath.Join(tmp, "run"), artifacttest.RunOptions{})
	res, err := artifact.Pack(context.Background(), run, filepath.Join(tmp, "b"), artifact.PackOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Created != "2026-01-01T00:10:00Z" {
		t.Fatalf("created = %s", res.Created)
	}
}

func TestPackOfAnUndatedRunNeedsAnExplicitCreatedTime(t *testing.T) {
	tmp := t.TempDir()
	run := artifacttest.WriteRun(t, filepath.Join(tmp, "run"), artifacttest.RunOptions{})
	mp := filepath.Join(run, schema.ManifestFile)
	f, err := os.Open(mp)
	if err != nil {
		t.Fatal(err)
	}
	m, err := schema.DecodeManifest(f, mp)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	// An import that did not record when the run happened.
	m.StartTime, m.FinishTime, m.EpochUnixNS = "", "", 0
	m.Unknown = append(m.Unknown, "start_time", "finish_time", "epoch_unix_ns")
	b, err := schema.MarshalDocument(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(mp, b, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "b")
	_, err = artifact.Pack(context.Background(), run, out, artifact.PackOptions{})
	if err == nil || !strings.Contains(err.Error(), "SOURCE_DATE_EPOCH") {
		t.Fatalf("Pack: err = %v, want one asking for SOURCE_DATE_EPOCH", err)
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a failed pack left %s", out)
	}
	created := time.Date(2026, 2, 3, 4, 5, 6, 0, time.UTC)
	res, err := artifact.Pack(context.Background(), run, out, artifact.PackOptions{Created: created})
	if err != nil {
		t.Fatal(err)
	}
	if res.Created != "2026-02-03T04:05:06Z" {
		t.Fatalf("created = %s", res.Created)
	}
}

func TestOpenStreamsRecordsInShardOrder(t *testing.T) {
	for _, name := range []string{"dir", "b.tar"} {
		t.Run(name, func(t *testing.T) {
			p := artifacttest.PackRun(t, filepath.Join(t.TempDir(), name), artifacttest.RunOptions{Points: 3, Repeats: 2, Requests: 4, Warmup: 1})
			b, err := artifact.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			var _ schema.Run = b
			if b.Manifest().RunID != "test-run-1" || b.Claims() == nil {
				t.Fatal("manifest/claims not loaded")
			}
			for pass := 0; pass < 2; pass++ {
				it, err := b.OpenRecords()
				if err != nil {
					t.Fatal(err)
				}
				var got []string
				n := 0
				for {
					r, err := it.Next()
					if err == io.EOF {
						break
					}
					if err != nil {
						t.Fatal(err)
					}
					n++
					key := r.Point + "/" + string(rune('0'+r.Repeat))
					if len(got) == 0 || got[len(got)-1] != key {
						got = append(got, key)
					}
				}
				it.Close()
				want := "c1/0 c1/1 c2/0 c2/1 c3/0 c3/1"
				if strings.Join(got, " ") != want || n != 3*2*5 {
					t.Fatalf("order %v (n=%d), want %s", got, n, want)
				}
			}
			if err := b.CheckContent(context.Background()); err != nil {
				t.Fatal(err)
			}
		})
	}
}

func TestSignAddsReferrersAndDetachedBundle(t *testing.T) {
	for _, name := range []string{"dir", "b.tar"} {
		t.Run(name, func(t *testing.T) {
			p, pub := artifacttest.SignedBundle(t, filepath.Join(t.TempDir(), name))
			if _, err := artifact.Sign(context.Background(), p, artifacttest.Reviewer(t)); err != nil {
				t.Fatal(err)
			}
			b, err := artifact.Open(p)
			if err != nil {
				t.Fatal(err)
			}
			defer b.Close()
			if len(b.Referrers()) != 2 {
				t.Fatalf("%d referrers", len(b.Referrers()))
			}
			if _, err := os.Stat(artifact.DetachedPath(p)); err != nil {
				t.Fatal(err)
			}
			if pub.Fingerprint() == "" {
				t.Fatal("no fingerprint")
			}
		})
	}
}

func TestKeygenRoundTrip(t *testing.T) {
	priv, pub, err := artifact.GenerateKey([]byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(priv, []byte("ENCRYPTED SIGSTORE PRIVATE KEY")) {
		t.Fatalf("unexpected PEM type:\n%s", priv)
	}
	s, err := artifact.LoadPrivateKey(priv, []byte("pw"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := artifact.LoadPrivateKey(priv, []byte("wrong")); !errors.Is(err, artifact.ErrKey) || !errors.Is(err, artifact.ErrKeyNotOpened) {
		t.Fatalf("wrong password: %v", err)
	}
	p, err := artifact.ParsePublicKey(pub)
	if err != nil {
		t.Fatal(err)
	}
	if p.Fingerprint() != s.Public().Fingerprint() {
		t.Fatal("fingerprints differ")
	}
}

func TestLoadCosignKeySignsAndVerifies(t *testing.T) {
	priv, err := os.ReadFile("testdata/cosign.key")
	if err != nil {
		t.Fatal(err)
	}
	pubPEM, err := os.ReadFile("testdata/cosign.pub")
	if err != nil {
		t.Fatal(err)
	}
	s, err := artifact.LoadPrivateKey(priv, []byte("cosign-test"))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := artifact.ParsePublicKey(pubPEM)
	if err != nil {
		t.Fatal(err)
	}
	if pub.Fingerprint() != s.Public().Fingerprint() {
		t.Fatal("cosign key pair does not match")
	}
	p := artifacttest.PackRun(t, filepath.Join(t.TempDir(), "b.tar"), artifacttest.RunOptions{})
	if _, err := artifact.Sign(context.Background(), p, s); err != nil {
		t.Fatal(err)
	}
}
