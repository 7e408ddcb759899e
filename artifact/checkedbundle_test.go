package artifact_test

import (
	"bytes"
	"errors"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/schema"
)

// readAll drains a run's next record stream and returns its records and
// the error that ended it.
func readAll(t *testing.T, run schema.Run) (int, error) {
	t.Helper()
	it, err := run.OpenRecords()
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	n := 0
	for {
		_, err := it.Next()
		if err != nil {
			return n, err
		}
		n++
	}
}

// TestCheckedBundleRefusesARecordValidateWouldRefuse: a bundle whose
// signer crafted a records layer (a request that ends before it was
// sent), with every digest and size matching, streams its records under
// Checked but ends with the problem, named by shard, line and field, not
// io.EOF; an honest bundle ends with io.EOF; a second stream is not
// checked again.
func TestCheckedBundleRefusesARecordValidateWouldRefuse(t *testing.T) {
	honest := artifacttest.PackRun(t, filepath.Join(t.TempDir(), "a"), artifacttest.RunOptions{})
	b, err := artifact.Open(honest)
	if err != nil {
		t.Fatal(err)
	}
	n, err := readAll(t, b.Checked(0))
	b.Close()
	if err != io.EOF || n == 0 {
		t.Fatalf("honest bundle: %d records, error %v; want io.EOF", n, err)
	}

	p := artifacttest.PackRun(t, filepath.Join(t.TempDir(), "b"), artifacttest.RunOptions{})
	i, title, recs := artifacttest.FirstRecordsLayer(t, p)
	recs[1].EndNS = recs[1].SentNS - 1
	artifacttest.ReplaceRecords(t, p, i, recs)

	b, err = artifact.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, err := readAll(t, b); err != io.EOF {
		t.Fatalf("unchecked stream: %v, want io.EOF (the crafted layer matches its digests)", err)
	}
	c := b.Checked(5)
	_, err = readAll(t, c)
	var ve *schema.ValidationError
	if !errors.As(err, &ve) || !errors.Is(err, schema.ErrInvalid) {
		t.Fatalf("checked stream ended with %v, want a *schema.ValidationError", err)
	}
	if msg := err.Error(); !strings.Contains(msg, title) || !strings.Contains(msg, "end_ns") {
		t.Errorf("the problem does not name the shard %s and the field end_ns:\n%s", title, msg)
	}
	if _, err := readAll(t, c); err != io.EOF {
		t.Errorf("second stream: %v, want io.EOF (only the first is checked)", err)
	}
}

// TestCheckedBundleRefusesAWorkloadTheManifestDoesNotName: a signer who
// shipped a workload layer other than the one manifest.workload.sha256
// names (here one byte more, its digests and size matching), whose items
// would bound the records' token counts, gets the stream ended with
// verify's workload.sha256 problem, as validate refuses such a run
// directory.
func TestCheckedBundleRefusesAWorkloadTheManifestDoesNotName(t *testing.T) {
	p := artifacttest.PackRun(t, filepath.Join(t.TempDir(), "b"), artifacttest.RunOptions{})
	b, err := artifact.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	i := slices.IndexFunc(b.Layers(), func(l artifact.Layer) bool { return l.Kind == artifact.KindWorkload })
	rc, err := b.OpenLayer(b.Layers()[i])
	if err != nil {
		t.Fatal(err)
	}
	plain, err := io.ReadAll(rc)
	rc.Close()
	b.Close()
	if err != nil {
		t.Fatal(err)
	}
	plain = bytes.Replace(plain, []byte("}\n"), []byte("} \n"), 1) // the same items, another file
	var packed bytes.Buffer
	zw, err := schema.NewZstdWriter(&packed)
	if err != nil {
		t.Fatal(err)
	}
	zw.Write(plain)
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	artifacttest.ReplaceLayer(t, p, i, packed.Bytes(), map[string]string{
		artifact.AnnotationUncompressedDigest: string(artifact.DigestBytes(plain)),
		artifact.AnnotationUncompressedSize:   strconv.Itoa(len(plain)),
	})
	b, err = artifact.Open(p)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_, err = readAll(t, b.Checked(0))
	if !errors.Is(err, schema.ErrInvalid) || !strings.Contains(err.Error(), "workload.sha256") {
		t.Fatalf("checked stream ended with %v, want the workload.sha256 problem", err)
	}
}
