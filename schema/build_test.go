package schema_test

import (
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// TestClientBuildIsOptionalAndChecked: a run without client.build (every
// run written before it existed) validates, one with a build validates,
// and a malformed build is a problem naming its field.
func TestClientBuildIsOptionalAndChecked(t *testing.T) {
	dir := baseRun(t, false)
	if err := schema.ValidateRunDocuments(dir, 0); err != nil {
		t.Fatalf("without a build: %v", err)
	}
	p := filepath.Join(dir, schema.ManifestFile)
	editJSON(t, p, func(m map[string]any) {
		obj(m, "client")["build"] = map[string]any{"path": "github.com/benchseal/benchseal/cmd/benchseal", "module": "github.com/benchseal/benchseal",
			"version": "v0.3.0", "go_version": "go1.26.8", "vcs": "git", "vcs_revision": strings.Repeat("1", 40), "vcs_time": "2026-11-30T12:00:00Z",
			"vcs_modified": false, "settings": []any{map[string]any{"key": "-trimpath", "value": "true"}}, "executable_sha256": strings.Repeat("a", 64)}
	})
	if err := schema.ValidateRunDocuments(dir, 0); err != nil {
		t.Fatalf("with a build: %v", err)
	}
	editJSON(t, p, func(m map[string]any) {
		b := obj(obj(m, "client"), "build")
		b["executable_sha256"] = "not-a-digest"
		delete(b, "go_version")
	})
	err := schema.ValidateRunDocuments(dir, 0)
	if err == nil || !strings.Contains(err.Error(), `field "client.build.executable_sha256"`) {
		t.Fatalf("malformed build: %v", err)
	}
	if !strings.Contains(err.Error(), `field "client.build": missing property 'go_version'`) {
		t.Errorf("missing go_version not named: %v", err)
	}
}

// TestBuildLinesSayWhatIsNotStated: a build without VCS state or digest
// says so instead of printing blanks; a modified tree is shouted.
func TestBuildLinesSayWhatIsNotStated(t *testing.T) {
	b := &schema.Build{Module: "m", Version: "(devel)", GoVersion: "go1.26.8"}
	got := strings.Join(b.Lines(), "\n")
	for _, w := range []string{"m (devel)", "revision not stamped", "go1.26.8", "executable sha256 not stated"} {
		if !strings.Contains(got, w) {
			t.Errorf("lines %q lack %q", got, w)
		}
	}
	mod := true
	b.Revision, b.VCS, b.Modified, b.ExecutableSHA256 = strings.Repeat("c", 40), "git", &mod, strings.Repeat("d", 64)
	got = strings.Join(b.Lines(), "\n")
	if !strings.Contains(got, "MODIFIED") || !strings.Contains(got, "executable sha256:"+strings.Repeat("d", 64)) {
		t.Errorf("lines %q", got)
	}
}
