package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/replay"
)

// TestOldVersionReplayNamesItsKnownDefect: a replay computed under a
// version with a known defect says so in every format, as verify does for
// claims under it; the current version states none.
func TestOldVersionReplayNamesItsKnownDefect(t *testing.T) {
	var old replay.Version
	for _, v := range replay.VersionsOf("benchseal") {
		if v.Defect != "" {
			old = v
		}
	}
	if old.Name == "" {
		t.Fatal("no benchseal version with a known defect")
	}
	r := &replay.Result{Schema: replay.SchemaV1, Definitions: "benchseal", DefinitionsVersion: old.Name}
	if got := definitionsLine(r); !strings.Contains(got, old.Defect) {
		t.Errorf("definitions line %q does not name the known defect", got)
	}
	var b bytes.Buffer
	if err := JSON(&b, r); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), `"definitions_known_defect"`) {
		t.Errorf("JSON has no definitions_known_defect:\n%s", b.String())
	}
	cur := &replay.Result{Schema: replay.SchemaV1, Definitions: "benchseal", DefinitionsVersion: replay.CurrentVersion("benchseal")}
	if got := definitionsLine(cur); strings.Contains(got, "known defect") {
		t.Errorf("current version's line %q names a defect", got)
	}
}
