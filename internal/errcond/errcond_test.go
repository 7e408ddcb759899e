package errcond

import (
	"errors"
	"io/fs"
	"testing"
)

// TestErrorfReadsAsItsMessageAndIsItsCondition: the text is the message
// alone; errors.Is matches the condition and what %w wraps.
func TestErrorfReadsAsItsMessageAndIsItsCondition(t *testing.T) {
	cond := errors.New("bad option value")
	err := Errorf(cond, "alpha %v is not in (0, 1): %w", 2, fs.ErrInvalid)
	if got, want := err.Error(), "alpha 2 is not in (0, 1): invalid argument"; got != want {
		t.Errorf("text %q, want %q", got, want)
	}
	if !errors.Is(err, cond) || !errors.Is(err, fs.ErrInvalid) {
		t.Errorf("%v is not both its condition and what it wraps", err)
	}
	if errors.Is(err, errors.New("bad option value")) {
		t.Errorf("%v matches another sentinel with the same words", err)
	}
}
