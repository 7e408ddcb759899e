package release

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
)

// In-toto and SLSA identifiers of the release provenance
// (https://slsa.dev/spec/v1.0/provenance).
const (
	StatementType = "https://in-toto.io/Statement/v1"
	// PredicateSLSAProvenanceV1 is what cosign calls --type slsaprovenance1.
	PredicateSLSAProvenanceV1 = "https://slsa.dev/provenance/v1"
	// BuildType names the build this package describes: scripts/release.sh
	// run by make release, whose externalParameters are Params.
	BuildType = "https://github.com/benchseal/benchseal/blob/main/scripts/release.sh"
	// SourceRepository is the source the provenance names, as SLSA's
	// git+https URI form.
	SourceRepository = "git+https://github.com/benchseal/benchseal"
)

// Params describe one release build for its provenance. Every field is
// required except Ref: the provenance is a function of these and the
// release files, with no clock reading, so two builds of one commit give
// one statement.
type Params struct {
	// Version is the release version (VERSION=), e.g. v0.3.0.
	Version string
	// Revision is the full git commit the release was built from, and
	// Ref the ref it was reached by (e.g. refs/tags/v0.3.0), if any.
	Revision string
	Ref      string
	// Command is the command that built the release, as a user would
	// type it again (make release VERSION=v0.3.0).
	Command string
	// Targets are the GOOS/GOARCH pairs built.
	Targets []string
	// GoVersion is the toolchain (go version), SourceDateEpoch the
	// commit time every archive entry carries, LDFlags the -ldflags.
	GoVersion       string
	SourceDateEpoch int64
	LDFlags         string
	// BuilderID names who ran the build: a CI workflow's identity, or the
	// local default of scripts/release.sh.
	BuilderID string
}

var (
	hexRevision = regexp.MustCompile(`^[0-9a-f]{40}([0-9a-f]{24})?$`)
	hexSHA256   = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

func (p Params) check() error {
	switch {
	case p.Version == "":
		return fmt.Errorf("provenance: no version")
	case !hexRevision.MatchString(p.Revision):
		return fmt.Errorf("provenance: revision %q is not a full git commit id", p.Revision)
	case p.Command == "" || p.GoVersion == "" || p.BuilderID == "" || p.LDFlags == "":
		return fmt.Errorf("provenance: command, Go version, -ldflags and builder id are all required")
	case len(p.Targets) == 0:
		return fmt.Errorf("provenance: no targets")
	case p.SourceDateEpoch <= 0:
		return fmt.Errorf("provenance: SOURCE_DATE_EPOCH %d is not a commit time", p.SourceDateEpoch)
	}
	return nil
}

type resourceDescriptor struct {
	URI    string            `json:"uri,omitempty"`
	Name   string            `json:"name,omitempty"`
	Digest map[string]string `json:"digest"`
}

type statement struct {
	Type          string               `json:"_type"`
	Subject       []resourceDescriptor `json:"subject"`
	PredicateType string               `json:"predicateType"`
	Predicate     provenance           `json:"predicate"`
}

type provenance struct {
	BuildDefinition struct {
		BuildType          string `json:"buildType"`
		ExternalParameters struct {
			Version string   `json:"version"`
			Command string   `json:"command"`
			Targets []string `json:"targets"`
			Source  struct {
				URI    string `json:"uri"`
				Ref    string `json:"ref,omitempty"`
				Commit string `json:"commit"`
			} `json:"source"`
		} `json:"externalParameters"`
		InternalParameters struct {
			GoVersion       string   `json:"goVersion"`
			SourceDateEpoch int64    `json:"sourceDateEpoch"`
			Env             []string `json:"env"`
			Flags           []string `json:"flags"`
			LDFlags         string   `json:"ldflags"`
		} `json:"internalParameters"`
		ResolvedDependencies []resourceDescriptor `json:"resolvedDependencies"`
	} `json:"buildDefinition"`
	RunDetails struct {
		Builder struct {
			ID string `json:"id"`
		} `json:"builder"`
	} `json:"runDetails"`
}

// BuildEnv and BuildFlags are what scripts/release.sh sets for every
// target (besides GOOS and GOARCH); the provenance states them.
var (
	BuildEnv   = []string{"CGO_ENABLED=0", "GOFLAGS=", "GOAMD64=v1", "GOARM64=v8.0"}
	BuildFlags = []string{"-trimpath", "-buildvcs=true"}
)

// Provenance returns the in-toto Statement v1 with an SLSA provenance v1
// predicate whose subjects are files (sorted by name), as indented JSON
// with a final newline. It reads no clock, so runDetails.metadata
// (invocation id, start and finish times) is left out.
func Provenance(files []File, p Params) ([]byte, error) {
	if err := p.check(); err != nil {
		return nil, err
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("provenance: no release files")
	}
	st := statement{Type: StatementType, PredicateType: PredicateSLSAProvenanceV1}
	for _, f := range files {
		if !hexSHA256.MatchString(f.SHA256) {
			return nil, fmt.Errorf("provenance: %s: sha256 %q", f.Name, f.SHA256)
		}
		st.Subject = append(st.Subject, resourceDescriptor{Name: f.Name, Digest: map[string]string{"sha256": f.SHA256}})
	}
	bd := &st.Predicate.BuildDefinition
	bd.BuildType = BuildType
	ep := &bd.ExternalParameters
	ep.Version, ep.Command, ep.Targets = p.Version, p.Command, p.Targets
	ep.Source.URI, ep.Source.Ref, ep.Source.Commit = SourceRepository, p.Ref, p.Revision
	ip := &bd.InternalParameters
	ip.GoVersion, ip.SourceDateEpoch, ip.Env, ip.Flags, ip.LDFlags = p.GoVersion, p.SourceDateEpoch, BuildEnv, BuildFlags, p.LDFlags
	src := resourceDescriptor{URI: SourceRepository, Digest: map[string]string{"gitCommit": p.Revision}}
	if p.Ref != "" {
		src.URI += "@" + p.Ref
	}
	bd.ResolvedDependencies = []resourceDescriptor{src}
	st.Predicate.RunDetails.Builder.ID = p.BuilderID
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(st); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}
