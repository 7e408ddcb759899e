package capture

import (
	"runtime"
	"syscall"
	"time"
)

// lockSenderThread pins the calling goroutine to its OS thread and sets
// that thread's timer slack to 1 ns, so preciseSleep wakes on time rather
// than up to the default 50 µs late. The returned func undoes it.
func lockSenderThread() func() {
	runtime.LockOSThread()
	const prSetTimerSlack = 29
	var old uintptr
	const prGetTimerSlack = 30
	old, _, _ = syscall.RawSyscall(syscall.SYS_PRCTL, prGetTimerSlack, 0, 0)
	syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, 1, 0)
	return func() {
		syscall.RawSyscall(syscall.SYS_PRCTL, prSetTimerSlack, old, 0)
		runtime.UnlockOSThread()
	}
}

// preciseSleep sleeps d with the kernel's high-resolution timer. The Go
// runtime's timers wake through epoll_wait, whose timeout is whole
// milliseconds, so they fire up to 1 ms late; the open-loop sender uses
// this for the last stretch before each send instead.
func preciseSleep(d time.Duration) {
	if d <= 0 {
		return
	}
	ts := syscall.NsecToTimespec(int64(d))
	for {
		var rem syscall.Timespec
		err := syscall.Nanosleep(&ts, &rem)
		if err != syscall.EINTR {
			return
		}
		ts = rem
	}
}
