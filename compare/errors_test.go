package compare

import (
	"errors"
	"strings"
	"testing"
)

// TestOptionErrorsSayWhatIsWrong: an invalid option is ErrInvalidOption,
// and its message ends with the mistake, not a package name.
func TestOptionErrorsSayWhatIsWrong(t *testing.T) {
	cases := []struct {
		name string
		o    Options
		want string
	}{
		{"alpha", Options{Alpha: 2}, "compare: alpha 2 is not in (0, 1)"},
		{"correction", Options{Correction: "bonferroni"}, `compare: correction "bonferroni" is not none or holm`},
		{"allowed difference", Options{Guard: GuardOptions{Allow: []string{"nosuch"}}}, `compare: "nosuch" is not a check whose difference can be allowed (`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.o.check()
			if !errors.Is(err, ErrInvalidOption) || !strings.HasPrefix(err.Error(), c.want) || strings.HasSuffix(err.Error(), ": compare") {
				t.Errorf("error %v, want ErrInvalidOption %q...", err, c.want)
			}
		})
	}
	if _, err := Decide(nil, DecideOptions{Objective: "fastest"}); !errors.Is(err, ErrInvalidOption) || strings.HasSuffix(err.Error(), ": compare") {
		t.Errorf("objective: %v", err)
	}
	if _, err := Compare([]*Input{{}}, Options{}); !errors.Is(err, ErrIncompleteInput) {
		t.Errorf("input without a result: %v", err)
	}
}
