package schema

import "strings"

// Build identifies one executable build of a program: the module, VCS
// state, Go toolchain and build settings Go's runtime/debug.ReadBuildInfo
// reports of the running binary, and the SHA-256 of its file. A run
// manifest states it for the client that measured the run
// (client.build) and for the benchseal that imported it
// (source.importer). internal/buildinfo makes one; every field is the
// word of whoever wrote the manifest: a reviewer ties it to a binary by
// comparing ExecutableSHA256 with a release's SHA256SUMS.
type Build struct {
	// Path is the main package's import path.
	Path string `json:"path"`
	// Module is the main module's path and Version its version: a tag,
	// a pseudo-version, or "(devel)" for a build without either.
	Module  string `json:"module"`
	Version string `json:"version,omitempty"`
	// GoVersion is the toolchain that built the binary, e.g. "go1.26.8".
	GoVersion string `json:"go_version"`
	// VCS is the version-control system of the source tree ("git"), and
	// Revision, RevisionTime and Modified its commit, that commit's time
	// (RFC 3339) and whether the tree had uncommitted changes; all empty
	// when the build stamped no VCS state (-buildvcs=false, no checkout).
	VCS          string `json:"vcs,omitempty"`
	Revision     string `json:"vcs_revision,omitempty"`
	RevisionTime string `json:"vcs_time,omitempty"`
	Modified     *bool  `json:"vcs_modified,omitempty"`
	// Settings are the remaining build settings in the order Go records
	// them (-trimpath, -ldflags, CGO_ENABLED, GOOS, GOARCH, GOAMD64, …).
	Settings []BuildSetting `json:"settings,omitempty"`
	// ExecutableSHA256 is the hex SHA-256 of the executable file that
	// ran; empty when it could not be read.
	ExecutableSHA256 string `json:"executable_sha256,omitempty"`
}

// BuildUnchecked is what every output prints next to a build read from a
// manifest: a hostile publisher can write any build and nothing in a
// bundle checks it; a reader compares ExecutableSHA256 with a release's
// SHA256SUMS.
const BuildUnchecked = "stated in the manifest, not checked"

// BuildSetting is one key=value build setting.
type BuildSetting struct {
	Key   string `json:"key"`
	Value string `json:"value"`
}

// Setting returns the value of the build setting key ("" when absent).
func (b *Build) Setting(key string) string {
	for _, s := range b.Settings {
		if s.Key == key {
			return s.Value
		}
	}
	return ""
}

// Lines describes b for a person, one fact a line: module and version,
// source revision, toolchain and target, executable digest. Every output
// that shows a build prints these lines.
func (b *Build) Lines() []string {
	mod := b.Module
	if b.Version != "" {
		mod += " " + b.Version
	}
	if b.Path != "" && b.Path != b.Module {
		mod += " (" + b.Path + ")"
	}
	rev := "revision not stamped (built without VCS information)"
	if b.Revision != "" {
		rev = "revision " + b.Revision
		if b.VCS != "" {
			rev += " (" + b.VCS
			if b.RevisionTime != "" {
				rev += ", " + b.RevisionTime
			}
			rev += ")"
		}
		switch {
		case b.Modified == nil:
			rev += ", modified: not stated"
		case *b.Modified:
			rev += ", MODIFIED: the tree had uncommitted changes"
		default:
			rev += ", clean tree"
		}
	}
	tool := b.GoVersion
	if goos, arch := b.Setting("GOOS"), b.Setting("GOARCH"); goos != "" || arch != "" {
		tool += " " + goos + "/" + arch
	}
	var flags []string
	for _, k := range []string{"CGO_ENABLED", "-trimpath", "-buildmode", "-tags", "-ldflags"} {
		if v := b.Setting(k); v != "" {
			flags = append(flags, k+"="+v)
		}
	}
	if len(flags) > 0 {
		tool += ", " + strings.Join(flags, " ")
	}
	exe := "executable sha256 not stated"
	if b.ExecutableSHA256 != "" {
		exe = "executable sha256:" + b.ExecutableSHA256
	}
	return []string{mod, rev, tool, exe}
}

// ID is a short identity of b for a one-line comparison: version, the
// first 12 hex digits of the revision (with "+modified") and of the
// executable digest. Two builds with the same ID are the same binary as
// far as their manifests say.
func (b *Build) ID() string {
	parts := []string{b.Version}
	if b.Revision != "" {
		r := b.Revision
		if len(r) > 12 {
			r = r[:12]
		}
		if b.Modified != nil && *b.Modified {
			r += "+modified"
		}
		parts = append(parts, "rev "+r)
	}
	if e := b.ExecutableSHA256; e != "" {
		if len(e) > 12 {
			e = e[:12]
		}
		parts = append(parts, "exe sha256:"+e)
	}
	return strings.TrimSpace(strings.Join(parts, ", "))
}
