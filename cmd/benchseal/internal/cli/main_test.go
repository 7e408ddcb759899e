package cli

import (
	"flag"
	"os"
	"path/filepath"
	"testing"

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
		Setup: func(env *testscript.Env) error {
			// $FIXTURES: the real peer-tool outputs of testdata/fixtures.
			fx, err := filepath.Abs(filepath.Join("..", "..", "..", "..", "testdata", "fixtures"))
			if err != nil {
				return err
			}
			env.Setenv("FIXTURES", fx)
			env.Setenv("SOURCE_DATE_EPOCH", "")
			env.Setenv("BENCHSEAL_PASSWORD", "")
			env.Setenv("NO_COLOR", "1")
			return nil
		},
	})
}
