package archtest

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/schema"
)

// sloLiteralAllowed are string literals that spell an SLO limit name
// (schema.SLOKeys) but are not benchseal's SLO key, by file and value,
// besides a peer tool's own names (peerOwnName): a tool's field in shared
// code that reads its format, or another vocabulary that shares the word.
var sloLiteralAllowed = map[string][]string{
	// vLLM's and SGLang's bench_serving per-request "ttfts" list's field
	// name in orig, read by their shared code (their importers and
	// definitions state their own names in schema.PeerTool.OwnNames).
	"importer/internal/serve/serve.go": {"ttft"},
	// servermetrics' roles: what an engine's server-side histogram measures
	// (RoleITL, RoleQueue, RolePrefill besides these), its own vocabulary
	// over the engines' metric names and no SLO limit; servermetrics
	// depends on no benchseal package (internal/archtest/imports_test.go).
	"servermetrics/names.go": {"ttft", "tpot", "e2e"},
}

// sloSpecText matches an SLO limit name written as SLO syntax inside a
// longer literal: a key of a spec ("ttft=200ms", "ttft=%s") or a field
// of manifest.slo ("slo.ttft"). Prose that names a latency in words ("ttft
// p99", a definition's "tpot = (latency − ttft) ÷ (n − 1)") is not SLO
// syntax and is left to read as prose.
func sloSpecText() *regexp.Regexp {
	alts := strings.Join(schema.SLOKeys, "|")
	return regexp.MustCompile(`(?:^|[^A-Za-z0-9_.])(?:` + alts + `)=|(?:^|[^A-Za-z0-9_])slo\.(?:` + alts + `)(?:[^A-Za-z0-9_]|$)`)
}

// TestNoSLOKeyLiterals fails on a string literal outside the metrics
// table (schema/metrics.go) and tests that is an SLO limit name
// ("ttft", "e2e", "tpot") or writes one as SLO syntax ("ttft=200ms" in a
// help text, "slo.ttft"), and on a literal that is a metric's label
// ("TTFT", "E2E latency"): those derive from the table (schema.SLOTTFT
// and its siblings, SLOKeys, SLOMetric, MetricLabel), so that
// the limits an SLO accepts, the texts that list them and the labels
// reports print change at once. A peer tool's own name is allowed where
// sloLiteralAllowed says why.
func TestNoSLOKeyLiterals(t *testing.T) {
	spec := sloSpecText()
	var labels []string
	for _, m := range schema.Metrics {
		labels = append(labels, m.Label)
	}
	var keys, texts, labelLits int
	used := map[[2]string]bool{}
	for _, l := range stringLiterals(t) {
		switch {
		case slices.Contains(schema.SLOKeys, l.value):
			if peerOwnName(l.file, l.value) {
				continue
			}
			if slices.Contains(sloLiteralAllowed[l.file], l.value) {
				used[[2]string{l.file, l.value}] = true
				continue
			}
			keys++
			t.Errorf("%s: %q is an SLO limit name: use schema.SLOTTFT and its siblings, SLOKeys or SLOMetric", l.pos, l.value)
		case spec.MatchString(l.value):
			texts++
			t.Errorf("%s: %q writes an SLO limit name as SLO syntax: derive it from schema.SLOKeys or the SLO constants", l.pos, l.value)
		case slices.Contains(labels, l.value):
			labelLits++
			t.Errorf("%s: %q is a metric's label: use schema.MetricLabel or SLOMetric", l.pos, l.value)
		}
	}
	for file, vs := range sloLiteralAllowed {
		for _, v := range vs {
			if !used[[2]string{file, v}] {
				t.Errorf("sloLiteralAllowed: %s holds no literal %q: remove the entry", file, v)
			}
		}
	}
	t.Logf("SLO-key literals outside %s and tests: %d keys, %d as SLO syntax in text; %d metric labels", metricTableFile, keys, texts, labelLits)
}

func TestSLOSpecTextFindsSLOSyntaxOnly(t *testing.T) {
	spec := sloSpecText()
	for s, want := range map[string]bool{
		"e.g. ttft=200ms,e2e=5s": true,
		"tpot=%s":                true,
		"slo.ttft":               true,
		"field slo.e2e, got":     true,
		"ttft p99":               false,
		"ttft_ns.p50":            false,
		"e2e_latency=1":          false,
		"slo.ttft_x":             false,
		"x.ttft=1":               false,
	} {
		if got := spec.MatchString(s); got != want {
			t.Errorf("sloSpecText matches %q: %v, want %v", s, got, want)
		}
	}
}
