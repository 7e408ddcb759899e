//go:build !linux

package capture

import "time"

// preciseSleep sleeps d; on this platform with the Go runtime's timers.
func preciseSleep(d time.Duration) { time.Sleep(d) }

// lockSenderThread does nothing on this platform.
func lockSenderThread() func() { return func() {} }
