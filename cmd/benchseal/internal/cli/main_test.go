package cli

import (
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/rogpeppe/go-internal/testscript"
)

// update rewrites golden files of this package: go test ./... -update
var update = flag.Bool("update", false, "rewrite golden files")

func TestMain(m *testing.M) {
	if os.Getenv("BENCHSEAL_TEST_MAIN") == "1" { // a child of TestSignalsStopLongCommands
		os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
	}
	testscript.Main(m, map[string]func(){
		"benchseal": func() { os.Exit(Main(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) },
	})
}

// TestScripts runs the end-to-end CLI scripts in testdata/script/*.txtar.
// Each command area adds its own scripts there.
func TestScripts(t *testing.T) {
	testscript.Run(t, testscript.Params{
		Dir:                 "testdata/script",
		RequireExplicitExec: true,
		UpdateScripts:       *update,
		Cmds:                map[string]func(*testscript.TestScript, bool, []string){"waitfor": cmdWaitFor, "jsonl": cmdJSONL, "retime": cmdRetime, "jsonvalid": cmdJSONValid, "runid": cmdRunID},
		Setup: func(env *testscript.Env) error {
			// $FIXTURES: the real peer-tool outputs of testdata/fixtures.
			fx, err := filepath.Abs(filepath.Join("..", "..", "..", "..", "testdata", "fixtures"))
			if err != nil {
				return err
			}
			env.Setenv("FIXTURES", fx)
			// $TRACES: the request-trace samples of testdata/traces.
			env.Setenv("TRACES", filepath.Join(filepath.Dir(fx), "traces"))
			// $CONVERSATIONS: the conversation samples of testdata/conversations.
			env.Setenv("CONVERSATIONS", filepath.Join(filepath.Dir(fx), "conversations"))
			// $SCHEMAS: the published JSON Schemas, schema/jsonschema.
			env.Setenv("SCHEMAS", filepath.Join(filepath.Dir(filepath.Dir(fx)), "schema", "jsonschema"))
			env.Setenv("SOURCE_DATE_EPOCH", "")
			env.Setenv("BENCHSEAL_PASSWORD", "")
			env.Setenv("NO_COLOR", "1")
			// No phase lines: a slow machine must not add one to a
			// script's stderr (docs/format.md, progress).
			env.Setenv("BENCHSEAL_PROGRESS", "off")
			// $START_PAST: a common start a minute ago (capture refuses
			// one more than a day in the past).
			env.Setenv("START_PAST", time.Now().Add(-time.Minute).UTC().Format(time.RFC3339))
			return nil
		},
	})
}

// waitForLimit is how long waitfor polls: generous, as a loaded CI machine
// may take seconds to start a command; a script that waits on an event
// never fails for being slow, only for the event not happening.
const waitForLimit = 2 * time.Minute

// cmdWaitFor is the script command "waitfor FILE [REGEXP]": it polls until
// FILE exists (and, given REGEXP, its contents match), so a script
// synchronises with a background command on what it wrote instead of
// sleeping.
func cmdWaitFor(ts *testscript.TestScript, neg bool, args []string) {
	if neg || len(args) < 1 || len(args) > 2 {
		ts.Fatalf("usage: waitfor FILE [REGEXP]")
	}
	var re *regexp.Regexp
	if len(args) == 2 {
		re = regexp.MustCompile(args[1])
	}
	deadline := time.Now().Add(waitForLimit)
	for {
		b, err := os.ReadFile(ts.MkAbs(args[0]))
		if err == nil && (re == nil || re.Match(b)) {
			return
		}
		if time.Now().After(deadline) {
			ts.Fatalf("waitfor %s: not there after %v (last read: %v)", strings.Join(args, " "), waitForLimit, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
