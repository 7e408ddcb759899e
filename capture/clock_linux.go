package capture

import (
	"fmt"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/benchseal/benchseal/schema"
)

// kernelClock asks the kernel (adjtimex, read only) for the wall clock's
// maximum and estimated error and its sync status.
func kernelClock() *schema.Clock {
	var tx unix.Timex // Modes 0: read only
	state, err := unix.Adjtimex(&tx)
	if err != nil {
		return &schema.Clock{Source: "none", Unknown: "adjtimex: " + err.Error()}
	}
	return clockFromTimex(state, &tx)
}

var clockStates = map[int]string{
	unix.TIME_OK: "TIME_OK", unix.TIME_INS: "TIME_INS", unix.TIME_DEL: "TIME_DEL",
	unix.TIME_OOP: "TIME_OOP", unix.TIME_WAIT: "TIME_WAIT", unix.TIME_ERROR: "TIME_ERROR",
}

var statusBits = []struct {
	bit  int32
	name string
}{
	{unix.STA_PLL, "STA_PLL"}, {unix.STA_PPSFREQ, "STA_PPSFREQ"}, {unix.STA_PPSTIME, "STA_PPSTIME"},
	{unix.STA_FLL, "STA_FLL"}, {unix.STA_INS, "STA_INS"}, {unix.STA_DEL, "STA_DEL"},
	{unix.STA_UNSYNC, "STA_UNSYNC"}, {unix.STA_FREQHOLD, "STA_FREQHOLD"}, {unix.STA_NANO, "STA_NANO"},
}

// clockFromTimex states an adjtimex answer: maxerror and esterror are in
// microseconds; the clock is synchronised unless the kernel says
// TIME_ERROR or sets STA_UNSYNC.
func clockFromTimex(state int, tx *unix.Timex) *schema.Clock {
	var names []string
	for _, b := range statusBits {
		if tx.Status&b.bit != 0 {
			names = append(names, b.name)
		}
	}
	st, ok := clockStates[state]
	if !ok {
		st = fmt.Sprintf("state %d", state)
	}
	c := &schema.Clock{
		Source:     "adjtimex",
		Synced:     state != unix.TIME_ERROR && tx.Status&unix.STA_UNSYNC == 0,
		MaxErrorNS: max(tx.Maxerror, 0) * 1000,
		EstErrorNS: max(tx.Esterror, 0) * 1000,
		Status:     strings.TrimSpace(st + " " + strings.Join(names, "|")),
	}
	if !c.Synced {
		c.Unknown = "the kernel reports the wall clock unsynchronised (" + c.Status + ")"
	}
	return c
}
