package report

import (
	"fmt"
	"strings"

	"github.com/benchseal/benchseal/schema"
)

// ClaimsWrittenText says what replay --write-claims wrote: the file, how many
// claims on how many points and repeats, under which definitions and SLO.
func ClaimsWrittenText(path string, c *schema.Claims) string {
	n := 0
	for _, p := range c.Points {
		n += len(p.Metrics)
	}
	defs := c.Definitions
	if c.DefinitionsVersion != "" {
		defs += " (version " + c.DefinitionsVersion + ")"
	}
	slo := "the manifest's SLO"
	if c.SLO != nil {
		var parts []string
		for _, k := range schema.SLOKeys {
			if d := c.SLO.Limit(k); d != 0 {
				parts = append(parts, k+" ≤ "+d.String())
			}
		}
		slo = "SLO " + strings.Join(parts, ", ")
	}
	return fmt.Sprintf("wrote %s: %d claims in %d point and repeat entries, definitions %s, %s, tolerance %s; pack the run and verify recomputes every one", path, n, len(c.Points), defs, slo, shortestFloat(c.Tolerance))
}
