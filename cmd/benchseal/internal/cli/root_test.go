package cli

import (
	"bytes"
	"errors"
	"strings"
	"testing"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
)

// TestUsageMistakesExitTwo runs each kind of mistake cobra itself detects
// (unknown command or flag, argument count, required flag, flag groups)
// and those of the enum and argument helpers: every one is a usage error,
// typed where it is made, whatever its words.
func TestUsageMistakesExitTwo(t *testing.T) {
	cases := []struct {
		name, want string
		args       []string
	}{
		{"unknown command", `unknown command "nosuch" for "benchseal"`, []string{"nosuch"}},
		{"unknown flag", "unknown flag: --nosuch", []string{"replay", "--nosuch", "x"}},
		{"flag needs an argument", "flag needs an argument: --output", []string{"replay", "x", "--output"}},
		{"bad number", `invalid argument "x" for "--max-problems" flag`, []string{"validate", "--max-problems", "x", "d"}},
		{"too many arguments", "replay needs one run directory or bundle, got 2", []string{"replay", "a", "b"}},
		{"too few arguments", "compare needs at least two bundles or run directories, got 1", []string{"compare", "a"}},
		{"a subcommand names its path", "plan validate needs one plan file, got 0", []string{"plan", "validate"}},
		{"arguments to a command without", `unknown command "x" for "benchseal version"`, []string{"version", "x"}},
		{"too many schema names", "accepts at most 1 arg(s), received 2", []string{"schema", "a", "b"}},
		{"required flag", `required flag(s) "out" not set`, []string{"keygen"}},
		{"mutually exclusive flags", "--endpoint and --simulate cannot be given together: choose one (--endpoint URL measures that server; --simulate the built-in simulator)", []string{"capture", "--simulate", "--endpoint", "http://x", "--out", "o"}},
		{"closed or open loop", "--concurrency and --rate cannot be given together: choose one (--concurrency N runs a closed loop, N requests in flight; --rate R an open loop, R requests per second on a schedule)", []string{"capture", "--simulate", "--concurrency", "4", "--rate", "5", "--out", "o"}},
		{"one of a group required", "at least one of the flags in the group [endpoint simulate] is required", []string{"capture", "--out", "o"}},
		{"enum value", `invalid argument "yaml" for "--output" flag: want one of text, json, csv, markdown, html`, []string{"replay", "x", "--output", "yaml"}},
		{"completion's own arguments", `unknown command "x" for "benchseal completion bash"`, []string{"completion", "bash", "x"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, _, errOut := runArgs(t, nil, c.args...)
			if code != ExitUsage {
				t.Fatalf("exit %d, want %d\n%s", code, ExitUsage, errOut)
			}
			if !strings.Contains(errOut, c.want) || !strings.Contains(errOut, "--help' for usage.") {
				t.Errorf("stderr lacks %q and the pointer to help:\n%s", c.want, errOut)
			}
		})
	}
}

// TestNonUsageErrorsAreNotUsage: an error that merely reads like one of
// cobra's usage messages is not mistaken for one (no text is matched).
func TestNonUsageErrorsAreNotUsage(t *testing.T) {
	var buf bytes.Buffer
	if code := exitCode(errors.New(`unknown command "x": accepts 1 arg(s), required flag`), &buf, "benchseal"); code != ExitError {
		t.Fatalf("exit %d, want %d", code, ExitError)
	}
}

// TestEnumFlagsListTheirValues checks that the help of every enum flag
// names each value it accepts, and that it refuses others.
func TestEnumFlagsListTheirValues(t *testing.T) {
	n := 0
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.Flags().VisitAll(func(f *pflag.Flag) {
			e, ok := f.Value.(*enumValue)
			if !ok {
				return
			}
			n++
			for _, v := range e.values {
				if !strings.Contains(f.Usage, v) {
					t.Errorf("%s --%s: help %q does not name %q", c.CommandPath(), f.Name, f.Usage, v)
				}
			}
			if err := e.Set("no-such-value"); err == nil {
				t.Errorf("%s --%s accepts any value", c.CommandPath(), f.Name)
			}
		})
		for _, s := range c.Commands() {
			walk(s)
		}
	}
	walk(NewRoot(DefaultDeps(&IO{})))
	if n < 10 {
		t.Fatalf("%d enum flags found; want the output, api, evidence ... flags", n)
	}
}

// TestEnumFlagsCompleteTheirValues: the shell completes an enum flag with
// the values it takes.
func TestEnumFlagsCompleteTheirValues(t *testing.T) {
	code, out, errOut := runArgs(t, nil, cobra.ShellCompRequestCmd, "verify", "b.tar", "--output", "")
	if code != ExitOK || out != "text\njson\n:4\n" {
		t.Fatalf("exit %d, completion %q\n%s", code, out, errOut)
	}
}
