package report

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/reproduce/verdict"
	"github.com/benchseal/benchseal/stats"
)

// WriteReproduce renders a reproduction report in format f (text, json,
// markdown or html).
func WriteReproduce(out io.Writer, f Format, r *verdict.Report) error {
	switch f {
	case FormatJSON:
		return ReproduceJSON(out, r)
	case FormatMarkdown:
		return reproduceMarkdown(out, r)
	case FormatHTML:
		return reproduceTemplate.ExecuteTemplate(out, "reproduce", newReproduceModel(r))
	case FormatText, "":
		return reproduceText(out, r)
	}
	return fmt.Errorf("report: format %q is not available for reproduce", f)
}

// ReproduceJSON writes the report as JSON (schema benchseal/reproduce/v1,
// `benchseal schema reproduce`): the values as measured, in the replay
// contract's units (ns, per second), never rounded.
func ReproduceJSON(out io.Writer, r *verdict.Report) error {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(r); err != nil {
		return fmt.Errorf("write reproduce JSON: %w", err)
	}
	_, err := out.Write(buf.Bytes())
	return err
}

// reproduceModel is the report as people read it: every number formatted
// once, for text, Markdown and HTML alike.
type reproduceModel struct {
	Original, RunManifest, SignedBy, Reproduction, ReproManifest string
	Method, Repeats                                              string
	Overall, Tally                                               string
	Claims                                                       table
	Limits, Notes, Withheld                                      []string
}

func newReproduceModel(r *verdict.Report) *reproduceModel {
	m := &reproduceModel{Original: r.Original.Bundle, RunManifest: r.Original.RunManifest, Reproduction: r.ReproductionDir,
		ReproManifest: r.ReproductionManifestDigest, Overall: string(r.Overall), Limits: r.Limits, Notes: r.Notes, Withheld: r.Withheld}
	m.SignedBy = "not authenticated (unsigned input allowed)"
	if r.Original.Authenticated {
		m.SignedBy = "verified signature of " + strings.Join(r.Original.SignedBy, ", ")
	}
	m.Method = fmt.Sprintf("equivalence within a %s margin: the ratio reproduction/original (Hodges–Lehmann, distribution-free interval at ≥ %s confidence, α = %s per side) must lie in [%s, %s]; counts and flags exactly; definitions %s%s, boundary %s",
		percent(r.Margin), percent(1-2*r.Alpha), strconv.FormatFloat(r.Alpha, 'g', -1, 64), strconv.FormatFloat(1/(1+r.Margin), 'f', 3, 64), strconv.FormatFloat(1+r.Margin, 'f', 3, 64), r.Definitions, parenthesis(r.DefinitionsVersion), r.Boundary)
	m.Repeats = fmt.Sprintf("%d original, %d reproduction", r.Repeats.Original, r.Repeats.Reproduction)
	m.Tally = fmt.Sprintf("%d reproduced, %d not reproduced, %d inconclusive", r.Counts.Reproduced, r.Counts.NotReproduced, r.Counts.Inconclusive)
	m.Claims = table{Head: []string{"claim", "point", "original median", "reproduced median", "Hodges–Lehmann ratio [interval]", "verdict"}, Num: []bool{false, false, true, true, true, false}}
	for _, c := range r.Claims {
		mn := nameOf(c.Metric, "")
		v := string(c.Verdict)
		switch {
		case c.RepeatsNeeded > stats.ExactLimit:
			v += fmt.Sprintf(" (more than %d reproduction repeats needed)", stats.ExactLimit)
		case c.RepeatsNeeded > 0:
			v += fmt.Sprintf(" (about %d reproduction repeats needed)", c.RepeatsNeeded)
		}
		if c.Reason != "" {
			v += ": " + c.Reason
		}
		m.Claims.Rows = append(m.Claims.Rows, []string{strings.Join(c.Paths, ", "), c.Point,
			sideValue(c.Original, c.OriginalMedian, c.Kind, mn), sideValue(c.Reproduced, c.ReproducedMedian, c.Kind, mn), ratioText(c), v})
	}
	return m
}

func parenthesis(s string) string {
	if s == "" {
		return ""
	}
	return " (" + s + ")"
}

// percent writes a fraction as a percentage ("10%").
func percent(f float64) string { return digits.Percent(f) }

// sideValue is one side's column: a count or flag as the range of its
// repeats' values ("23..24"), which are what decideExact compares (a
// median of counts, 23.5, is a count nobody measured); else the median.
func sideValue(vs []float64, med *float64, kind string, mn metricName) string {
	if kind == verdict.KindExact && len(vs) > 0 {
		lo, hi := slices.Min(vs), slices.Max(vs)
		if lo == hi {
			return formatFloat(lo)
		}
		return formatFloat(lo) + ".." + formatFloat(hi)
	}
	return claimValue(med, kind, mn)
}

// claimValue is a median over repeats in the metric's display unit.
func claimValue(v *float64, kind string, mn metricName) string {
	if v == nil {
		return "null"
	}
	if kind == verdict.KindExact || math.IsNaN(*v) || math.IsInf(*v, 0) {
		return formatFloat(*v)
	}
	s := Decimal(replay.Float(*v), mn.Scale, mn.Places)
	if mn.Unit != "" {
		s += " " + mn.Unit
	}
	return s
}

