package report

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/benchseal/benchseal/compare"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

// slowerRun is smallRun with every response a quarter slower.
func slowerRun() *memRun {
	r := smallRun()
	for _, rec := range r.recs {
		for i := range rec.ChunksNS {
			rec.ChunksNS[i] = rec.ChunksNS[i] * 5 / 4
		}
		rec.EndNS = rec.SentNS + (rec.EndNS-rec.SentNS)*5/4
	}
	return r
}

func compareInputs(t *testing.T) []*compare.Input {
	t.Helper()
	var ins []*compare.Input
	for i, run := range []*memRun{smallRun(), slowerRun()} {
		res, err := replay.Replay(context.Background(), run, replay.Options{Sweep: &replay.SweepSpec{Metric: "ttft", FromNS: 50e6, ToNS: 250e6, Steps: 5}})
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, &compare.Input{Name: []string{"base", "slower"}[i], Manifest: run.m, Result: res, Verification: compare.Verification{Status: compare.RunDirectory}})
	}
	return ins
}

// chartProblems lists, for every chart (figure) of a page, a missing
// axis label, an empty plot, or a missing value table.
func chartProblems(t *testing.T, page string) (n int, problems []string) {
	t.Helper()
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	var walk func(n *html.Node, f func(*html.Node))
	walk = func(n *html.Node, f func(*html.Node)) {
		f(n)
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, f)
		}
	}
	attr := func(n *html.Node, k string) string {
		for _, a := range n.Attr {
			if a.Key == k {
				return a.Val
			}
		}
		return ""
	}
	text := func(n *html.Node) string {
		var b strings.Builder
		walk(n, func(c *html.Node) {
			if c.Type == html.TextNode {
				b.WriteString(c.Data)
			}
		})
		return strings.TrimSpace(b.String())
	}
	walk(doc, func(fig *html.Node) {
		if fig.Type != html.ElementNode || fig.Data != "figure" {
			return
		}
		n++
		title, labels, marks, table, empty := "", 0, 0, false, false
		walk(fig, func(c *html.Node) {
			if c.Type != html.ElementNode {
				return
			}
			switch {
			case c.Data == "figcaption":
				title = text(c)
			case c.Data == "text" && attr(c, "class") == "label" && text(c) != "":
				labels++
			case c.Data == "text" && attr(c, "class") == "empty":
				empty = true
			case c.Data == "path" && strings.HasPrefix(attr(c, "d"), "M"):
				marks++
			case c.Data == "circle":
				marks++
			case c.Data == "table" && strings.Contains(attr(c, "class"), "values"):
				table = true
			}
		})
		switch {
		case labels != 2:
			problems = append(problems, title+": "+string(rune('0'+labels))+" labelled axes, want 2")
		case empty || marks == 0:
			problems = append(problems, title+": empty chart")
		case !table:
			problems = append(problems, title+": no table of values")
		}
	})
	return n, problems
}

