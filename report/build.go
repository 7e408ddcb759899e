package report

import (
	"fmt"
	"io"
	"strings"

	"github.com/benchseal/benchseal/schema"
)

// writeBuild writes a build's lines (schema.Build.Lines) under label,
// aligned at column indent, with schema.BuildUnchecked.
func writeBuild(w io.Writer, label string, indent int, b *schema.Build) {
	for i, l := range b.Lines() {
		if i == 0 {
			fmt.Fprintf(w, "%-*s%s (%s)\n", indent, label, l, schema.BuildUnchecked)
			continue
		}
		fmt.Fprintf(w, "%*s%s\n", indent, "", l)
	}
}

// BuildsText is the builds a manifest states, as "client" (the
// executable that measured) and "importer" (the benchseal that imported);
// nothing for a manifest that states none.
func BuildsText(indent int, client, importer *schema.Build) string {
	w := new(strings.Builder)
	if client != nil {
		writeBuild(w, "client", indent, client)
	}
	if importer != nil {
		writeBuild(w, "importer", indent, importer)
	}
	return w.String()
}
