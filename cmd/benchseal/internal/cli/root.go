package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"regexp"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"

	"github.com/benchseal/benchseal/importer"
	"github.com/benchseal/benchseal/internal/progress"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/verify"
)

// Exit codes of every benchseal command.
const (
	ExitOK       = 0
	ExitError    = 1
	ExitUsage    = 2
	ExitRejected = 3 // checked and rejected: invalid run, failed verification, mismatched claims, a claim not reproduced
	// ExitInconclusive: reproduce decided no claim against the original
	// but could not decide every one (more repeats needed).
	ExitInconclusive = 4
	// ExitSIGINT and ExitSIGTERM (128 + the signal number, the shell's
	// convention): the command was stopped by the signal, leaving nothing
	// half-written.
	ExitSIGINT  = 130
	ExitSIGTERM = 143
)

// interrupted is the cause of a context cancelled by a signal.
type interrupted struct{ sig os.Signal }

func (i interrupted) Error() string { return "interrupted by " + signalName(i.sig) }

func signalName(s os.Signal) string {
	if s == syscall.SIGTERM {
		return "SIGTERM"
	}
	return "SIGINT"
}

func signalExit(s os.Signal) int {
	if s == syscall.SIGTERM {
		return ExitSIGTERM
	}
	return ExitSIGINT
}

// Version is the benchseal version, set at build time with
// -ldflags "-X github.com/benchseal/benchseal/cmd/benchseal/internal/cli.Version=...".
var Version string = devVersion // typed: the Dockerfile test requires a string variable for -X

// IO is what a command reads from and writes to.
type IO struct {
	In     io.Reader
	Out    io.Writer
	ErrOut io.Writer
	// Getenv reads the environment; tests replace it.
	Getenv func(string) string
	// ctx is the command's context (cancelled by SIGINT and SIGTERM), for
	// the prompts that read In.
	ctx context.Context
}

// context returns the command's context.
func (io *IO) context() context.Context {
	if io.ctx == nil {
		return context.Background()
	}
	return io.ctx
}

// usageError marks an error as a usage error (exit 2).
type usageError struct{ err error }

func (e usageError) Error() string { return e.err.Error() }
func (e usageError) Unwrap() error { return e.err }

// usagef returns a usage error.
func usagef(format string, args ...any) error {
	return usageError{fmt.Errorf(format, args...)}
}

// rejectedError marks an error as "checked and rejected" (exit 3).
type rejectedError struct{ err error }

func (e rejectedError) Error() string { return e.err.Error() }
func (e rejectedError) Unwrap() error { return e.err }

// rejected wraps err so that the command exits 3.
func rejected(err error) error { return rejectedError{err} }

// silentExit ends a command with a code and no further message (the
// command already printed its report).
type silentExit struct{ code int }

func (e silentExit) Error() string { return fmt.Sprintf("exit %d", e.code) }

// Deps are what commands take from outside the command tree: the
// streams, and the checkers verify runs on behalf of other packages. They
// are passed to NewRoot, never set in package variables.
type Deps struct {
	IO *IO
	// Claims recomputes every claim during verify and attest; nil: the
	// claims-recompute check is reported skipped.
	Claims verify.ClaimChecker
	// Imports re-derives an imported run from its attached source files
	// during verify, attest, validate and compare.
	Imports verify.ImportChecker
}

// DefaultDeps are benchseal's own dependencies: claims are recomputed by
// the replay engine, imported runs re-derived by the importers.
func DefaultDeps(io *IO) *Deps {
	return &Deps{IO: io, Claims: replay.ClaimChecker{}, Imports: importer.Rederiver{}}
}

// verifyOptions are the verifier options that run d's checkers.
func (d *Deps) verifyOptions() []verify.Option {
	var opts []verify.Option
	if d.Claims != nil {
		opts = append(opts, verify.WithClaimChecker(d.Claims))
	}
	return append(opts, verify.WithImportChecker(d.Imports))
}

