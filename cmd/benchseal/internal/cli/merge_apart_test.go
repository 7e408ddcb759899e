package cli

import (
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestMergeWarnsOfShardsMeasuredInTurn: shards captured one after the
// other (no --start-at) merge, but merge warns on stderr that the
// point's load was never offered at once.
func TestMergeWarnsOfShardsMeasuredInTurn(t *testing.T) {
	dir := t.TempDir()
	var dirs []string
	for i := range 2 {
		run := filepath.Join(dir, "d"+strconv.Itoa(i))
		if code, _, errOut := runArgs(t, nil, "capture", "--simulate", "--sim-time-scale", "0.01", "--rate", "400", "--requests", "12",
			"--seed", "7", "--shard", strconv.Itoa(i)+"/2", "--out", run, "--progress", "never"); code != ExitOK {
			t.Fatal(errOut)
		}
		dirs = append(dirs, run)
	}
	code, stdout, errOut := runArgs(t, nil, "merge", dirs[0], dirs[1], "--out", filepath.Join(dir, "m"))
	if code != ExitOK {
		t.Fatalf("merge exit %d: %s", code, errOut)
	}
	for _, want := range []string{"warning: shards_apart: point", "shard 0 measured it from", "shard 1 measured it from", "never offered at once", "--start-at"} {
		if !strings.Contains(errOut, want) {
			t.Errorf("merge's stderr lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(stdout, "shards_apart") {
		t.Errorf("the warning went to stdout:\n%s", stdout)
	}
}
