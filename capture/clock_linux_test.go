package capture

import (
	"testing"

	"golang.org/x/sys/unix"
)

func TestClockFromTimexStatesKernelBounds(t *testing.T) {
	for _, tc := range []struct {
		name   string
		state  int
		status int32
		synced bool
		text   string
	}{
		{"synchronised", unix.TIME_OK, unix.STA_PLL | unix.STA_NANO, true, "TIME_OK STA_PLL|STA_NANO"},
		{"unsync bit", unix.TIME_OK, unix.STA_UNSYNC, false, "TIME_OK STA_UNSYNC"},
		{"time error", unix.TIME_ERROR, 0, false, "TIME_ERROR"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tx := unix.Timex{Maxerror: 1500, Esterror: 40, Status: tc.status}
			c := clockFromTimex(tc.state, &tx)
			if c.Source != "adjtimex" || c.Synced != tc.synced || c.Status != tc.text {
				t.Fatalf("clock %+v", c)
			}
			// The kernel's microseconds, in ns.
			if c.MaxErrorNS != 1_500_000 || c.EstErrorNS != 40_000 {
				t.Errorf("bounds %d / %d ns", c.MaxErrorNS, c.EstErrorNS)
			}
			if _, ok := c.Bound(); ok != tc.synced {
				t.Errorf("Bound ok %v, synced %v", ok, tc.synced)
			}
			if !tc.synced && c.Unknown == "" {
				t.Error("an unsynchronised clock does not say why it has no bound")
			}
		})
	}
}

func TestReadClockAsksTheKernel(t *testing.T) {
	c := kernelClock()
	if c.Source != "adjtimex" {
		t.Fatalf("adjtimex (read only) failed: %+v", c)
	}
}
