package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// enumFlag defines a string flag, with default value, that can be set
// only to one of values: anything else is refused when the flags are
// parsed, a usage error listing the values. usage must name every value
// (TestEnumFlagsListTheirValues).
func enumFlag(f *pflag.FlagSet, p *string, name, value string, values []string, usage string) {
	*p = value
	f.Var(&enumValue{p: p, values: values}, name, usage)
}

// completeEnums makes the shell complete every enum flag of c and the
// commands below it with the values it takes.
func completeEnums(c *cobra.Command) {
	c.LocalFlags().VisitAll(func(f *pflag.Flag) {
		if e, ok := f.Value.(*enumValue); ok {
			_ = c.RegisterFlagCompletionFunc(f.Name, func(*cobra.Command, []string, string) ([]string, cobra.ShellCompDirective) {
				return e.values, cobra.ShellCompDirectiveNoFileComp
			})
		}
	})
	for _, sub := range c.Commands() {
		completeEnums(sub)
	}
}

// enumValue is the pflag.Value of an enumFlag.
type enumValue struct {
	p      *string
	values []string
}

func (e *enumValue) Set(s string) error {
	if !slices.Contains(e.values, s) {
		return fmt.Errorf("want one of %s", strings.Join(e.values, ", "))
	}
	*e.p = s
	return nil
}

// Type is "string", as for a plain string flag, so help reads the same.
func (e *enumValue) Type() string { return "string" }

func (e *enumValue) String() string { return *e.p }
