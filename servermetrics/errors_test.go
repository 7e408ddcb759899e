package servermetrics

import (
	"errors"
	"strings"
	"testing"
)

// TestErrorConditions: each failure is its own sentinel, and the message
// says what failed without a trailing package name.
func TestErrorConditions(t *testing.T) {
	_, err := Parse(strings.NewReader("# TYPE x counter\nx{ 1\n"))
	if !errors.Is(err, ErrMalformed) || !strings.HasPrefix(err.Error(), "server metrics: parse exposition: ") {
		t.Errorf("malformed scrape: %v", err)
	}
	_, err = Parse(strings.NewReader(strings.Repeat("#", MaxScrapeBytes+1)))
	if !errors.Is(err, ErrTooLarge) {
		t.Errorf("huge scrape: %v", err)
	}
	_, err = Delta("", nil, wholeRun)
	if !errors.Is(err, ErrTooFewScrapes) || err.Error() != "server metrics: need a scrape before and after the point, have 0" {
		t.Errorf("no scrapes: %v", err)
	}
	s, err := Parse(strings.NewReader("# TYPE other_total counter\nother_total 1\n"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Delta("", []*Snapshot{s, s}, wholeRun); !errors.Is(err, ErrNoEngineMetrics) {
		t.Errorf("no engine metrics: %v", err)
	}
}