// NewRoot builds the benchseal command tree: every command is listed here.
func NewRoot(d *Deps) *cobra.Command {
	io := d.IO
	root := &cobra.Command{
		Use:   "benchseal",
		Short: "Seal, verify and recompute LLM-inference benchmark evidence",
		Long: `benchseal turns an LLM-inference benchmark run into a signed, content-addressed,
reproducible evidence bundle, verifies such bundles offline with nothing but the
bundle and a public key, and recomputes every published metric from the raw
per-request timestamps.`,
		Version:       Version,
		SilenceUsage:  true,
		SilenceErrors: true,
		// cobra checks required flags and flag groups after this hook and
		// returns plain errors; checked here first, they are usage errors.
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := cmd.ValidateRequiredFlags(); err != nil {
				return usageError{err}
			}
			if err := cmd.ValidateFlagGroups(); err != nil {
				return usageError{flagGroupError(err)}
			}
			return nil
		},
	}
	// --version prints the line benchseal version starts with, as a
	// quoted template constant (a version set with -X is any string).
	root.SetVersionTemplate("{{" + strconv.Quote(versionLine()) + "}}\n")
	root.SetIn(io.In)
	root.SetOut(io.Out)
	root.SetErr(io.ErrOut)
	root.SetFlagErrorFunc(func(c *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(
		newAttestCmd(io, d),
		newCaptureCmd(io),
		newCompareCmd(io, d),
		newDecideCmd(io, d),
		newDocsCmd(io, func() *cobra.Command { return NewRoot(d) }),
		newImportCmd(io),
		newInspectCmd(io),
		newK8sCmd(io),
		newKeygenCmd(io),
		newMergeCmd(io, d),
		newPackCmd(io),
		newPlanCmd(io),
		newPullCmd(io),
		newPushCmd(io),
		newReplayCmd(io),
		newReproduceCmd(io, d),
		newSchemaCmd(io),
		newSignCmd(io),
		newSimulateCmd(io),
		newSynthCmd(io),
		newValidateCmd(io, d),
		newVerifyCmd(io, d),
		newVersionCmd(io),
	)
	completeEnums(root)
	return root
}

// Main runs benchseal with args and returns the process exit code.
//
// SIGINT or SIGTERM cancels the command's context: it stops promptly,
// removes what it was writing (outputs are staged and renamed into place,
// so nothing half-written is ever at the output path) and exits 130 or
// 143. A second signal exits at once with the same code; a later run
// reclaims the staging it leaves.
func Main(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, cancel := context.WithCancelCause(context.Background())
	defer cancel(nil)
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	defer signal.Stop(sigs)
	done := make(chan struct{})
	defer close(done)
	go func() {
		select {
		case s := <-sigs:
			cancel(interrupted{s})
		case <-done:
			return
		}
		select {
		case s := <-sigs:
			fmt.Fprintf(stderr, "benchseal: %s again: exiting now\n", signalName(s))
			os.Exit(signalExit(s))
		case <-done:
		}
	}()
	code := run(ctx, args, DefaultDeps(&IO{In: stdin, Out: stdout, ErrOut: stderr, Getenv: os.Getenv}))
	var in interrupted
	if errors.As(context.Cause(ctx), &in) {
		fmt.Fprintf(stderr, "benchseal: %v\n", in)
		return signalExit(in.sig)
	}
	return code
}

func run(ctx context.Context, args []string, d *Deps) int {
	// Standard output goes through textOut (publisher text never acts on
	// a terminal); the command tree gets copies so d stays the caller's.
	out := &textOut{w: d.IO.Out}
	defer out.Flush()
	stdio := *d.IO
	stdio.Out = out
	deps := *d
	deps.IO = &stdio
	d = &deps
	io := d.IO
	io.ctx = ctx
	root := NewRoot(d)
	root.SetArgs(args)
	// cobra's help and completion commands, added now as Execute would:
	// their argument checks return plain errors, made usage errors here.
	root.InitDefaultHelpCmd()
	root.InitDefaultCompletionCmd(args...)
	for _, c := range root.Commands() {
		if c.Name() == "completion" {
			usageArgsTree(c)
		}
	}
	// cobra reports an unknown top-level command from Find with a plain
	// error: every error Find returns for the root is that, a usage error.
	// (A shell's completion request names cobra's hidden command, which
	// Execute adds itself.)
	if len(args) == 0 || (args[0] != cobra.ShellCompRequestCmd && args[0] != cobra.ShellCompNoDescRequestCmd) {
		if _, _, err := root.Find(args); err != nil {
			return exitCode(usageError{err}, io.ErrOut, root.CommandPath())
		}
	}
	line := newProgress(io.ErrOut, isTerminal(io.ErrOut), io.Getenv)
	cmd, err := root.ExecuteContextC(progress.With(ctx, line.fn()))
	line.clear()
	var in interrupted
	if err != nil && errors.Is(err, context.Canceled) && errors.As(context.Cause(ctx), &in) {
		return ExitError // Main reports the signal and its exit code
	}
	path := root.CommandPath()
	if cmd != nil {
		path = cmd.CommandPath()
	}
	return exitCode(err, io.ErrOut, path)
}

// exitCode maps an error to an exit code, printing it; a usage error
// points to the help of the command that failed (path, e.g. "benchseal
// replay"). This is the one place where errors become exit codes.
func exitCode(err error, errOut io.Writer, path string) int {
	if err == nil {
		return ExitOK
	}
	// An error may quote publisher text: it is printed through the same
	// escaping as standard output.
	eo := &textOut{w: errOut}
	defer eo.Flush()
	errOut = eo
	var se silentExit
	if errors.As(err, &se) {
		return se.code
	}
	var ue usageError
	var re rejectedError
	switch {
	case errors.As(err, &ue):
		fmt.Fprintf(errOut, "benchseal: %v\n", err)
		fmt.Fprintf(errOut, "Run '%s --help' for usage.\n", path)
		return ExitUsage
	case errors.As(err, &re):
		fmt.Fprintf(errOut, "benchseal: rejected: %v\n", err)
		return ExitRejected
	default:
		fmt.Fprintf(errOut, "benchseal: %v\n", err)
		return ExitError
	}
}

// exclusiveHints says, for a pair of flags that exclude each other, what
// each one chooses.
var exclusiveHints = map[string]string{
	"concurrency rate":  "--concurrency N runs a closed loop, N requests in flight; --rate R an open loop, R requests per second on a schedule",
	"endpoint simulate": "--endpoint URL measures that server; --simulate the built-in simulator",
	"plan preset":       "--plan FILE takes the load from a plan; --preset NAME from a built-in one",
	"shard shards":      "--shard I/N runs one shard of a sharded run; --shards N runs all N here",
}

// mutuallyExclusive matches cobra's error for flags of an exclusive group
// given together (cobra's flag_groups.go).
var mutuallyExclusive = regexp.MustCompile(`^if any flags in the group \[([^]]+)\] are set none of the others can be; \[([^]]+)\] were all set$`)

// flagGroupError restates cobra's message for flags that exclude each
// other as which flags were given together and which to choose.
func flagGroupError(err error) error {
	m := mutuallyExclusive.FindStringSubmatch(err.Error())
	if m == nil {
		return err
	}
	set := strings.Fields(m[2])
	for i := range set {
		set[i] = "--" + set[i]
	}
	msg := strings.Join(set, " and ") + " cannot be given together: choose one"
	if h, ok := exclusiveHints[m[1]]; ok {
		msg += " (" + h + ")"
	}
	return errors.New(msg)
}