// Every chart of every page has both axes labelled, something drawn and
// its values in a table; the checker itself catches each defect.
func TestChartsAreNeverEmptyOrUnlabelled(t *testing.T) {
	ins := compareInputs(t)
	cr, err := compare.Compare(ins, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d, err := compare.Decide(ins, compare.DecideOptions{Objective: compare.MaxCapacity})
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.Replay(context.Background(), smallRun(), replay.Options{Sweep: &replay.SweepSpec{Metric: "ttft", FromNS: 50e6, ToNS: 250e6, Steps: 5}})
	if err != nil {
		t.Fatal(err)
	}
	pages := map[string]func(*bytes.Buffer) error{
		"replay":  func(b *bytes.Buffer) error { return HTMLRun(b, res, ins[0]) },
		"compare": func(b *bytes.Buffer) error { return CompareHTML(b, cr) },
		"decide":  func(b *bytes.Buffer) error { return DecideHTML(b, d) },
	}
	for name, render := range pages {
		var b bytes.Buffer
		if err := render(&b); err != nil {
			t.Fatal(err)
		}
		n, probs := chartProblems(t, b.String())
		if name == "compare" && !strings.Contains(b.String(), "Goodput by ttft limit at rate 1 req/s") {
			t.Error("compare: no SLO sweep chart")
		}
		if n < 4 {
			t.Errorf("%s: %d charts", name, n)
		}
		for _, p := range probs {
			t.Errorf("%s: %s", name, p)
		}
		// The checker finds an unlabelled axis.
		bad := strings.Replace(b.String(), `<text class="label" x=`, `<text class="labelx" x=`, 1)
		if _, probs := chartProblems(t, bad); len(probs) == 0 {
			t.Errorf("%s: a chart without an x-axis label passed", name)
		}
	}
	// A chart with nothing to draw is reported.
	empty := plot{title: "t", xLabel: "x", yLabel: "y", empty: "nothing"}
	empty.numericX(rat(0), rat(1), "")
	var b bytes.Buffer
	if err := htmlTemplate.ExecuteTemplate(&b, "chart", empty.layout()); err != nil {
		t.Fatal(err)
	}
	if _, probs := chartProblems(t, "<html><body>"+b.String()+"</body></html>"); len(probs) != 1 || !strings.Contains(probs[0], "empty") {
		t.Errorf("empty chart: %v", probs)
	}
}

// The page header says what was measured, with unknowns as unknown and
// a synthetic run marked as such.
func TestHTMLHeaderShowsRunIdentity(t *testing.T) {
	ins := compareInputs(t)
	m := ins[0].Manifest
	m.RunID, m.Evidence = "run-42", "synthetic"
	m.Model.Name, m.Model.Revision = "org/model", "rev1"
	m.Hardware.Accelerator = "NVIDIA H200"
	m.Unknown = []string{"hardware.accelerator_count", "engine.image"}
	var b bytes.Buffer
	if err := HTMLRun(&b, ins[0].Result, ins[0]); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{"run-42", "SYNTHETIC", "org/model @ rev1", "unknown count × NVIDIA H200", "image unknown (declared)",
		"hardware.accelerator_count, engine.image", "client-streaming", "from the manifest", "validated, not signed"} {
		if !strings.Contains(page, want) {
			t.Errorf("header lacks %q", want)
		}
	}
	if strings.Contains(page, "0 × NVIDIA") {
		t.Error("unknown accelerator count shown as 0")
	}
}

// Strings from a hostile manifest render as text on the compare and
// decide pages, and in Markdown table cells.
func TestComparePagesEscapeRunStrings(t *testing.T) {
	const script = `<script>alert(1)</script>`
	ins := compareInputs(t)
	ins[0].Name = script
	ins[1].Manifest.RunID = `"><img src=x onerror=alert(2)>`
	ins[1].Manifest.Engine.Name = "a|b\n# heading"
	cr, _ := compare.Compare(ins, compare.Options{Guard: compare.GuardOptions{Allow: []string{compare.CheckWorkload}}})
	d, _ := compare.Decide(ins, compare.DecideOptions{Objective: compare.MaxGoodput})
	var b bytes.Buffer
	CompareHTML(&b, cr)
	DecideHTML(&b, d)
	if strings.Contains(b.String(), "<script") || strings.Contains(b.String(), "<img") {
		t.Error("a run string was not escaped")
	}
	b.Reset()
	CompareMarkdown(&b, cr)
	if strings.Contains(b.String(), "\n# heading") || strings.Contains(b.String(), "<script") {
		t.Error("a run string broke the Markdown")
	}
}

// A point flagged overloaded in any repeat is shaded in the charts, named
// in the shade's tooltip and in the value table's flags column, and every
// output format prints the flag.
func TestFlaggedPointIsShadedAndPrintedInEveryFormat(t *testing.T) {
	res := flaggedSmallRun(t, replay.Options{})
	var b bytes.Buffer
	if err := HTML(&b, res); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	for _, want := range []string{`<rect class="overloaded"`, "<title>r2: overloaded in 1 of 2 repeats</title>", `<th>flags</th></tr>`, `<td class="text">overloaded in 1 of 2 repeats</td></tr>`, "Shaded points are flagged"} {
		if !strings.Contains(page, want) {
			t.Errorf("html lacks %q", want)
		}
	}
	if strings.Count(page, `<rect class="overloaded"`) != 3 {
		t.Errorf("want the point shaded in the 3 load-point charts, got %d", strings.Count(page, `<rect class="overloaded"`))
	}
	if _, problems := chartProblems(t, page); len(problems) > 0 {
		t.Errorf("chart problems: %v", problems)
	}
	for f, want := range map[Format]string{
		FormatText: "YES: arrivals exceeded completions by 9 of 40", FormatMarkdown: "| overloaded | YES: arrivals exceeded",
		FormatJSON: `"overloaded": true`, FormatCSV: "benchseal,r2,1,overload.overloaded,1",
		FormatHTML: "<td>overloaded</td><td colspan=\"2\" class=\"text\">YES: arrivals exceeded",
	} {
		b.Reset()
		if err := Write(&b, f, res); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), want) {
			t.Errorf("%s lacks %q", f, want)
		}
	}
}