// ratioText is "0.987 [0.951, 1.021]" (three decimals), "1.020 (no
// interval)" when the repeats allow none, or "-".
func ratioText(c verdict.ClaimVerdict) string {
	if c.Ratio == nil {
		return "-"
	}
	f := func(x float64) string { return strconv.FormatFloat(x, 'f', 3, 64) }
	if c.Lo == nil || c.Hi == nil {
		return f(*c.Ratio) + " (no interval)"
	}
	return f(*c.Ratio) + " [" + f(*c.Lo) + ", " + f(*c.Hi) + "]"
}

func reproduceText(out io.Writer, r *verdict.Report) error {
	m := newReproduceModel(r)
	var b strings.Builder
	fmt.Fprintf(&b, "original      %s\n              run manifest %s\n              %s\n", m.Original, m.RunManifest, m.SignedBy)
	fmt.Fprintf(&b, "reproduction  %s\n              manifest.json %s\n", m.Reproduction, m.ReproManifest)
	fmt.Fprintf(&b, "repeats       %s\nmethod        %s\n\n", m.Repeats, m.Method)
	textTable(&b, m.Claims, "")
	writeListText(&b, "comparability limits (original vs reproduction)", m.Limits, "none: the guard found every field the same")
	writeListText(&b, "notes", m.Notes, "")
	writeListText(&b, withheldTitle, m.Withheld, "")
	fmt.Fprintf(&b, "\n%s (%s)%s\n", m.Overall, m.Tally, withheldSuffix(m.Withheld))
	_, err := io.WriteString(out, b.String())
	return err
}

// withheldTitle heads the reasons the overall verdict cannot be
// REPRODUCED (verdict.Overall's rule).
const withheldTitle = "the overall verdict cannot be REPRODUCED, whatever the claims' verdicts"

// withheldSuffix ends the overall line with the reasons it is withheld.
func withheldSuffix(w []string) string {
	if len(w) == 0 {
		return ""
	}
	return ": " + strings.Join(w, "; ")
}

// writeListText writes a titled list; empty, the none line (or nothing).
func writeListText(b *strings.Builder, title string, items []string, none string) {
	if len(items) == 0 && none == "" {
		return
	}
	fmt.Fprintf(b, "\n%s:\n", title)
	if len(items) == 0 {
		fmt.Fprintf(b, "  %s\n", none)
	}
	for _, s := range items {
		fmt.Fprintf(b, "  %s\n", s)
	}
}

func reproduceMarkdown(out io.Writer, r *verdict.Report) error {
	m := newReproduceModel(r)
	var b strings.Builder
	fmt.Fprintf(&b, "# benchseal reproduce: %s\n\n", mdEscape(m.Overall))
	fmt.Fprintf(&b, "- original: `%s`, run manifest `%s`, %s\n", mdEscape(m.Original), m.RunManifest, mdEscape(m.SignedBy))
	fmt.Fprintf(&b, "- reproduction: `%s`, manifest.json `%s`\n", mdEscape(m.Reproduction), m.ReproManifest)
	fmt.Fprintf(&b, "- repeats: %s\n- method: %s\n- verdicts: %s\n", m.Repeats, mdEscape(m.Method), m.Tally)
	for _, w := range m.Withheld {
		b.WriteString("- not REPRODUCED overall: " + mdEscape(w) + "\n")
	}
	b.WriteString("\n")
	mdTable(&b, m.Claims)
	b.WriteString("\n## Comparability limits\n\n")
	if len(m.Limits) == 0 {
		b.WriteString("None: the guard found every field the same.\n")
	}
	for _, l := range m.Limits {
		b.WriteString("- " + mdEscape(l) + "\n")
	}
	if len(m.Notes) > 0 {
		b.WriteString("\n## Notes\n\n")
		for _, n := range m.Notes {
			b.WriteString("- " + mdEscape(n) + "\n")
		}
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// reproduceTemplate shares the replay page's style sheet and tables.
var reproduceTemplate = template.Must(template.Must(htmlTemplate.Clone()).New("reproduce").Funcs(pageFuncs).Parse(reproduceSource))

const reproduceSource = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>benchseal reproduce: {{.Overall}}</title>
<style>` + htmlCSS + `</style>
</head>
<body>
<main>
<h1>benchseal reproduce: {{.Overall}}</h1>
<dl class="meta">
<dt>original</dt><dd><code>{{.Original}}</code>, run manifest <code>{{.RunManifest}}</code>, {{.SignedBy}}</dd>
<dt>reproduction</dt><dd><code>{{.Reproduction}}</code>, manifest.json <code>{{.ReproManifest}}</code></dd>
<dt>repeats</dt><dd>{{.Repeats}}</dd>
<dt>method</dt><dd>{{.Method}}</dd>
<dt>verdicts</dt><dd>{{.Tally}}</dd>
{{- range .Withheld}}
<dt>not REPRODUCED overall</dt><dd>{{.}}</dd>
{{- end}}
</dl>
<h2>Claims</h2>
{{template "table" .Claims}}
<h2>Comparability limits</h2>
{{- if .Limits}}
<ul>{{range .Limits}}<li>{{.}}</li>{{end}}</ul>
{{- else}}
<p>None: the guard found every field the same.</p>
{{- end}}
{{- with .Notes}}
<h2>Notes</h2>
<ul>{{range .}}<li>{{.}}</li>{{end}}</ul>
{{- end}}
</main>
</body>
</html>
`
