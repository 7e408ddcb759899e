package cli

import (
	"strings"

	"github.com/spf13/cobra"
)

// Argument checks. Each error is a usage error (exit 2), so no error text
// has to be recognised later. exactArgs and minimumArgs name the command
// and what its arguments are; the others keep cobra's message.

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

// exactArgs accepts exactly n arguments, what they are (e.g. "one run
// directory") named when there are not n.
func exactArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usagef("%s needs %s, got %d", commandName(cmd), what, len(args))
		}
		return nil
	}
}

// minimumArgs accepts n or more arguments, what they are (e.g. "two
// bundles or run directories") named when there are fewer.
func minimumArgs(n int, what string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) < n {
			return usagef("%s needs at least %s, got %d", commandName(cmd), what, len(args))
		}
		return nil
	}
}

// commandName is cmd's path below the root command ("plan validate").
func commandName(cmd *cobra.Command) string {
	return strings.TrimPrefix(cmd.CommandPath(), cmd.Root().Name()+" ")
}

// maximumArgs accepts at most n arguments.
func maximumArgs(n int) cobra.PositionalArgs { return usageArgs(cobra.MaximumNArgs(n)) }
