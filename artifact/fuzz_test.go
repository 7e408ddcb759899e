package artifact_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
)

// exercise reads everything a verifier would read; it must never panic.
func exercise(path string) {
	b, err := artifact.Open(path)
	if err != nil {
		return
	}
	defer b.Close()
	b.CheckContent(context.Background())
	for _, r := range b.Referrers() {
		b.ReadSignature(r)
	}
	artifact.MarshalStatement(b.Statement())
	it, err := b.OpenRecords()
	if err != nil {
		return
	}
	defer it.Close()
	for i := 0; i < 1000; i++ {
		if _, err := it.Next(); err != nil {
			return
		}
	}
}

// FuzzTarReader feeds arbitrary bytes as a tar bundle, seeded from real
// signed and unsigned bundles.
func FuzzTarReader(f *testing.F) {
	dir := f.TempDir()
	signed, _ := artifacttest.SignedBundle(f, filepath.Join(dir, "s.tar"))
	plain := artifacttest.PackRun(f, filepath.Join(dir, "p.tar"), artifacttest.RunOptions{Points: 1, Repeats: 1, Requests: 2, NoExtras: true})
	for _, p := range []string{signed, plain} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Add([]byte{})
	// One file per worker process, rewritten for each input: a fresh
	// t.TempDir per input cost more than parsing the input.
	p := filepath.Join(dir, "f.tar")
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		exercise(p)
	})
}

// FuzzLayoutIndex replaces index.json of a real signed layout directory.
func FuzzLayoutIndex(f *testing.F) {
	src, _ := artifacttest.SignedBundle(f, filepath.Join(f.TempDir(), "b"))
	idx, err := os.ReadFile(filepath.Join(src, "index.json"))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(idx)
	f.Add([]byte(`{"schemaVersion":2,"manifests":[]}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if err := os.WriteFile(filepath.Join(src, "index.json"), data, 0o644); err != nil {
			t.Fatal(err)
		}
		exercise(src)
	})
}

// FuzzRunManifest stores arbitrary bytes as the run manifest blob of a real
// layout (with an index pointing at it), exercising the manifest and layer
// descriptor parsers.
func FuzzRunManifest(f *testing.F) {
	src := artifacttest.PackRun(f, filepath.Join(f.TempDir(), "b"), artifacttest.RunOptions{})
	b, err := artifact.Open(src)
	if err != nil {
		f.Fatal(err)
	}
	runDesc := b.RunDescriptor()
	b.Close()
	orig, err := os.ReadFile(filepath.Join(src, "blobs", "sha256", runDesc.Digest.Encoded()))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(orig)
	// One copy of the layout per worker process, without the run manifest;
	// each input adds its blob and removes it afterwards unless the layout
	// already held those bytes (copying the layout per input dominated).
	dir := f.TempDir()
	if err := os.CopyFS(dir, os.DirFS(src)); err != nil {
		f.Fatal(err)
	}
	if err := os.Remove(filepath.Join(dir, "blobs", "sha256", runDesc.Digest.Encoded())); err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		d := artifact.DigestBytes(data)
		blob := filepath.Join(dir, "blobs", "sha256", d.Encoded())
		if _, err := os.Stat(blob); os.IsNotExist(err) {
			if err := os.WriteFile(blob, data, 0o644); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(blob)
		}
		rd := runDesc
		rd.Digest, rd.Size = d, int64(len(data))
		idx := map[string]any{"schemaVersion": 2, "mediaType": "application/vnd.oci.image.index.v1+json", "manifests": []any{rd}}
		ib, _ := json.Marshal(idx)
		os.WriteFile(filepath.Join(dir, "index.json"), ib, 0o644)
		exercise(dir)
	})
}
