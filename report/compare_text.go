package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/benchseal/benchseal/compare"
	"github.com/benchseal/benchseal/energy"
	"github.com/benchseal/benchseal/schema"
)

// table is a rendered-format-neutral table: text, Markdown and HTML
// draw it.
type table struct {
	Title string
	Head  []string
	Rows  [][]string
	// Num marks right-aligned (numeric) columns.
	Num []bool
}

// footnotes numbers repeated warnings, as benchstat does.
type footnotes struct {
	list []string
	idx  map[string]int
}

func (f *footnotes) mark(ws []string) string {
	if f.idx == nil {
		f.idx = map[string]int{}
	}
	var marks []string
	for _, w := range ws {
		i, ok := f.idx[w]
		if !ok {
			f.list = append(f.list, w)
			i = len(f.list)
			f.idx[w] = i
		}
		marks = append(marks, "("+strconv.Itoa(i)+")")
	}
	return strings.Join(marks, "")
}

// compareModel is a comparison laid out for people.
type compareModel struct {
	Inputs     []identityView
	References []referenceView
	Verdict    string
	Guard      table
	Refusals   []string
	Tables     []table
	Footnotes  []string
	Summary    string
	// Verdicts close the report: per input compared with A, on how many
	// metrics it tested better or worse.
	Verdicts  []string
	Unmatched table
	Notes     []string
	// Meanings say what tpot and itl mean in the tables.
	Meanings []string
}

func guardTable(g *compare.Guard, ins []*compare.Input) table {
	t := table{Head: []string{"check", "status", "required"}}
	for i := range ins {
		t.Head = append(t.Head, inputLabel(i))
	}
	for _, c := range g.Checks {
		st := c.Status
		if c.Allowed {
			st += " (allowed)"
		}
		req := ""
		if c.Required {
			req = "yes"
		}
		row := []string{c.Name, st, req}
		for _, v := range c.Values {
			if c.Name == compare.CheckWorkload && len(v) > 16 {
				v = v[:16] + "…" // the full hash is in the JSON
			}
			row = append(row, orDash(v))
		}
		t.Rows = append(t.Rows, row)
	}
	return t
}

func orDash(s string) string {
	if s == "" {
		return "not stated"
	}
	return s
}

func newCompareModel(r *compare.Result) *compareModel {
	m := &compareModel{Verdict: guardVerdict(r.Guard, false), Refusals: r.Guard.Refusals, Notes: r.Notes}
	defs := "benchseal"
	if len(r.Inputs) > 0 && r.Inputs[0].Result != nil {
		defs = r.Inputs[0].Result.Definitions
	}
	m.Meanings = []string{MeaningsFor(defs)[schema.MetricTPOT], MeaningsFor(defs)[schema.MetricITL]}
	for i, in := range r.Inputs {
		m.Inputs = append(m.Inputs, newIdentity(inputLabel(i), in))
	}
	for _, in := range r.References {
		m.References = append(m.References, newReference(in))
	}
	m.Guard = guardTable(r.Guard, r.Inputs)
	cur := currencyOf(r.Inputs)
	var fn footnotes
	holm := r.Correction == compare.CorrectionHolm
	var cur_ *table
	key := ""
	for _, c := range r.Comparisons {
		k := c.Load + "\x00" + strconv.Itoa(c.Other)
		if k != key {
			key = k
			m.Tables = append(m.Tables, table{
				Title: c.Load + ": " + inputLabel(c.Other) + " against " + inputLabel(0) + " (points " + c.Base.Point + " / " + c.Patch.Point + ")",
				Head:  []string{"metric", inputLabel(0) + " median [95% CI]", inputLabel(c.Other) + " median [95% CI]", "change", "p", "note"},
				Num:   []bool{false, true, true, true, false, false},
			})
			cur_ = &m.Tables[len(m.Tables)-1]
		}
		mn := nameOf(c.Metric.Path, cur)
		var warn []string
		warn = append(warn, c.Warnings...)
		warn = append(warn, c.Base.Summary.Warnings...)
		warn = append(warn, c.Patch.Summary.Warnings...)
		warn = append(warn, readingNotes(c)...)
		note := c.Note
		if c.Significant {
			if c.WithinCounterTolerance {
				note = fmt.Sprintf("within the gauges' ±%d %%", energy.CounterTolerancePercent)
			} else if c.Better {
				note = "better"
			} else {
				note = "worse"
			}
		}
		cur_.Rows = append(cur_.Rows, []string{mn.Header(), sideText(c.Base, mn), sideText(c.Patch, mn), changeText(c) + fn.mark(dedupe(warn)), pText(c, holm), note})
	}
	m.Footnotes = fn.list
	corr := "no correction for multiple comparisons (--correction holm applies Holm–Bonferroni)"
	if holm {
		corr = "Holm–Bonferroni adjusted over all of them"
	}
	if r.Guard.Verdict != compare.Refused && len(r.Inputs) >= 2 {
		m.Summary = fmt.Sprintf("%d comparisons tested (Mann–Whitney U, two-sided, repeats as samples) at α = %v; %s. “~” means not significant (p > α).", r.Tests, r.Alpha, corr)
	}
	if r.Guard.Verdict != compare.Refused {
		m.Verdicts = compareVerdicts(r)
	}
	m.Unmatched = table{Head: []string{"input", "point", "offered load", "why unmatched"}}
	label := map[string]string{}
	for i, in := range r.Inputs {
		label[in.Name] = inputLabel(i)
	}
	for _, u := range r.Unmatched {
		m.Unmatched.Rows = append(m.Unmatched.Rows, []string{label[u.Input], u.Point, orDash(u.Load), u.Reason})
	}
	return m
}

