package artifact

import (
	"errors"
	"fmt"
)

// ErrInvalid is the root of every error about a bundle's content: a bundle
// that is malformed, unsafe, over a limit or does not match its digests.
var ErrInvalid = errors.New("invalid bundle")

// Names of the checks an Error can come from, in verification order.
const (
	CheckContainer    = "container"    // tar or directory structure
	CheckLayout       = "layout"       // oci-layout and index.json
	CheckDescriptor   = "descriptor"   // digest, size and limits of a blob
	CheckManifest     = "manifest"     // run manifest shape and media types
	CheckReferrer     = "referrer"     // signature referrer shape
	CheckUncompressed = "uncompressed" // uncompressed digests and sizes
	CheckSchema       = "schema"       // decoding of the run documents
)

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
