package cli

import (
	"fmt"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/benchseal/benchseal/report"
	"github.com/benchseal/benchseal/schema"
)

// schemaWhat says which document each published JSON Schema describes;
// schema's help lists every name the command accepts (schemaNames) with
// its entry here (TestSchemaHelpListsEveryName).
var schemaWhat = map[string]string{
	schema.SchemaManifest:  "manifest.json",
	schema.SchemaRecord:    "one line of records.jsonl",
	schema.SchemaClaims:    "claims.json",
	schema.SchemaPlan:      "a pre-registered test plan (benchseal plan)",
	report.SchemaCompare:   "the JSON output of compare (benchseal/compare/v1)",
	report.SchemaDecide:    "the JSON output of decide (benchseal/decide/v1)",
	report.SchemaReproduce: "the JSON output of reproduce (benchseal/reproduce/v1)",
}

// schemaNames is every name benchseal schema accepts: the run documents'
// and plan's schemas, then the outputs'.
func schemaNames() []string {
	return append(slices.Clone(schema.SchemaNames), report.OutputSchemaNames...)
}

// schemaLong is schema's help text, one line per accepted name.
func schemaLong(names []string) string {
	var b strings.Builder
	b.WriteString("schema prints the JSON Schema (draft 2020-12) of one of these documents, exactly\nas embedded in this binary. With no argument it prints the manifest schema.\n\n")
	for _, n := range names {
		fmt.Fprintf(&b, "  %-10s %s\n", n, schemaWhat[n])
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func newSchemaCmd(io *IO) *cobra.Command {
	all := schemaNames()
	return &cobra.Command{
		Use:       "schema [" + strings.Join(all, "|") + "]",
		Short:     "Print the published JSON Schema (draft 2020-12) of a run document, a plan or a command's JSON output",
		Long:      schemaLong(all),
		Example:   "  benchseal schema record > record.schema.json",
		Args:      maximumArgs(1),
		ValidArgs: all,
		RunE: func(cmd *cobra.Command, args []string) error {
			name := schema.SchemaManifest
			if len(args) == 1 {
				name = args[0]
			}
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
