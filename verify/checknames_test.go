package verify

import (
	"errors"
	"slices"
	"testing"

	"github.com/benchseal/benchseal/artifact"
)

// TestArtifactChecksAreVerifyChecks: every check an artifact.Error can
// name is one verify reports, in the same order, so a bundle reader's
// rejection lands on its own check with no mapping between the two.
func TestArtifactChecksAreVerifyChecks(t *testing.T) {
	last := -1
	for _, c := range artifact.Checks {
		i := slices.Index(CheckOrder, c)
		if i < 0 {
			t.Errorf("artifact check %q is not a verify check", c)
			continue
		}
		if i < last {
			t.Errorf("artifact check %q is out of verify's order", c)
		}
		last = i
	}
}

// TestArtifactErrorLandsOnItsCheck: an artifact.Error fails the check it
// names; an error naming none, or a name verify does not know, fails the
// container check with the whole error.
func TestArtifactErrorLandsOnItsCheck(t *testing.T) {
	cause := errors.New("size differs")
	check, blob, got := artifactErr(&artifact.Error{Check: artifact.CheckDescriptors, Blob: "sha256:ab", Err: cause})
	if check != CheckDescriptors || blob != "sha256:ab" || got != cause {
		t.Errorf("got %q %q %v", check, blob, got)
	}
	unknown := &artifact.Error{Check: "nosuch", Err: cause}
	if check, _, got := artifactErr(unknown); check != CheckContainer || got != unknown {
		t.Errorf("unknown check: got %q %v", check, got)
	}
	if check, _, got := artifactErr(cause); check != CheckContainer || got != cause {
		t.Errorf("plain error: got %q %v", check, got)
	}
}
