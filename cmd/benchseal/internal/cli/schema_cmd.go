package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/benchseal/benchseal/report"
	"github.com/benchseal/benchseal/schema"
)

func newSchemaCmd(io *IO) *cobra.Command {
	return &cobra.Command{
		Use:   "schema [" + strings.Join(append(slices.Clone(schema.SchemaNames), report.OutputSchemaNames...), "|") + "]",
		Short: "Print the published JSON Schema (draft 2020-12) of a run document or a compare/decide result",
		Long: `schema prints the JSON Schema (draft 2020-12) of manifest.json, of one line of
records.jsonl, of claims.json, or of the JSON output of compare (schema
benchseal/compare/v1) and decide (benchseal/decide/v1), exactly as embedded in
this binary. With no argument it prints the manifest schema.`,
		Example:   "  benchseal schema record > record.schema.json",
		Args:      maximumArgs(1),
		ValidArgs: append(slices.Clone(schema.SchemaNames), report.OutputSchemaNames...),
		RunE: func(cmd *cobra.Command, args []string) error {
			name := schema.SchemaManifest
			if len(args) == 1 {
				name = args[0]
			}
			all := append(slices.Clone(schema.SchemaNames), report.OutputSchemaNames...)
			var b []byte
			var err error
			switch {
			case slices.Contains(report.OutputSchemaNames, name):
				b, err = report.OutputSchema(name)
			case slices.Contains(schema.SchemaNames, name):
				b, err = schema.JSONSchema(name)
			default:
				err = fmt.Errorf("unknown schema %q (want one of %s)", name, strings.Join(all, ", "))
			}
			if err != nil {
				return usageError{err}
			}
			_, err = io.Out.Write(b)
			return err
		},
	}
}
