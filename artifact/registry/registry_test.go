package registry_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/opencontainers/go-digest"
	"github.com/opencontainers/image-spec/specs-go"
	ocispec "github.com/opencontainers/image-spec/specs-go/v1"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/artifact/registry"
	"github.com/benchseal/benchseal/artifact/registry/registrytest"
	"github.com/benchseal/benchseal/verify"
)

const repoName = "bench/run"

func mustVerify(t *testing.T, path string, keys ...*artifact.PublicKey) {
	t.Helper()
	v, err := verify.NewVerifier(keys)
	if err != nil {
		t.Fatal(err)
	}
	res, err := v.Verify(context.Background(), path, verify.Policy{})
	if err != nil || !res.Verified {
		t.Fatalf("verify %s: %v", path, err)
	}
}

// files reads every file of a layout directory.
func files(t *testing.T, dir string) map[string][]byte {
	t.Helper()
	out := map[string][]byte{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		rel, _ := filepath.Rel(dir, p)
		out[filepath.ToSlash(rel)] = b
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

func sameFiles(t *testing.T, want, got string) {
	t.Helper()
	w, g := files(t, want), files(t, got)
	for n, b := range w {
		if strings.HasSuffix(n, ".sigstore.json") {
			continue
		}
		if !bytes.Equal(g[n], b) {
			t.Errorf("%s differs between %s and %s", n, want, got)
		}
	}
	if len(g) != len(w) {
		t.Errorf("%s has %d files, %s has %d", got, len(g), want, len(w))
	}
}

// noLeftovers fails if anything but the listed names is in dir.
func noLeftovers(t *testing.T, dir string, keep ...string) {
	t.Helper()
	ents, _ := os.ReadDir(dir)
	for _, e := range ents {
		ok := false
		for _, k := range keep {
			ok = ok || e.Name() == k
		}
		if !ok {
			t.Errorf("left behind: %s", e.Name())
		}
	}
}

func TestPushPullRoundTripIsByteIdentical(t *testing.T) {
	for _, api := range []bool{false, true} {
		name := "tag-schema"
		if api {
			name = "referrers-api"
		}
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			_, host := registrytest.NewFake(t, api)
			opts := registry.Options{PlainHTTP: true}
			tmp := t.TempDir()
			orig, pub := artifacttest.SignedBundle(t, filepath.Join(tmp, "orig"))
			ref := host + "/" + repoName + ":v1"
			pr, err := registry.Push(ctx, orig, ref, opts)
			if err != nil {
				t.Fatal(err)
			}
			if len(pr.Referrers) != 1 || pr.Uploaded == 0 {
				t.Fatalf("push result %+v", pr)
			}
			for _, out := range []string{filepath.Join(tmp, "pulled"), filepath.Join(tmp, "pulled.tar")} {
				res, err := registry.Pull(ctx, ref, out, opts)
				if err != nil {
					t.Fatal(err)
				}
				if res.ManifestDigest != pr.ManifestDigest || len(res.Referrers) != 1 || len(res.Skipped) != 0 {
					t.Fatalf("pull result %+v, push %+v", res, pr)
				}
				mustVerify(t, out, pub)
			}
			sameFiles(t, orig, filepath.Join(tmp, "pulled"))

			// Pull by digest too.
			if _, err := registry.Pull(ctx, host+"/"+repoName+"@"+pr.ManifestDigest.String(), filepath.Join(tmp, "bydigest"), opts); err != nil {
				t.Fatal(err)
			}
			sameFiles(t, orig, filepath.Join(tmp, "bydigest"))

			// A pushed tar comes back as the same tar, byte for byte (in
			// another repository: the same run has the same manifest digest,
			// so the first bundle's signature would be listed too).
			origTar, _ := artifacttest.SignedBundle(t, filepath.Join(tmp, "orig.tar"))
			ref2 := host + "/bench/tar:v1"
			if _, err := registry.Push(ctx, origTar, ref2, opts); err != nil {
				t.Fatal(err)
			}
			if _, err := registry.Pull(ctx, ref2, filepath.Join(tmp, "again.tar"), opts); err != nil {
				t.Fatal(err)
			}
			a, _ := os.ReadFile(origTar)
			b, _ := os.ReadFile(filepath.Join(tmp, "again.tar"))
			if !bytes.Equal(a, b) {
				t.Error("pulled tar differs from the pushed tar")
			}
			noLeftovers(t, tmp, "orig", "orig.sigstore.json", "pulled", "pulled.tar", "bydigest", "orig.tar", "orig.tar.sigstore.json", "again.tar")
		})
	}
}

