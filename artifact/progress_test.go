package artifact_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/internal/progress"
)

// TestPackReportsItsPhases: pack reports reading the records (each one
// counted; compressing each point × repeat's as they stream) and then
// compressing those it had to set aside (artifacttest interleaves the
// points: every shard but the last, each byte counted), in that order,
// with counts that only grow.
func TestPackReportsItsPhases(t *testing.T) {
	tmp := t.TempDir()
	run := artifacttest.WriteRun(t, filepath.Join(tmp, "run"), artifacttest.RunOptions{})
	var r progress.Recorder
	ctx := progress.With(context.Background(), r.Func())
	res, err := artifact.Pack(ctx, run, filepath.Join(tmp, "b"), artifact.PackOptions{Created: artifacttest.Created})
	if err != nil {
		t.Fatal(err)
	}
	got, err := r.Last()
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0].Phase != "pack: read, validate and compress records" || got[1].Phase != "pack: compress records" {
		t.Fatalf("phases %+v", got)
	}
	var records, size int64
	for _, l := range res.Layers {
		if l.Kind == artifact.KindRecords {
			records += l.Records
			size += l.UncompressedSize
		}
	}
	if got[0].Done != records || got[0].Unit != "records" {
		t.Errorf("read phase ended at %d %s, want %d records", got[0].Done, got[0].Unit, records)
	}
	if got[1].Done != got[1].Total || got[1].Done <= 0 || got[1].Done >= size || got[1].Unit != "bytes" {
		t.Errorf("compress phase ended at %d of %d %s, want all of it, some but not all of the %d bytes of records", got[1].Done, got[1].Total, got[1].Unit, size)
	}
}
