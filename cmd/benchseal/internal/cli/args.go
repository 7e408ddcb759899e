package cli

import (
	"github.com/spf13/cobra"
)

// Argument checks. Each is cobra's check (same message) whose error is a
// usage error (exit 2), so no error text has to be recognised later.

// usageArgs makes every error of check a usage error.
func usageArgs(check cobra.PositionalArgs) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if err := check(cmd, args); err != nil {
			return usageError{err}
		}
		return nil
	}
}

// usageArgsTree applies usageArgs to the argument checks of c and every
// command below it (cobra's own completion commands).
func usageArgsTree(c *cobra.Command) {
	if c.Args != nil {
		c.Args = usageArgs(c.Args)
	}
	for _, sub := range c.Commands() {
		usageArgsTree(sub)
	}
}

// noArgs accepts no arguments.
func noArgs() cobra.PositionalArgs { return usageArgs(cobra.NoArgs) }

// exactArgs accepts exactly n arguments.
func exactArgs(n int) cobra.PositionalArgs { return usageArgs(cobra.ExactArgs(n)) }

// minimumArgs accepts n or more arguments.
func minimumArgs(n int) cobra.PositionalArgs { return usageArgs(cobra.MinimumNArgs(n)) }

// maximumArgs accepts at most n arguments.
func maximumArgs(n int) cobra.PositionalArgs { return usageArgs(cobra.MaximumNArgs(n)) }
