package cli

import (
	"fmt"
	"runtime"

	"github.com/spf13/cobra"
)

func newVersionCmd(io *IO) *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the benchseal version (as --version does)",
		Args:  noArgs(),
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintf(io.Out, "benchseal version %s (%s, %s/%s)\n", Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
			return nil
		},
	}
}
