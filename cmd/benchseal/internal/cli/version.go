package cli

import (
	"fmt"
	"runtime"
	"runtime/debug"

	"github.com/spf13/cobra"

	"github.com/benchseal/benchseal/internal/buildinfo"
	"github.com/benchseal/benchseal/schema"
)

// devVersion is Version when the build set none.
const devVersion = "0.1.0-dev"

// A binary built by 'go install …@v0.3.0' (or go build in a tagged
// checkout) carries its module version in its build info: without an -X
// that is its version, not devVersion.
func init() {
	if Version != devVersion {
		return
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		Version = bi.Main.Version
	}
}

// currentBuild returns the running executable's build for a manifest,
// with a warning on io.ErrOut when part of it could not be read (the
// manifest then states what was read).
func currentBuild(o *IO) *schema.Build {
	b, err := buildinfo.Current()
	if err != nil {
		fmt.Fprintln(o.ErrOut, "warning: naming the client build:", err)
	}
	return b
}

// versionLine is the first line of both benchseal version and
// benchseal --version (NewRoot's version template): the version, then the
// Go toolchain and platform of this executable.
func versionLine() string {
	return fmt.Sprintf("benchseal version %s (%s, %s/%s)", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
}

func newVersionCmd(io *IO) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the benchseal version line (as --version prints it) and build",
		Long: `version prints the line --version prints (the benchseal version, Go version
and platform), then the build of this executable:
module and version, source revision and whether the tree was modified, Go
version and build settings, and the sha256 of the executable file, as
capture states them in client.build of every run.`,
		Args: noArgs(),
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(io.Out, versionLine())
			if b := currentBuild(io); b != nil {
				for _, l := range b.Lines() {
					fmt.Fprintf(io.Out, "  %s\n", l)
				}
			}
			return nil
		},
	}
}