// readingNotes are the footnotes a comparison's cells need to be read
// right: a relative change that is undefined, and an interval bounded on
// one side only.
func readingNotes(c compare.Comparison) []string {
	var out []string
	if c.Tested && c.Change.IsNull() {
		if b := c.Base.Summary.Median.Rat(); b != nil && b.Sign() == 0 {
			out = append(out, "? : the relative change is undefined: "+inputLabel(0)+"'s median is 0")
		} else {
			out = append(out, "? : the relative change is undefined: a median is undefined")
		}
	}
	for _, s := range []compare.Side{c.Base, c.Patch} {
		if s.Summary.N > 0 && s.Summary.CILow.IsNull() != s.Summary.CIHigh.IsNull() {
			out = append(out, "(at most x; no lower bound from N repeats): an interval bounded on one side only: at 95 % the median is ≤ x (≥ x for \"at least\"); N repeats bound no other side (a distribution-free interval needs 6 for both at 95 %)")
			break
		}
	}
	return out
}

// compareVerdicts is the closing line per input compared with A: on how
// many of the tested metrics it is significantly better or worse (p ≤ α,
// after the correction when one is asked for), and how many showed no
// significant difference or could not be tested.
func compareVerdicts(r *compare.Result) []string {
	type tally struct{ better, worse, same, untested int }
	var order []int
	counts := map[int]*tally{}
	for _, c := range r.Comparisons {
		t := counts[c.Other]
		if t == nil {
			t = &tally{}
			counts[c.Other] = t
			order = append(order, c.Other)
		}
		switch {
		case !c.Tested:
			t.untested++
		case c.Significant && c.Better:
			t.better++
		case c.Significant && !c.WithinCounterTolerance:
			t.worse++
		default:
			t.same++
		}
	}
	corr := ""
	if r.Correction == compare.CorrectionHolm {
		corr = ", Holm–Bonferroni adjusted"
	}
	var out []string
	for _, i := range order {
		t := counts[i]
		tested := t.better + t.worse + t.same
		lead := inputLabel(i) + " against " + inputLabel(0) + ": "
		switch {
		case t.better > 0 && t.worse == 0:
			lead += inputLabel(i) + " better"
		case t.worse > 0 && t.better == 0:
			lead += inputLabel(i) + " worse"
		case t.better > 0:
			lead += "mixed"
		default:
			lead += "no significant difference"
		}
		s := fmt.Sprintf("%s: better on %d, worse on %d, not significant on %d of %d metric × load tests at p ≤ %v%s", lead, t.better, t.worse, t.same, tested, r.Alpha, corr)
		if t.untested > 0 {
			s += fmt.Sprintf("; %d not tested (undefined on a side: see the note)", t.untested)
		}
		out = append(out, s)
	}
	return out
}

