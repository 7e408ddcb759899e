package cli

import (
	"strings"

	"github.com/spf13/cobra"

	"github.com/benchseal/benchseal/schema"
)

func init() { register("schema", newSchemaCmd) }

func newSchemaCmd(io *IO) *cobra.Command {
	return &cobra.Command{
		Use:   "schema [" + strings.Join(schema.SchemaNames, "|") + "]",
		Short: "Print the published JSON Schema (draft 2020-12) of a run document",
		Long: `schema prints the JSON Schema (draft 2020-12) of manifest.json, of one line of
records.jsonl, or of claims.json, exactly as embedded in this binary. With no
argument it prints the manifest schema.`,
		Example:   "  benchseal schema record > record.schema.json",
		Args:      cobra.MaximumNArgs(1),
		ValidArgs: schema.SchemaNames,
		RunE: func(cmd *cobra.Command, args []string) error {
			name := schema.SchemaManifest
			if len(args) == 1 {
				name = args[0]
			}
			b, err := schema.JSONSchema(name)
			if err != nil {
				return usageError{err}
			}
			_, err = io.Out.Write(b)
			return err
		},
	}
}
