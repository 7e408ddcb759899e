package cli

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact/artifacttest"
)

// TestReplayOfACraftedBundleIsRefused: a signer who wrote a records layer
// validate would refuse (a request ending before it was sent), with every
// digest matching, gets no numbers from replay: exit 3 naming the shard
// and field, as for a run directory, and no report file.
func TestReplayOfACraftedBundleIsRefused(t *testing.T) {
	p := artifacttest.PackRun(t, filepath.Join(t.TempDir(), "b"), artifacttest.RunOptions{})
	i, title, recs := artifacttest.FirstRecordsLayer(t, p)
	recs[0].EndNS = recs[0].SentNS - 1
	artifacttest.ReplaceRecords(t, p, i, recs)

	report := filepath.Join(t.TempDir(), "r.json")
	code, out, errOut := runArgs(t, nil, "replay", p, "--output", "json", "--out", report)
	if code != ExitRejected || !strings.Contains(errOut, title) || !strings.Contains(errOut, "end_ns") {
		t.Fatalf("replay: exit %d, want %d naming %s and end_ns\n%s%s", code, ExitRejected, title, out, errOut)
	}
	if _, err := os.Stat(report); !os.IsNotExist(err) {
		t.Errorf("a report was written for a refused bundle: %v", err)
	}
}
