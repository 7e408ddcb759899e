package importer

import (
	"slices"
	"strings"

	"github.com/benchseal/benchseal/importer/ingest"
)

// Benchseal is the name LooksLike gives benchseal's own run files.
const Benchseal = "benchseal"

// formatRule says what one tool's files look like: its importer's
// Registration.Format, or benchseal's own. Every importer is checked
// against all of them (checkTool).
type formatRule struct {
	tool string // the benchseal import that takes the file, or Benchseal
	ingest.Format
}

// formatRules are every importer's format (in registrations' order), then
// benchseal's.
var formatRules = func() []formatRule {
	var out []formatRule
	for _, r := range registrations {
		out = append(out, formatRule{r.Peer.Name, r.Format})
	}
	// benchseal's own manifest names its schema; a record has the point
	// and the send time in ns.
	return append(out, formatRule{Benchseal, ingest.Format{Title: "a benchseal run file", Match: func(s *ingest.Sniffed) bool {
		return strings.HasPrefix(s.Fields["schema"], "benchseal/") || s.Has("sent_ns") && s.Has("point")
	}}})
}()

// LooksLike returns the tool whose files data looks like (a benchseal
// import name, or Benchseal) and what the file is, or "" when no rule
// matches; when data looks like tool among others, it returns tool.
func LooksLike(tool string, data []byte) (string, string) {
	rules := matchingRules(data)
	for _, r := range rules {
		if r.tool == tool {
			return tool, r.Title
		}
	}
	if len(rules) == 0 {
		return "", ""
	}
	return rules[0].tool, rules[0].Title
}

// matchingRules returns the format rules data matches, in registry order.
func matchingRules(data []byte) []formatRule {
	s := ingest.NewSniffed(data)
	var out []formatRule
	for _, r := range formatRules {
		if r.Match != nil && r.Match(s) {
			out = append(out, r)
		}
	}
	return out
}

// checkTool refuses files that look like another tool's and not like
// tool's, with one error for the first such file in the order given. A
// file that looks like several other tools' names each of them: which
// one is listed first would otherwise follow the registry's order, a fact
// about benchseal's source rather than about the file.
func checkTool(tool string, files []ingest.File) error {
	for _, f := range files {
		others := otherLookalikes(tool, f.Data)
		if len(others) == 0 {
			continue
		}
		titles := make([]string, len(others))
		uses := make([]string, len(others))
		for i, r := range others {
			titles[i] = r.Title
			uses[i] = "use `benchseal import " + r.tool + "`"
			if r.tool == Benchseal {
				uses[i] = "a benchseal run directory needs no import: use the directory itself (`benchseal replay RUNDIR`)"
			}
		}
		return ingest.Errorf(f.Name, "this looks like %s, which `benchseal import %s` does not read: %s",
			strings.Join(titles, " or "), tool, strings.Join(uses, "; or "))
	}
	return nil
}

// otherLookalikes returns the rules other than tool's that data matches,
// or none when it matches tool's own rule (or no rule).
func otherLookalikes(tool string, data []byte) []formatRule {
	rules := matchingRules(data)
	if slices.ContainsFunc(rules, func(r formatRule) bool { return r.tool == tool }) {
		return nil
	}
	return rules
}
