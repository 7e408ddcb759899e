// What a machine says of its own wall clock when a run's epoch is taken.

package capture

import (
	"bytes"
	"context"
	"os/exec"
	"strings"
	"time"

	"github.com/benchseal/benchseal/schema"
)

// ReadClock returns the machine's own statement of its wall clock's error:
// the kernel's bounds and sync status (adjtimex, Linux only) and, when
// chronyc or timedatectl is installed, what the time daemon reports. It
// never estimates an offset itself; a clock that cannot be asked is
// stated as such (Source "none").
func ReadClock(ctx context.Context) *schema.Clock {
	c := kernelClock()
	c.Daemon = daemonStatus(ctx)
	return c
}

// maxDaemonStatus bounds the daemon text kept in the manifest.
const maxDaemonStatus = 2048

// daemonStatus asks chrony, then systemd-timesyncd, for its status; ""
// when neither answers within a second.
func daemonStatus(ctx context.Context) string {
	for _, q := range [][]string{
		{"chronyc", "-n", "tracking"},
		{"timedatectl", "show-timesync", "--all"},
	} {
		path, err := exec.LookPath(q[0])
		if err != nil {
			continue
		}
		cctx, cancel := context.WithTimeout(ctx, time.Second)
		out, err := exec.CommandContext(cctx, path, q[1:]...).Output()
		cancel()
		if err != nil || len(bytes.TrimSpace(out)) == 0 {
			continue
		}
		lines := strings.FieldsFunc(string(out), func(r rune) bool { return r == '\n' || r == '\r' })
		for i := range lines {
			lines[i] = strings.TrimSpace(lines[i])
		}
		s := strings.Join(append([]string{strings.Join(q, " ") + ":"}, lines...), "; ")
		if len(s) > maxDaemonStatus {
			s = s[:maxDaemonStatus]
		}
		return strings.ToValidUTF8(s, "?")
	}
	return ""
}
