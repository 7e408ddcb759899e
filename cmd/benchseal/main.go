package main

import (
	"os"
	"runtime/debug"

	"github.com/benchseal/benchseal/cmd/benchseal/internal/cli"
)

// memoryLimit is the soft limit on the Go runtime's memory
// (runtime/debug.SetMemoryLimit) unless GOMEMLIMIT sets one. The commands
// stream records and allocate garbage at the rate they read; under the
// default GOGC=100 the heap grows to twice what is live before a
// collection, so at 5M requests a verify holding 100 MB lifted the peak
// RSS past the 256 MiB of docs/performance.md's goal. Near the limit the
// collector runs sooner and returns freed pages, so the peak follows what
// is live, not the garbage; with less live than this it only costs
// collections.
const memoryLimit = 200 << 20

func main() {
	if os.Getenv("GOMEMLIMIT") == "" {
		debug.SetMemoryLimit(memoryLimit)
	}
	os.Exit(cli.Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}
