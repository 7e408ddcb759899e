// Package buildinfo names the running benchseal executable as a
// schema.Build: what runtime/debug.ReadBuildInfo says of its module, VCS
// state, toolchain and build settings, and the SHA-256 of the executable
// file. capture states it as client.build and import as source.importer,
// so a run names the exact binary that measured or imported it.
//
// It reads the process's own executable, which is why it is internal and
// called from the command layer only, never from a library that takes its
// inputs as arguments.
package buildinfo

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"runtime/debug"
	"sync"

	"github.com/benchseal/benchseal/schema"
)

// current caches Current: the executable does not change while it runs,
// and hashing it costs a read of the whole file.
var current = sync.OnceValues(func() (*schema.Build, error) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return nil, fmt.Errorf("read build info: the binary was built without module support")
	}
	b := FromInfo(bi)
	exe, err := os.Executable()
	if err != nil {
		return b, fmt.Errorf("find the running executable: %w", err)
	}
	sum, err := FileSHA256(exe)
	if err != nil {
		return b, err
	}
	b.ExecutableSHA256 = sum
	return b, nil
})

// Current returns the running executable's build. When the executable
// cannot be read, the build comes back without ExecutableSHA256 together
// with the error, so a caller can warn and still state the rest.
func Current() (*schema.Build, error) {
	b, err := current()
	if b == nil {
		return nil, err
	}
	c := *b
	c.Settings = append([]schema.BuildSetting(nil), b.Settings...)
	if b.Modified != nil {
		m := *b.Modified
		c.Modified = &m
	}
	return &c, err
}

// FromInfo converts Go's build information: the vcs.* settings become
// the VCS fields, every other setting is kept in order.
func FromInfo(bi *debug.BuildInfo) *schema.Build {
	b := &schema.Build{Path: bi.Path, Module: bi.Main.Path, Version: bi.Main.Version, GoVersion: bi.GoVersion}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs":
			b.VCS = s.Value
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.RevisionTime = s.Value
		case "vcs.modified":
			m := s.Value == "true"
			b.Modified = &m
		default:
			// Including a vcs.* fact this package does not know: kept as given.
			b.Settings = append(b.Settings, schema.BuildSetting{Key: s.Key, Value: s.Value})
		}
	}
	return b
}

// FileSHA256 returns the hex SHA-256 of the file at path.
func FileSHA256(path string) (string, error) {
	f, err := os.Open(path)
	if err != nil {
		return "", fmt.Errorf("hash executable: %w", err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("hash executable %s: %w", path, err)
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}