func TestPushSecondSignatureThenPullHasBoth(t *testing.T) {
	for _, api := range []bool{false, true} {
		ctx := context.Background()
		_, host := registrytest.NewFake(t, api)
		opts := registry.Options{PlainHTTP: true, ReferrersTagSchema: !api}
		tmp := t.TempDir()
		orig, pub := artifacttest.SignedBundle(t, filepath.Join(tmp, "orig"))
		ref := host + "/" + repoName + ":v1"
		if _, err := registry.Push(ctx, orig, ref, opts); err != nil {
			t.Fatal(err)
		}
		first := filepath.Join(tmp, "first.tar")
		if _, err := registry.Pull(ctx, ref, first, opts); err != nil {
			t.Fatal(err)
		}
		rev := artifacttest.Reviewer(t)
		if _, err := artifact.Sign(ctx, first, rev); err != nil {
			t.Fatal(err)
		}
		pr, err := registry.Push(ctx, first, ref, opts)
		if err != nil {
			t.Fatal(err)
		}
		if pr.Uploaded != 1 { // only the new signature blob
			t.Errorf("second push uploaded %d blobs, want 1", pr.Uploaded)
		}
		second := filepath.Join(tmp, "second")
		res, err := registry.Pull(ctx, ref, second, opts)
		if err != nil {
			t.Fatal(err)
		}
		if len(res.Referrers) != 2 {
			t.Fatalf("api=%v: %d referrers, want 2", api, len(res.Referrers))
		}
		mustVerify(t, second, pub, rev.Public())
	}
}

// pushed returns a fake registry holding a signed bundle under repoName:v1,
// the bundle and its run manifest.
func pushed(t *testing.T, api bool) (*registrytest.Fake, string, *artifact.Bundle) {
	t.Helper()
	f, host := registrytest.NewFake(t, api)
	orig, _ := artifacttest.SignedBundle(t, filepath.Join(t.TempDir(), "orig"))
	if _, err := registry.Push(context.Background(), orig, host+"/"+repoName+":v1", registry.Options{PlainHTTP: true}); err != nil {
		t.Fatal(err)
	}
	b, err := artifact.Open(orig)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return f, host + "/" + repoName + ":v1", b
}

func TestPullFailsClosed(t *testing.T) {
	tests := []struct {
		name    string
		chunked bool
		alter   func(f *registrytest.Fake, b *artifact.Bundle) digest.Digest // returns the blob named in the error
		want    string
	}{
		{name: "record layer with a flipped byte", alter: func(f *registrytest.Fake, b *artifact.Bundle) digest.Digest {
			d := b.RecordLayers()[0].Descriptor.Digest
			body := f.Blob(repoName, d)
			body[len(body)/2] ^= 1
			f.SetBlob(repoName, d, body)
			return d
		}, want: "digest mismatch"},
		{name: "oversized blob", chunked: true, alter: func(f *registrytest.Fake, b *artifact.Bundle) digest.Digest {
			d := b.Layers()[0].Descriptor.Digest
			f.SetBlob(repoName, d, append(f.Blob(repoName, d), "trailing"...))
			return d
		}, want: "more data than the declared size"},
		{name: "short blob", chunked: true, alter: func(f *registrytest.Fake, b *artifact.Bundle) digest.Digest {
			d := b.Layers()[1].Descriptor.Digest
			body := f.Blob(repoName, d)
			f.SetBlob(repoName, d, body[:len(body)-1])
			return d
		}, want: "size mismatch"},
		{name: "signature blob altered", alter: func(f *registrytest.Fake, b *artifact.Bundle) digest.Digest {
			d := b.Referrers()[0].Bundle.Digest
			body := f.Blob(repoName, d)
			body[10] ^= 1
			f.SetBlob(repoName, d, body)
			return d
		}, want: "digest mismatch"},
		{name: "layer over the size limit", alter: func(f *registrytest.Fake, b *artifact.Bundle) digest.Digest {
			var m map[string]any
			json.Unmarshal(b.RunManifestBytes(), &m)
			l := m["layers"].([]any)[1].(map[string]any)
			l["size"] = artifact.MaxBlobSize + 1
			mb, _ := json.Marshal(m)
			f.PutManifest(repoName, "v1", mb)
			return digest.Digest(l["digest"].(string))
		}, want: "out of range"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f, ref, b := pushed(t, false)
			d := tt.alter(f, b)
			f.Chunked = tt.chunked
			dir := t.TempDir()
			for _, out := range []string{filepath.Join(dir, "out"), filepath.Join(dir, "out.tar")} {
				_, err := registry.Pull(context.Background(), ref, out, registry.Options{PlainHTTP: true})
				if err == nil {
					t.Fatal("pull succeeded")
				}
				if !errors.Is(err, artifact.ErrInvalid) || !strings.Contains(err.Error(), string(d)) || !strings.Contains(err.Error(), tt.want) {
					t.Errorf("error %q: want ErrInvalid naming %s and saying %q", err, d, tt.want)
				}
			}
			noLeftovers(t, dir)
		})
	}
}

