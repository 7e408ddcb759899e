package report

import (
	"embed"
	"fmt"
	"slices"
	"strings"
)

// Names of the published JSON Schemas of report outputs.
const (
	SchemaCompare = "compare"
	SchemaDecide  = "decide"
	// SchemaReproduce is the reproduce report's (benchseal/reproduce/v1).
	SchemaReproduce = "reproduce"
)

// OutputSchemaNames lists the published JSON Schemas of outputs.
var OutputSchemaNames = []string{SchemaCompare, SchemaDecide, SchemaReproduce}

//go:embed jsonschema/*.schema.json
var outputSchemaFS embed.FS

// OutputSchema returns the published JSON Schema (draft 2020-12) of the
// compare, decide or reproduce JSON output. The decide schema refers to the compare
// schema by its $id.
func OutputSchema(name string) ([]byte, error) {
	if !slices.Contains(OutputSchemaNames, name) {
		return nil, fmt.Errorf("read JSON Schema: unknown output schema %q (want one of %s)", name, strings.Join(OutputSchemaNames, ", "))
	}
	return outputSchemaFS.ReadFile("jsonschema/" + name + ".schema.json")
}
