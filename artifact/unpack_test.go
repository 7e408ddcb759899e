package artifact_test

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/schema"
)

// sortedLines returns the lines of a (decompressed) JSONL file, sorted.
func sortedLines(t *testing.T, p string) []string {
	t.Helper()
	f, err := os.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var r io.Reader = f
	if filepath.Ext(p) == ".zst" {
		if r, err = schema.NewZstdReader(f); err != nil {
			t.Fatal(err)
		}
	}
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(r); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	slices.Sort(lines)
	return lines
}

// unpack opens the bundle at path and unpacks it at dest.
func unpack(t *testing.T, path, dest string) error {
	t.Helper()
	b, err := artifact.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	return b.Unpack(context.Background(), dest)
}

func TestUnpackGivesTheRunThatPacksToTheSameManifest(t *testing.T) {
	tmp := t.TempDir()
	ctx := context.Background()
	run := artifacttest.WriteRun(t, filepath.Join(tmp, "run"), artifacttest.RunOptions{})
	opts := artifact.PackOptions{Created: artifacttest.Created}
	first, err := artifact.Pack(ctx, run, filepath.Join(tmp, "b.tar"), opts)
	if err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "unpacked")
	if err := unpack(t, first.Path, out); err != nil {
		t.Fatal(err)
	}
	if _, err := schema.CheckRunDir(context.Background(), out, 10, nil); err != nil {
		t.Fatalf("the unpacked run does not validate: %v", err)
	}
	for _, f := range []string{schema.ManifestFile, schema.ClaimsFile, "attachments/notes/readme.txt"} {
		a, _ := os.ReadFile(filepath.Join(run, f))
		b, err := os.ReadFile(filepath.Join(out, f))
		if err != nil || !bytes.Equal(a, b) {
			t.Errorf("%s differs from the packed run's (%v)", f, err)
		}
	}
	if !slices.Equal(sortedLines(t, filepath.Join(run, schema.RecordsZstdFile)), sortedLines(t, filepath.Join(out, schema.RecordsFile))) {
		t.Error("records differ")
	}
	if !slices.Equal(sortedLines(t, filepath.Join(run, schema.WorkloadFile)), sortedLines(t, filepath.Join(out, schema.WorkloadFile))) {
		t.Error("workload differs")
	}
	again, err := artifact.Pack(ctx, out, filepath.Join(tmp, "again.tar"), opts)
	if err != nil {
		t.Fatal(err)
	}
	if again.ManifestDigest != first.ManifestDigest {
		t.Errorf("repacking the unpacked run gives %s, the original %s", again.ManifestDigest, first.ManifestDigest)
	}
}

func TestUnpackOfATamperedLayerFailsAndWritesNothing(t *testing.T) {
	tmp := t.TempDir()
	b := artifacttest.PackRun(t, filepath.Join(tmp, "b"), artifacttest.RunOptions{})
	bundle, err := artifact.Open(b)
	if err != nil {
		t.Fatal(err)
	}
	rl := bundle.RecordLayers()[1]
	bundle.Close()
	blob := filepath.Join(b, "blobs", "sha256", rl.Descriptor.Digest.Encoded())
	data, err := os.ReadFile(blob)
	if err != nil {
		t.Fatal(err)
	}
	data[len(data)/2] ^= 0x20
	if err := os.WriteFile(blob, data, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(tmp, "out")
	err = unpack(t, b, out)
	if err == nil || !strings.Contains(err.Error(), string(rl.Descriptor.Digest)) {
		t.Fatalf("err %v, want one naming %s", err, rl.Descriptor.Digest)
	}
	if entries, _ := os.ReadDir(tmp); len(entries) != 1 {
		t.Errorf("unpack left files behind: %v", entries)
	}
}

func TestUnpackRefusesAnExistingDestination(t *testing.T) {
	tmp := t.TempDir()
	b := artifacttest.PackRun(t, filepath.Join(tmp, "b.tar"), artifacttest.RunOptions{NoExtras: true})
	out := filepath.Join(tmp, "out")
	os.Mkdir(out, 0o755)
	os.WriteFile(filepath.Join(out, "keep"), []byte("x"), 0o644)
	if err := unpack(t, b, out); err == nil {
		t.Fatal("unpacked over an existing directory")
	}
	if b, err := os.ReadFile(filepath.Join(out, "keep")); err != nil || string(b) != "x" {
		t.Error("the existing directory was touched")
	}
}
