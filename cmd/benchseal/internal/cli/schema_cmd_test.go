package cli

import (
	"strings"
	"testing"
)

// TestSchemaHelpListsEveryName: schema's help names every schema the
// command accepts, each with what it describes, and nothing else.
func TestSchemaHelpListsEveryName(t *testing.T) {
	names := schemaNames()
	long := schemaLong(names)
	for _, n := range names {
		if schemaWhat[n] == "" {
			t.Errorf("schema %q: no description in schemaWhat", n)
		}
		if !strings.Contains(long, "  "+n+" ") {
			t.Errorf("schema %q accepted but not in the help:\n%s", n, long)
		}
	}
	if len(schemaWhat) != len(names) {
		t.Errorf("schemaWhat describes %d schemas, the command accepts %d", len(schemaWhat), len(names))
	}
}
