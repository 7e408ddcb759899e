package compare

import (
	"errors"

	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

// Conditions of this package's errors (messages say what went wrong).
var (
	// ErrInvalidOption: an option is out of its range (alpha, correction,
	// an allowed difference, objective, attainment target).
	ErrInvalidOption = errors.New("invalid option")
	// ErrIncompleteInput: an input lacks its manifest or replay result.
	ErrIncompleteInput = errors.New("input without manifest or replay result")
)

// Verification states of an input.
const (
	// Verified: a bundle whose signatures by every pinned key, integrity,
	// schema and claims verified.
	Verified = "verified"
	// Unsigned: a bundle read with --allow-unsigned: integrity checked,
	// nothing authenticated.
	Unsigned = "unsigned"
	// RunDirectory: a run directory, validated but never signed.
	RunDirectory = "run-directory"
	// NotChecked: read without any check (replay reports what it was
	// given; verify is the command that checks).
	NotChecked = "not-checked"
)

// Verification says how far an input was checked before comparing.
type Verification struct {
	// Status is Verified, Unsigned or RunDirectory.
	Status string
	// Keys are the fingerprints of the pinned keys whose signatures
	// verified (Verified only).
	Keys []string
	// BundleDigest is the digest of the bundle's run manifest (bundles
	// only).
	BundleDigest string
	// Warnings are the verifier's warnings (e.g. claims that cannot be
	// recomputed).
	Warnings []string
}

// Input is one configuration: a run as replayed, with the manifest that
// states what it is and how it was checked.
type Input struct {
	// Name is how the user named it (the path, or a label).
	Name         string
	Manifest     *schema.Manifest
	Result       *replay.Result
	Verification Verification
	// WorkloadNotShipped: the manifest states workload.sha256 but the
	// input carries no workload file, so the hash is the publisher's word
	// (the guard's workload check is unknown, never pass).
	WorkloadNotShipped bool
}

// External reports whether the input is external evidence only (an
// MLPerf result linked by reference, without per-request data): it is
// shown as a reference and never compared or ranked.
func (in *Input) External() bool { return in.Manifest != nil && in.Manifest.ExternalReference() }