func dedupe(ss []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range ss {
		if !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	return out
}

// textTable writes t with columns padded to their widest cell.
func textTable(b *strings.Builder, t table, indent string) {
	w := make([]int, len(t.Head))
	for i, h := range t.Head {
		w[i] = utf8.RuneCountInString(h)
	}
	for _, r := range t.Rows {
		for i, c := range r {
			if i < len(w) {
				w[i] = max(w[i], utf8.RuneCountInString(c))
			}
		}
	}
	line := func(cells []string) {
		var parts []string
		for i, c := range cells {
			pad := strings.Repeat(" ", w[i]-utf8.RuneCountInString(c))
			if i < len(t.Num) && t.Num[i] {
				parts = append(parts, pad+c)
			} else {
				parts = append(parts, c+pad)
			}
		}
		b.WriteString(indent + strings.TrimRight(strings.Join(parts, "  "), " ") + "\n")
	}
	line(t.Head)
	for _, r := range t.Rows {
		line(r)
	}
}

func writeIdentityText(b *strings.Builder, ins []identityView, refs []referenceView) {
	for _, id := range ins {
		fmt.Fprintf(b, "  %s  %s\n", id.Label, id.Name)
		for _, kv := range id.Fields {
			fmt.Fprintf(b, "       %-13s %s\n", kv.Key, kv.Value)
		}
	}
	for _, r := range refs {
		fmt.Fprintf(b, "  reference  %s (external evidence, not compared)\n", r.Name)
		for _, l := range r.Lines {
			fmt.Fprintf(b, "       %s\n", l)
		}
		if len(r.Results) > 0 {
			fmt.Fprintf(b, "       %s:\n", referenceResultsCaption)
			for _, kv := range r.Results {
				fmt.Fprintf(b, "         %s = %s\n", kv.Key, kv.Value)
			}
		}
	}
}

// referenceResultsCaption heads the results of external evidence.
const referenceResultsCaption = "results as published, UNVERIFIED (external: not measured here, not recomputable from records; never divided per accelerator)"

// unverifiedMark follows every external result.
const unverifiedMark = "[UNVERIFIED, external]"

// guardVerdict is the guard's verdict as printed: the verdict (upper case
// for text), and for compare.SameUnknowns what no input states, so that
// facts unknown on every input are not read as differences.
func guardVerdict(g *compare.Guard, upper bool) string {
	v := g.Verdict
	if upper {
		v = strings.ToUpper(v)
	}
	if g.Verdict != compare.SameUnknowns {
		return v
	}
	on := "both"
	if len(g.Checks) > 0 && len(g.Checks[0].Values) != 2 {
		on = fmt.Sprintf("all %d", len(g.Checks[0].Values))
	}
	return fmt.Sprintf("%s (no stated value differs; unknown on %s: %s)", v, on, strings.Join(g.UnknownOnAll(), ", "))
}

// CompareText writes a comparison as text.
func CompareText(out io.Writer, r *compare.Result) error {
	m := newCompareModel(r)
	var b strings.Builder
	b.WriteString("benchseal compare\n\ninputs\n")
	writeIdentityText(&b, m.Inputs, m.References)
	fmt.Fprintf(&b, "\ncomparability guard: %s\n", guardVerdict(r.Guard, true))
	textTable(&b, m.Guard, "  ")
	for _, s := range m.Refusals {
		fmt.Fprintf(&b, "  REFUSED: %s\n", s)
	}
	for _, t := range m.Tables {
		fmt.Fprintf(&b, "\n%s\n", t.Title)
		textTable(&b, t, "  ")
	}
	for i, f := range m.Footnotes {
		fmt.Fprintf(&b, "(%d) %s\n", i+1, f)
	}
	if len(m.Tables) > 0 {
		fmt.Fprintf(&b, "%s\n", strings.Join(m.Meanings, "\n"))
	}
	if m.Summary != "" {
		fmt.Fprintf(&b, "\n%s\n", m.Summary)
	}
	if len(m.Unmatched.Rows) > 0 {
		b.WriteString("\nunmatched load points\n")
		textTable(&b, m.Unmatched, "  ")
	}
	for _, n := range m.Notes {
		fmt.Fprintf(&b, "note: %s\n", n)
	}
	if len(m.Verdicts) > 0 {
		b.WriteByte('\n')
	}
	for _, v := range m.Verdicts {
		fmt.Fprintf(&b, "VERDICT: %s\n", v)
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// mdEscaper makes text inert in GitHub-flavoured Markdown: no table cell
// (|), emphasis (* _ ~), code (`), link or image ([ ]), raw HTML or
// entity (< > &), heading (#), math ($) or line break; the backslash
// first, so an escape in the text cannot cancel one added here. The
// CommonMark spec lets any ASCII punctuation be backslash-escaped
// (https://spec.commonmark.org/0.31.2/#backslash-escapes).
var mdEscaper = strings.NewReplacer(`\`, `\\`, "|", `\|`, "\n", " ", "\r", " ", "*", `\*`, "_", `\_`, "~", `\~`, "<", "&lt;", ">", "&gt;", "&", "&amp;",
	"`", "\\`", "[", `\[`, "]", `\]`, "#", `\#`, "$", `\$`)

// mdEscape escapes text for Markdown (mdEscaper): every string a bundle
// supplies goes through it before it reaches a Markdown report.
func mdEscape(s string) string { return mdEscaper.Replace(s) }

func mdTable(b *strings.Builder, t table) {
	b.WriteString("|")
	for _, h := range t.Head {
		b.WriteString(" " + mdEscape(h) + " |")
	}
	b.WriteString("\n|")
	for i := range t.Head {
		if i < len(t.Num) && t.Num[i] {
			b.WriteString("---:|")
		} else {
			b.WriteString("---|")
		}
	}
	b.WriteString("\n")
	for _, r := range t.Rows {
		b.WriteString("|")
		for _, c := range r {
			b.WriteString(" " + mdEscape(c) + " |")
		}
		b.WriteString("\n")
	}
}

func writeIdentityMarkdown(b *strings.Builder, ins []identityView, refs []referenceView) {
	for _, id := range ins {
		fmt.Fprintf(b, "- **%s** %s\n", id.Label, mdEscape(id.Name))
		for _, kv := range id.Fields {
			fmt.Fprintf(b, "  - %s: %s\n", kv.Key, mdEscape(kv.Value))
		}
	}
	for _, r := range refs {
		fmt.Fprintf(b, "- reference %s (external evidence, not compared)\n", mdEscape(r.Name))
		for _, l := range r.Lines {
			fmt.Fprintf(b, "  - %s\n", mdEscape(l))
		}
		if len(r.Results) > 0 {
			fmt.Fprintf(b, "  - %s:\n", referenceResultsCaption)
			for _, kv := range r.Results {
				fmt.Fprintf(b, "    - %s = %s\n", mdEscape(kv.Key), mdEscape(kv.Value))
			}
		}
	}
}

// CompareMarkdown writes a comparison as GitHub-flavoured Markdown.
func CompareMarkdown(out io.Writer, r *compare.Result) error {
	m := newCompareModel(r)
	var b strings.Builder
	b.WriteString("# benchseal compare\n\n## Inputs\n\n")
	writeIdentityMarkdown(&b, m.Inputs, m.References)
	fmt.Fprintf(&b, "\n## Comparability guard: %s\n\n", m.Verdict)
	mdTable(&b, m.Guard)
	for _, s := range m.Refusals {
		fmt.Fprintf(&b, "\n**Refused:** %s\n", mdEscape(s))
	}
	for _, t := range m.Tables {
		fmt.Fprintf(&b, "\n## %s\n\n", mdEscape(t.Title))
		mdTable(&b, t)
	}
	if len(m.Footnotes) > 0 {
		b.WriteString("\n")
		for i, f := range m.Footnotes {
			fmt.Fprintf(&b, "(%d) %s  \n", i+1, mdEscape(f))
		}
	}
	if m.Summary != "" {
		fmt.Fprintf(&b, "\n%s\n", mdEscape(m.Summary))
	}
	if len(m.Unmatched.Rows) > 0 {
		b.WriteString("\n## Unmatched load points\n\n")
		mdTable(&b, m.Unmatched)
	}
	for _, n := range m.Notes {
		fmt.Fprintf(&b, "\n> %s\n", mdEscape(n))
	}
	for _, v := range m.Verdicts {
		fmt.Fprintf(&b, "\n**Verdict:** %s\n", mdEscape(v))
	}
	_, err := io.WriteString(out, b.String())
	return err
}

// identityView is the run identity of one input, as label/value lines.
type identityView struct {
	Label, Name string
	Synthetic   bool
	Fields      []keyValue
}

type keyValue struct{ Key, Value string }

// referenceView is external evidence: what it is and where to read it.
type referenceView struct {
	Name  string
	Lines []string
	// Results are the published results, verbatim.
	Results []keyValue
}

func newIdentity(label string, in *compare.Input) identityView {
	m := in.Manifest
	id := identityView{Label: label, Name: in.Name, Synthetic: m.Evidence == schema.EvidenceSynthetic}
	add := func(k, v string) { id.Fields = append(id.Fields, keyValue{k, v}) }
	ev := m.Evidence
	if id.Synthetic {
		ev = "SYNTHETIC (a simulator or generated run, not a measurement of hardware)"
	}
	add("run id", m.RunID)
	add("evidence", ev)
	// compare and decide pin keys only (no keyless identity, no
	// reviewer): nothing vouches beyond the signer.
	add("signer's word", schema.SignerStatement(m.Evidence, schema.Vouch{}))
	if m.Incomplete {
		add("INCOMPLETE", m.IncompleteReason)
	}
	model := orUnknown(m, m.Model.Name, "model.name")
	if m.Model.Revision != "" {
		model += " @ " + m.Model.Revision
	} else {
		model += " @ revision " + orUnknown(m, "", "model.revision")
	}
	if m.Model.Precision != "" {
		model += ", " + m.Model.Precision
	}
	add("model", model)
	add("hardware", orUnknown(m, compare.HardwareText(m), "hardware.accelerator"))
	eng := orUnknown(m, strings.TrimSpace(m.Engine.Name+" "+m.Engine.Version), "engine.name")
	if m.Engine.Image != "" {
		eng += ", image " + m.Engine.Image
	} else {
		eng += ", image " + orUnknown(m, "", "engine.image")
	}
	add("engine", eng)
	add("boundary", boundaryLine(m.Client.Boundary))
	slo := compare.SLOText(in.Result.SLO)
	if slo == "" {
		slo = "none"
	}
	add("SLO", slo+" (from "+sloSource(in.Result.SLO.Source)+")")
	if pc, measured := compare.PrefixCache(in); measured {
		add("prefix cache", pc+" (measured: the engine's cached-token reports)")
	} else {
		add("prefix cache", orUnknown(m, pc, "engine.prefix_cache"))
	}
	add("verification", verificationLine(in.Verification))
	for _, w := range in.Verification.Warnings {
		add("warning", w)
	}
	if len(m.Unknown) > 0 {
		add("declared unknown", strings.Join(m.Unknown, ", "))
	}
	return id
}

func sloSource(s string) string {
	switch s {
	case "flag":
		return "--slo"
	case "manifest":
		return "the manifest"
	}
	return s
}

func orUnknown(m *schema.Manifest, v, path string) string {
	if v != "" {
		return v
	}
	if m.Declared(path) {
		return "unknown (declared)"
	}
	return "unknown (not stated)"
}

func newReference(in *compare.Input) referenceView {
	r := referenceView{Name: in.Name}
	for _, e := range in.Manifest.External {
		parts := []string{e.Kind}
		ver := e.Version
		if ver == "" {
			ver = "unknown"
		}
		parts = append(parts, "version "+ver)
		for _, kv := range []keyValue{{"division", e.Division}, {"category", e.Category}, {"status", e.Status}, {"scenario", e.Scenario}, {"submitter", e.Submitter}, {"system", e.System}} {
			if kv.Value != "" {
				parts = append(parts, kv.Key+" "+kv.Value)
			}
		}
		if e.AcceleratorCount > 0 {
			parts = append(parts, "accelerators "+strconv.Itoa(e.AcceleratorCount))
		} else {
			parts = append(parts, "accelerators unknown")
		}
		r.Lines = append(r.Lines, strings.Join(parts, ", "))
		if e.URL != "" {
			r.Lines = append(r.Lines, "link: "+e.URL)
		}
		keys := make([]string, 0, len(e.Results))
		for k := range e.Results {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		// Every published number carries the word UNVERIFIED beside it.
		for _, k := range keys {
			r.Results = append(r.Results, keyValue{k, e.Results[k] + "  " + unverifiedMark})
		}
		r.Lines = append(r.Lines, "results: "+e.UnverifiedLabel())
	}
	// The bundle's signature and integrity verify; its external numbers
	// stay the source's word.
	r.Lines = append(r.Lines, "verification: "+verificationLine(in.Verification)+"; external results UNVERIFIED (not recomputable)")
	return r
}
