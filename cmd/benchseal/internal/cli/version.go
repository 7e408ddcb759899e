package cli

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

func init() { register("version", newVersionCmd) }

func newVersionCmd(io *IO) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the benchseal version (as --version does)",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintf(io.Out, "benchseal version %s (%s, %s/%s)\n", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}
