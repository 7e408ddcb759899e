//go:build !linux

package capture

import (
	"runtime"

	"github.com/benchseal/benchseal/schema"
)

// kernelClock states that the kernel was not asked: adjtimex is Linux's.
func kernelClock() *schema.Clock {
	return &schema.Clock{Source: "none", Unknown: "no adjtimex on " + runtime.GOOS}
}
