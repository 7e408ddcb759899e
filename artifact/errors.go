package artifact

import (
	"errors"
	"fmt"
)

// ErrInvalid is the root of every error about a bundle's content: a bundle
// that is malformed, unsafe, over a limit or does not match its digests.
var ErrInvalid = errors.New("invalid bundle")

// ErrNoCreationTime: Pack was given no creation time and the run's
// finish_time is unknown (an import whose source states no instant), so
// nothing fixes org.opencontainers.image.created; the wall clock never
// does.
var ErrNoCreationTime = errors.New("the run's finish_time is unknown, so the bundle's creation time cannot come from it")

// Names of the checks an Error can come from, in verification order.
// They are the names verify reports (verify.CheckContainer is
// CheckContainer, and so on), so an Error names the failed check itself.
const (
	CheckContainer    = "container"    // tar or directory structure
	CheckLayout       = "layout"       // oci-layout and index.json
	CheckManifest     = "manifest"     // run manifest shape and media types
	CheckDescriptors  = "descriptors"  // digest, size and limits of every blob
	CheckSignature    = "signature"    // signature referrer shape
	CheckUncompressed = "uncompressed" // uncompressed digests and sizes
	CheckSchema       = "schema"       // decoding of the run documents
)

// Checks lists the checks an Error can name, in verification order.
var Checks = []string{CheckContainer, CheckLayout, CheckManifest, CheckDescriptors, CheckSignature, CheckUncompressed, CheckSchema}

// Error is a rejection naming the check that failed and the blob (file name
// or digest) it failed on. It wraps ErrInvalid.
type Error struct {
	Check string
	Blob  string
	Err   error
}

// Error formats the check, the blob and the cause.
func (e *Error) Error() string {
	if e.Blob == "" {
		return fmt.Sprintf("%s: %v", e.Check, e.Err)
	}
	return fmt.Sprintf("%s: %s: %v", e.Check, e.Blob, e.Err)
}

// Unwrap returns the cause and ErrInvalid.
func (e *Error) Unwrap() []error { return []error{e.Err, ErrInvalid} }

func invalid(check, blob, format string, args ...any) error {
	return &Error{Check: check, Blob: blob, Err: fmt.Errorf(format, args...)}
}

func wrapInvalid(check, blob string, err error) error {
	var ae *Error
	if errors.As(err, &ae) {
		return err
	}
	return &Error{Check: check, Blob: blob, Err: err}
}