// TestSweepTextPrintsTheOverloadFlags: the text sweep (printed alone)
// carries each point's flags as the other formats do.
func TestSweepTextPrintsTheOverloadFlags(t *testing.T) {
	res := flaggedSmallRun(t, replay.Options{Sweep: &replay.SweepSpec{Metric: "ttft", FromNS: 50e6, ToNS: 250e6, Steps: 5}})
	var b bytes.Buffer
	if err := Text(&b, res); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"\nr2/1          YES         no\n", "\nr1/0          undecided   no\n", "point/repeat  overloaded  generator-limited\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("text sweep lacks %q:\n%s", want, b.String())
		}
	}
}

// flaggedSmallRun is the small run replayed with o, its point r2 repeat
// 1 marked overloaded.
func flaggedSmallRun(t *testing.T, o replay.Options) *replay.Result {
	t.Helper()
	res, err := replay.Replay(context.Background(), smallRun(), o)
	if err != nil {
		t.Fatal(err)
	}
	yes := true
	for _, p := range res.Results {
		if p.Point == "r2" && p.Repeat == 1 {
			p.Overload.Overloaded = replay.Flag{Set: &yes, Why: "arrivals exceeded completions by 9 of 40"}
		}
	}
	return res
}

// TestCompareOutputsSayWhatTPOTAndITLMean: compare's text and HTML carry
// the tpot/itl definitions like replay's outputs, and a
// replay under a peer tool's definitions prints that tool's formula.
func TestCompareOutputsSayWhatTPOTAndITLMean(t *testing.T) {
	cr, err := compare.Compare(compareInputs(t), compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var txt, page bytes.Buffer
	if err := CompareText(&txt, cr); err != nil {
		t.Fatal(err)
	}
	if err := CompareHTML(&page, cr); err != nil {
		t.Fatal(err)
	}
	for name, out := range map[string]string{"text": txt.String(), "html": page.String()} {
		for _, want := range []string{Meanings["tpot_ns"], Meanings["itl_ns"]} {
			if !strings.Contains(out, html.EscapeString(want)) && !strings.Contains(out, want) {
				t.Errorf("compare %s lacks %q", name, want)
			}
		}
	}
	for _, defs := range []string{"vllm", "aiperf"} {
		m := MeaningsFor(defs)
		if m["tpot_ns"] == Meanings["tpot_ns"] || !strings.Contains(m["tpot_ns"], "− ttft") && !strings.Contains(m["tpot_ns"], "− TTFT") {
			t.Errorf("%s: tpot meaning %q is not the tool's formula", defs, m["tpot_ns"])
		}
	}
}

// TestChartMarksANullRepeat: a repeat whose goodput is null (here: no
// measured request sent in r1 repeat 1) is a cross on the axis with its
// reason, named in the caption and the value table, never a silently
// missing dot.
func TestChartMarksANullRepeat(t *testing.T) {
	run := smallRun()
	kept := run.recs[:0]
	for _, rec := range run.recs {
		if rec.Point != "r1" || rec.Repeat != 1 || rec.Phase != "measure" {
			kept = append(kept, rec)
		}
	}
	run.recs = kept
	res, err := replay.Replay(context.Background(), run, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := HTML(&b, res); err != nil {
		t.Fatal(err)
	}
	page := b.String()
	want := `<text class="null-rep"`
	if n := strings.Count(page, want); n < 2 {
		t.Errorf("%d null-repeat crosses, want one per throughput series (2)", n)
	}
	for _, s := range []string{"r1 repeat 1: Goodput null (" + replay.ReasonNothingSent + ")", nullRepeatsCaption, "Goodput: null repeats"} {
		if !strings.Contains(page, html.EscapeString(s)) {
			t.Errorf("page lacks %q", s)
		}
	}
	// smallRun itself has no null repeat: no cross, no caption.
	res, _ = replay.Replay(context.Background(), smallRun(), replay.Options{})
	b.Reset()
	if err := HTML(&b, res); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), want) || strings.Contains(b.String(), nullRepeatsCaption) {
		t.Error("a cross or its caption without a null repeat")
	}
	// Without an SLO goodput is null everywhere: not drawn, no crosses.
	run = smallRun()
	run.m.SLO = schema.SLO{}
	res, _ = replay.Replay(context.Background(), run, replay.Options{})
	b.Reset()
	if err := HTML(&b, res); err != nil {
		t.Fatal(err)
	}
	if strings.Contains(b.String(), want) {
		t.Error("crosses for goodput without an SLO")
	}
}
