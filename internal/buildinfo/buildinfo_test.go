package buildinfo

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"runtime/debug"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// TestFromInfoSplitsVCSFromSettings: the vcs.* settings become the VCS
// fields (modified as a boolean), every other setting stays, in order.
func TestFromInfoSplitsVCSFromSettings(t *testing.T) {
	bi := &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Path:      "github.com/benchseal/benchseal/cmd/benchseal",
		Main:      debug.Module{Path: "github.com/benchseal/benchseal", Version: "v0.3.0"},
		Settings: []debug.BuildSetting{
			{Key: "-trimpath", Value: "true"},
			{Key: "CGO_ENABLED", Value: "0"},
			{Key: "GOOS", Value: "linux"},
			{Key: "vcs", Value: "git"},
			{Key: "vcs.revision", Value: "0123456789abcdef0123456789abcdef01234567"},
			{Key: "vcs.time", Value: "2026-11-30T12:00:00Z"},
			{Key: "vcs.modified", Value: "true"},
			{Key: "GOARCH", Value: "amd64"},
		},
	}
	b := FromInfo(bi)
	if b.Module != "github.com/benchseal/benchseal" || b.Version != "v0.3.0" || b.GoVersion != "go1.26.8" || b.Path != bi.Path {
		t.Errorf("module fields: %+v", b)
	}
	if b.VCS != "git" || b.Revision != "0123456789abcdef0123456789abcdef01234567" || b.RevisionTime != "2026-11-30T12:00:00Z" {
		t.Errorf("vcs fields: %+v", b)
	}
	if b.Modified == nil || !*b.Modified {
		t.Errorf("modified = %v, want true", b.Modified)
	}
	want := []schema.BuildSetting{{Key: "-trimpath", Value: "true"}, {Key: "CGO_ENABLED", Value: "0"}, {Key: "GOOS", Value: "linux"}, {Key: "GOARCH", Value: "amd64"}}
	if len(b.Settings) != len(want) {
		t.Fatalf("settings = %v, want %v", b.Settings, want)
	}
	for i := range want {
		if b.Settings[i] != want[i] {
			t.Errorf("settings[%d] = %v, want %v", i, b.Settings[i], want[i])
		}
	}
}

// TestFromInfoWithoutVCS: a build without VCS stamping states no
// revision and no modified flag (never a false "clean").
func TestFromInfoWithoutVCS(t *testing.T) {
	b := FromInfo(&debug.BuildInfo{GoVersion: "go1.26.8", Main: debug.Module{Path: "m", Version: "(devel)"}})
	if b.Revision != "" || b.Modified != nil || b.VCS != "" {
		t.Errorf("got %+v", b)
	}
}

// TestCurrentHashesTheRunningExecutable: Current's digest is the sha256
// of the test binary's own file, and the module is this one.
func TestCurrentHashesTheRunningExecutable(t *testing.T) {
	b, err := Current()
	if err != nil {
		t.Fatal(err)
	}
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(exe)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(data)
	if b.ExecutableSHA256 != hex.EncodeToString(sum[:]) {
		t.Errorf("executable sha256 %s, want %x", b.ExecutableSHA256, sum)
	}
	if b.Module != "github.com/benchseal/benchseal" {
		t.Errorf("module %q", b.Module)
	}
	// A caller's change does not reach the cached build.
	b.Settings = append(b.Settings[:0], schema.BuildSetting{Key: "x", Value: "y"})
	if c, _ := Current(); len(c.Settings) > 0 && c.Settings[0].Key == "x" {
		t.Error("Current returned shared settings")
	}
}

func TestFileSHA256NamesAMissingFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "absent")
	if _, err := FileSHA256(p); err == nil {
		t.Fatal("no error for a missing file")
	}
}
