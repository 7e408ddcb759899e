package capture

import "testing"

// TestTraceWindowStringLeavesAnOpenEndEmpty: "--trace-window 100s.." was
// echoed as the window 1m40s..0s.
func TestTraceWindowStringLeavesAnOpenEndEmpty(t *testing.T) {
	for in, want := range map[string]string{"100s..": "1m40s..", "..90s": "0s..1m30s", "60s..120s": "1m0s..2m0s"} {
		w, err := ParseTraceWindow(in)
		if err != nil {
			t.Fatal(err)
		}
		if got := w.String(); got != want {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}
