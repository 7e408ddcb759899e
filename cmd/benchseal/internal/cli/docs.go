package cli

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/benchseal/benchseal/schema"
)

type docsOptions struct {
	out string
}

// newDocsCmd builds the docs command; tree builds a fresh command tree
// to document.
func newDocsCmd(_ *IO, tree func() *cobra.Command) *cobra.Command {
	o := &docsOptions{}
	cmd := &cobra.Command{
		Use:   "docs --out DIR",
		Short: "Write the command reference as Markdown, one file per command",
		Args:  noArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			// A fresh tree: the executing one has cobra's help and completion
			// commands added by Execute, which would list them in every usage.
			return writeDocs(tree(), o.out)
		},
	}
	cmd.Flags().StringVar(&o.out, "out", "", "folder to write the Markdown files into (required)")
	cmd.MarkFlagRequired("out")
	return cmd
}

// writeDocs writes one Markdown file per command, each replaced atomically.
func writeDocs(root *cobra.Command, dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var walk func(c *cobra.Command) error
	walk = func(c *cobra.Command) error {
		if c.Hidden || c.Name() == "help" || c.Name() == "completion" {
			return nil
		}
		var b bytes.Buffer
		fmt.Fprintf(&b, "# %s\n\n%s\n\n", c.CommandPath(), c.Short)
		if c.Long != "" {
			fmt.Fprintf(&b, "%s\n\n", strings.TrimSpace(c.Long))
		}
		fmt.Fprintf(&b, "```\n%s```\n", c.UsageString())
		name := strings.ReplaceAll(c.CommandPath(), " ", "_") + ".md"
		if err := schema.WriteFileAtomic(filepath.Join(dir, name), b.Bytes(), 0o644); err != nil {
			return err
		}
		for _, sub := range c.Commands() {
			if err := walk(sub); err != nil {
				return err
			}
		}
		return nil
	}
	return walk(root)
}
