package artifact_test

import (
	"context"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/schema"
)

// TestPackReadsTheRecordsOnce: pack validates, shards and compresses the
// records in one read of the records file. The file is a FIFO that gives
// the records to its first reader; as soon as that reader has opened it,
// the path is replaced by an empty file, so a second read would find no
// records.
func TestPackReadsTheRecordsOnce(t *testing.T) {
	run := artifacttest.WriteRun(t, filepath.Join(t.TempDir(), "run"), artifacttest.RunOptions{})
	rp := filepath.Join(run, schema.RecordsZstdFile)
	data, err := os.ReadFile(rp)
	if err != nil {
		t.Fatal(err)
	}
	os.Remove(rp)
	if err := syscall.Mkfifo(rp, 0o644); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	go func() {
		f, err := os.OpenFile(rp, os.O_WRONLY, 0) // returns once a reader opened it
		if err != nil {
			return
		}
		defer f.Close()
		os.Remove(rp)
		os.WriteFile(rp, nil, 0o644)
		f.Write(data)
	}()
	out := filepath.Join(t.TempDir(), "b")
	_, err = artifact.Pack(context.Background(), run, out, artifact.PackOptions{Created: artifacttest.Created})
	if err != nil {
		t.Fatalf("pack: %v", err)
	}
	b, err := artifact.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	var n int64
	for _, l := range b.RecordLayers() {
		n += l.Records
	}
	if n == 0 {
		t.Fatal("no records packed")
	}
}

// TestPackKeySignsWithoutReadingTheLayersBack: pack --key hashes every blob
// as it writes it, so signing the staged bundle reads only its layout
// documents, not the layers again; the signed bundle still checks out.
func TestPackKeySignsWithoutReadingTheLayersBack(t *testing.T) {
	run := artifacttest.WriteRun(t, filepath.Join(t.TempDir(), "run"), artifacttest.RunOptions{Requests: 2000})
	var read int64 = -1
	defer artifact.SetSignRead(func(n int64) { read = n })()
	out := filepath.Join(t.TempDir(), "b")
	res, err := artifact.Pack(context.Background(), run, out, artifact.PackOptions{Signer: artifacttest.Publisher(t)})
	if err != nil {
		t.Fatal(err)
	}
	var layers int64
	for _, l := range res.Layers {
		layers += l.Descriptor.Size
	}
	if read < 0 || read >= layers {
		t.Fatalf("signing read %d bytes of the staged bundle; its layers are %d bytes", read, layers)
	}
	b, err := artifact.Open(out)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if err := b.CheckContent(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(b.Referrers()) != 1 {
		t.Fatalf("%d signature referrers, want 1", len(b.Referrers()))
	}
}
