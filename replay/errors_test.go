package replay

import (
	"errors"
	"testing"
)

// TestBadOptionValuesAreErrBadOption: a value the engine cannot take is
// ErrBadOption, and reads as the message alone (no trailing ": replay").
func TestBadOptionValuesAreErrBadOption(t *testing.T) {
	_, err := ParseFraction("1.5")
	if !errors.Is(err, ErrBadOption) || err.Error() != `"1.5" is not a fraction in [0, 1]` {
		t.Errorf("fraction: %v", err)
	}
	if _, err := ParseSLO("ttft=fast"); !errors.Is(err, ErrBadOption) {
		t.Errorf("SLO: %v", err)
	}
}