func TestPullSkipsForeignReferrer(t *testing.T) {
	f, ref, b := pushed(t, true)
	// A referrer of the run manifest in another shape (an extra annotation).
	var m ocispec.Manifest
	rb, err := b.ReadReferrerManifest(b.Referrers()[0])
	if err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(rb, &m)
	m.Annotations["x"] = "y"
	foreign, _ := json.Marshal(m)
	fd := f.PutManifest(repoName, "foreign", foreign)
	// And one of another subject entirely.
	other := ocispec.Manifest{Versioned: specs.Versioned{SchemaVersion: 2}, MediaType: ocispec.MediaTypeImageManifest,
		ArtifactType: artifact.MediaTypeSigstoreBundle, Config: m.Config, Layers: m.Layers,
		Subject: &ocispec.Descriptor{MediaType: ocispec.MediaTypeImageManifest, Digest: digest.FromString("x"), Size: 1}}
	ob, _ := json.Marshal(other)
	f.PutManifest(repoName, "other", ob)

	out := filepath.Join(t.TempDir(), "out")
	res, err := registry.Pull(context.Background(), ref, out, registry.Options{PlainHTTP: true})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Referrers) != 1 || len(res.Skipped) != 1 || res.Skipped[0].Digest != fd {
		t.Fatalf("referrers %v skipped %+v", res.Referrers, res.Skipped)
	}
	mustVerify(t, out, artifacttest.Publisher(t).Public())
}

func TestPullRefusesExistingOutput(t *testing.T) {
	_, ref, _ := pushed(t, false)
	dir := t.TempDir()
	for _, out := range []string{filepath.Join(dir, "out"), filepath.Join(dir, "out.tar")} {
		if err := os.WriteFile(out, []byte("keep"), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := registry.Pull(context.Background(), ref, out, registry.Options{PlainHTTP: true})
		if err == nil || !strings.Contains(err.Error(), "refusing to overwrite") {
			t.Fatalf("pull over %s: %v", out, err)
		}
		if b, _ := os.ReadFile(out); string(b) != "keep" {
			t.Errorf("%s was changed", out)
		}
	}
	noLeftovers(t, dir, "out", "out.tar")
}

func TestBadReferencesAreRefused(t *testing.T) {
	orig, _ := artifacttest.SignedBundle(t, filepath.Join(t.TempDir(), "orig"))
	for _, ref := range []string{"127.0.0.1:1/repo", "no-registry", "127.0.0.1:1/Repo:x", "127.0.0.1:1/repo@sha256:" + strings.Repeat("0", 64)} {
		_, err := registry.Push(context.Background(), orig, ref, registry.Options{PlainHTTP: true})
		if !errors.Is(err, registry.ErrReference) {
			t.Errorf("push %q: %v, want ErrReference", ref, err)
		}
	}
	_, err := registry.Pull(context.Background(), "127.0.0.1:1/repo", filepath.Join(t.TempDir(), "x"), registry.Options{PlainHTTP: true})
	if !errors.Is(err, registry.ErrReference) {
		t.Errorf("pull without tag: %v", err)
	}
}
