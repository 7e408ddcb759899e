package replay_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/internal/progress"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

// TestReplayReportsTheRecordsRead: one phase, counting every record.
func TestReplayReportsTheRecordsRead(t *testing.T) {
	dir := artifacttest.WriteRun(t, filepath.Join(t.TempDir(), "run"), artifacttest.RunOptions{Requests: 300})
	rd, err := schema.OpenRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var r progress.Recorder
	if _, err := replay.Replay(progress.With(context.Background(), r.Func()), rd, replay.Options{}); err != nil {
		t.Fatal(err)
	}
	got, err := r.Last()
	if err != nil {
		t.Fatal(err)
	}
	// 2 points × 2 repeats × (300 measured + 1 warmup).
	if len(got) != 1 || got[0].Phase != "replay: read records" || got[0].Done != 4*301 || got[0].Unit != "records" {
		t.Errorf("updates %+v, want one phase of 1204 records", got)
	}
}
