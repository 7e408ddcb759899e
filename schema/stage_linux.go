package schema

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// lockNB takes an exclusive flock on f without waiting; the lock is
// released when f is closed or its process dies.
func lockNB(f *os.File) error { return unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB) }

// processAlive reports whether a process with this pid exists (a reused
// pid counts as alive: the leftover is then kept, never wrongly removed).
func processAlive(pid int) bool {
	err := unix.Kill(pid, 0)
	return err == nil || errors.Is(err, unix.EPERM)
}

// ExchangeDirs swaps the directories a and b in one atomic step
// (renameat2 RENAME_EXCHANGE): a reader or a crash sees either both old
// or both new, never a missing path.
func ExchangeDirs(a, b string) error {
	if err := unix.Renameat2(unix.AT_FDCWD, a, unix.AT_FDCWD, b, unix.RENAME_EXCHANGE); err != nil {
		return &os.LinkError{Op: "exchange", Old: a, New: b, Err: err}
	}
	return nil
}
