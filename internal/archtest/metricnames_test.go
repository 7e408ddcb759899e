package archtest

import (
	"go/ast"
	"go/token"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// metricTableFile is the one non-test file that spells the canonical
// metric names: the table every list of metrics derives from.
const metricTableFile = "schema/metrics.go"

// metricLiteralAllowed are string literals that spell a canonical metric
// name but are not benchseal's metric, by file and value, besides a peer
// tool's own names (peerOwnName): one in shared code that writes a tool's
// format, or a field of benchseal's file format that shares the metric's
// name.
var metricLiteralAllowed = map[string][]string{
	// AIPerf's metric tags in the export the importer tests write (the
	// importer and definitions state theirs in schema.AIPerf.OwnNames).
	"importer/internal/importtest/aiperftime.go": {"request_throughput", "output_token_throughput", "total_token_throughput"},
	// The manifest field provenance.windows[i].window_ns in a validation
	// error: the JSON name of ToolWindow.WindowNS (its tag), a field of the
	// format the published JSON Schema pins, not the metric.
	"schema/provenance.go": {".window_ns"},
}

// metricWord matches a canonical metric name spelled inside a longer
// literal (help text, an error message, a header), as a whole word. Names
// that are English words ("goodput") are left out: prose may say them.
func metricWord() *regexp.Regexp {
	var alts []string
	for _, m := range schema.Metrics {
		if strings.Contains(m.Name, "_") {
			alts = append(alts, regexp.QuoteMeta(m.Name))
		}
	}
	return regexp.MustCompile(`(?:^|[^A-Za-z0-9_])(` + strings.Join(alts, "|") + `)(?:[^A-Za-z0-9_]|$)`)
}

// metricPathOf reports whether s is a canonical metric name or a path that
// starts with one: NAME, NAME.KEY ("ttft_ns.p50"), NAME_SUFFIX, or any of
// these under "summary.".
func metricPathOf(s string) (string, bool) {
	t := strings.TrimPrefix(s, "summary.")
	for _, m := range schema.Metrics {
		if t == m.Name || strings.HasPrefix(t, m.Name+".") || strings.HasPrefix(t, m.Name+"_") {
			return m.Name, true
		}
	}
	return "", false
}

// metricLiteral is one string literal that spells a metric name.
type metricLiteral struct {
	file, pos, value string
	path             bool // the literal is the name or a path (else it spells one in text)
}

// findMetricLiterals returns every string literal of the module's non-test
// Go files but the table's that spells a canonical metric name.
func findMetricLiterals(t *testing.T) []metricLiteral {
	word := metricWord()
	var out []metricLiteral
	for _, l := range stringLiterals(t) {
		_, path := metricPathOf(l.value)
		if path || word.MatchString(l.value) {
			out = append(out, metricLiteral{file: l.file, pos: l.pos, value: l.value, path: path})
		}
	}
	return out
}

// stringLiteral is one string literal of a Go file: the file relative to
// the module root, file:line, and its value.
type stringLiteral struct{ file, pos, value string }

// stringLiterals returns every string literal of the module's non-test Go
// files but the metrics table's, struct tags left out (a tag is the
// field's JSON name, the format the published schema pins, and cannot be
// a constant).
func stringLiterals(t *testing.T) []stringLiteral {
	var out []stringLiteral
	eachNonTestFile(t, func(rel string, fset *token.FileSet, f *ast.File) {
		rel = filepath.ToSlash(rel)
		if rel == metricTableFile {
			return
		}
		tags := map[*ast.BasicLit]bool{}
		ast.Inspect(f, func(n ast.Node) bool {
			if fl, ok := n.(*ast.Field); ok && fl.Tag != nil {
				tags[fl.Tag] = true
			}
			bl, ok := n.(*ast.BasicLit)
			if !ok || bl.Kind != token.STRING || tags[bl] {
				return true
			}
			if s, err := strconv.Unquote(bl.Value); err == nil {
				pos := fset.Position(bl.Pos())
				out = append(out, stringLiteral{file: rel, pos: rel + ":" + strconv.Itoa(pos.Line), value: s})
			}
			return true
		})
	})
	return out
}

// TestNoMetricNameLiterals fails on a string literal outside the metrics
// table (schema/metrics.go) and tests that spells a canonical metric name:
// the name itself, a path under it ("ttft_ns.p50", "summary.goodput"), or
// the name in a longer text (help, an error, a report header). Those
// derive from the table (schema.Metrics, its constants, MetricPath), so
// that renaming or adding a metric changes every list at once. A literal
// that is a peer tool's own name is allowed where metricLiteralAllowed
// says why.
func TestNoMetricNameLiterals(t *testing.T) {
	var paths, words int
	used := map[[2]string]bool{}
	for _, l := range findMetricLiterals(t) {
		if allowedMetricLiteral(l) {
			used[[2]string{l.file, l.value}] = true
			continue
		}
		kind := "spells a metric name in text"
		if l.path {
			kind = "is a metric name or path"
			paths++
		} else {
			words++
		}
		t.Errorf("%s: %q %s: derive it from schema.Metrics (its constants, fields or MetricPath)", l.pos, l.value, kind)
	}
	for file, vs := range metricLiteralAllowed {
		for _, v := range vs {
			if !used[[2]string{file, v}] {
				t.Errorf("metricLiteralAllowed: %s holds no literal %q: remove the entry", file, v)
			}
		}
	}
	t.Logf("metric-name literals outside %s and tests: %d names or paths, %d in text", metricTableFile, paths, words)
}

func allowedMetricLiteral(l metricLiteral) bool {
	if peerOwnName(l.file, l.value) {
		return true
	}
	for _, v := range metricLiteralAllowed[l.file] {
		if v == l.value {
			return true
		}
	}
	return false
}

// peerToolFiles says whether file is peer tool t's code: its importer
// package or its definitions file.
func peerToolFiles(t *schema.PeerTool, file string) bool {
	dir := strings.ReplaceAll(t.Name, "-", "")
	return strings.HasPrefix(file, "importer/"+dir+"/") || file == "replay/def_"+dir+".go"
}

// peerOwnName says whether value, a literal in file, is a peer tool's own
// name that its registration lists (schema.PeerTool.OwnNames): in the
// tool's code, or in the registrations themselves (schema/peertool.go,
// with the distributions they add).
func peerOwnName(file, value string) bool {
	for _, t := range schema.PeerTools {
		names := t.OwnNames
		if file == "schema/peertool.go" {
			names = append(slices.Clone(t.OwnNames), t.ExtraDists...)
		} else if !peerToolFiles(t, file) {
			continue
		}
		if slices.Contains(names, value) {
			return true
		}
	}
	return false
}

// TestPeerOwnNamesAreUsed fails on a name in a peer tool's OwnNames that
// no literal of its code writes, so that the allowance goes with the use.
func TestPeerOwnNamesAreUsed(t *testing.T) {
	used := map[*schema.PeerTool]map[string]bool{}
	for _, l := range stringLiterals(t) {
		for _, tool := range schema.PeerTools {
			if peerToolFiles(tool, l.file) {
				if used[tool] == nil {
					used[tool] = map[string]bool{}
				}
				used[tool][l.value] = true
			}
		}
	}
	for _, tool := range schema.PeerTools {
		for _, n := range tool.OwnNames {
			if !used[tool][n] {
				t.Errorf("schema.PeerTool %s: OwnNames holds %q, which no literal of its importer or definitions writes: remove it", tool.Name, n)
			}
		}
	}
}
