package report

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/benchseal/benchseal/compare"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

// signedInputs are the small and the slower run with a declared price in
// EUR, as verified bundles: their cards carry a key fingerprint and a
// bundle digest, 71-character tokens with no space.
func signedInputs(t *testing.T) []*compare.Input {
	t.Helper()
	var ins []*compare.Input
	for i, run := range []*memRun{smallRun(), slowerRun()} {
		run.m.Cost = &schema.Cost{Currency: "EUR", PricePerHour: []string{"12.5", "9.75"}[i]}
		res, err := replay.Replay(context.Background(), run, replay.Options{})
		if err != nil {
			t.Fatal(err)
		}
		ins = append(ins, &compare.Input{Name: []string{"base.oci.tar", "slower.oci.tar"}[i], Manifest: run.m, Result: res,
			Verification: compare.Verification{Status: compare.Verified,
				Keys:         []string{"sha256:fd507dfb1badea9ff266cabd76b9e24af772ffd23462d33fbb460ca9f9265a6c"},
				BundleDigest: "sha256:c401fd110cff8b91b986b025695c78abd6f2db931226fe6b0a6e3dda55e434f" + string(rune('0'+i))}})
	}
	return ins
}

func decidePage(t *testing.T, ins []*compare.Input, objective string) string {
	t.Helper()
	d, err := compare.Decide(ins, compare.DecideOptions{Objective: objective})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := DecideHTML(&b, d); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// The decide page leads with the objective: its row first in the decision
// table (marked), its chart first (a cost chart for the cost objective,
// SLO attainment with each capacity for the capacity one), and the cost
// names its currency and that the price is declared.
func TestDecidePageLeadsWithTheObjective(t *testing.T) {
	ins := signedInputs(t)
	for _, c := range []struct {
		objective, row, chart string
		also                  []string
	}{
		{compare.MaxGoodput, "Goodput (req/s) median [95% CI]: the objective", "Goodput by offered load", nil},
		{compare.MinCostPerGoodToken, "Cost per 1M good tokens (EUR, at the declared price): the objective", "Cost per 1M good tokens by offered load",
			[]string{"cost (EUR per 1M good tokens)", "publisher&#39;s declared one (cost.price_per_hour), not measured", "EUR per 1M good tokens at the declared price</title>"}},
		{compare.MaxCapacity, "per-repeat capacity at 90.00 % attainment (offered req/s): the objective", "SLO attainment by offered load", []string{"Per-repeat capacity at the target (in each repeat, "}},
	} {
		page := decidePage(t, ins, c.objective)
		first := regexp.MustCompile(`<tbody>\n<tr class="objective"><th scope="row">([^<]*)</th>`).FindStringSubmatch(page)
		if first == nil || html.UnescapeString(first[1]) != c.row {
			t.Errorf("%s: first decision row %q, want %q", c.objective, first, c.row)
		}
		if chart := regexp.MustCompile(`<figcaption>([^<]*)</figcaption>`).FindStringSubmatch(page); chart == nil || chart[1] != c.chart {
			t.Errorf("%s: first chart %q, want %q", c.objective, chart, c.chart)
		}
		// Every field of the table is in the page: cost and capacity too.
		for _, want := range append(c.also, "Cost per 1M good tokens (EUR, at the declared price)", "per-repeat capacity at 90.00 % attainment", "<th>A base.oci.tar</th>") {
			if !strings.Contains(page, want) {
				t.Errorf("%s: page lacks %q", c.objective, want)
			}
		}
	}
}

// Every tooltip of a chart point on the compare, decide and replay pages
// carries the unit of its value (req/s, ms, %, a currency).
func TestChartTooltipsCarryUnits(t *testing.T) {
	ins := signedInputs(t)
	cr, err := compare.Compare(ins, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var cmp, rep bytes.Buffer
	if err := CompareHTML(&cmp, cr); err != nil {
		t.Fatal(err)
	}
	if err := HTMLRun(&rep, ins[0].Result, ins[0]); err != nil {
		t.Fatal(err)
	}
	pages := map[string]string{"compare": cmp.String(), "replay": rep.String()}
	for _, o := range []string{compare.MaxGoodput, compare.MinCostPerGoodToken, compare.MaxCapacity} {
		pages["decide "+o] = decidePage(t, ins, o)
	}
	tip := regexp.MustCompile(`<circle class="(?:med|rep)"[^>]*><title>([^<]*)</title>`)
	// the unit follows the last number, before any "(median of N repeats)"
	unit := regexp.MustCompile(`[0-9] (req/s|ms|% of declared|EUR per 1M good tokens at the declared price)( \([^)]*\))?$`)
	for name, page := range pages {
		tips := tip.FindAllStringSubmatch(page, -1)
		if len(tips) == 0 {
			t.Errorf("%s: no tooltips", name)
		}
		for _, m := range tips {
			if s := html.UnescapeString(m[1]); !strings.Contains(s, " null (") && !unit.MatchString(s) {
				t.Errorf("%s: tooltip %q has no unit", name, s)
			}
		}
	}
}

// wrapSelectors are the selectors of the style sheet's rules (outside
// @media) that let text break anywhere.
func wrapSelectors(t *testing.T) [][]string {
	t.Helper()
	var out [][]string
	css := htmlCSS
	if i := strings.Index(css, "@media"); i >= 0 {
		css = css[:i]
	}
	for _, rule := range strings.Split(css, "}") {
		sel, body, ok := strings.Cut(rule, "{")
		if !ok || !strings.Contains(body, "overflow-wrap:anywhere") {
			continue
		}
		for _, s := range strings.Split(sel, ",") {
			out = append(out, strings.Fields(s))
		}
	}
	if len(out) == 0 {
		t.Fatal("no rule in the style sheet wraps long words")
	}
	return out
}

// matches reports whether n matches one compound selector: tag, .class,
// tag.class or tag[attr=value] (all the style sheet uses).
func matches(n *html.Node, compound string) bool {
	if n.Type != html.ElementNode {
		return false
	}
	attr := map[string]string{}
	for _, a := range n.Attr {
		attr[a.Key] = a.Val
	}
	if i := strings.Index(compound, "["); i >= 0 {
		k, v, _ := strings.Cut(strings.Trim(compound[i:], "[]"), "=")
		if attr[k] != v {
			return false
		}
		compound = compound[:i]
	}
	tag, classes, _ := strings.Cut(compound, ".")
	if tag != "" && n.Data != tag {
		return false
	}
	for _, c := range strings.Split(classes, ".") {
		if c != "" && !strings.Contains(" "+attr["class"]+" ", " "+c+" ") {
			return false
		}
	}
	return true
}

// wraps reports whether a rule of sels applies to n (descendant
// selectors matched right to left through n's ancestors).
func wraps(n *html.Node, sels [][]string) bool {
	for _, sel := range sels {
		if !matches(n, sel[len(sel)-1]) {
			continue
		}
		i := len(sel) - 2
		for a := n.Parent; a != nil && i >= 0; a = a.Parent {
			if matches(a, sel[i]) {
				i--
			}
		}
		if i < 0 {
			return true
		}
	}
	return false
}

// Every word of 24 or more characters laid out on a page (digests, key
// fingerprints, run ids, paths) sits inside an element a rule lets break
// anywhere, so no card or cell is pushed wider than its column by it.
// make screenshot-check measures the same pages' layout in Chromium; this
// test keeps the static property where there is no browser.
func TestLongTokensCanWrap(t *testing.T) {
	sels := wrapSelectors(t)
	ins := signedInputs(t)
	cr, err := compare.Compare(ins, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var cmp, rep bytes.Buffer
	if err := CompareHTML(&cmp, cr); err != nil {
		t.Fatal(err)
	}
	if err := HTMLRun(&rep, ins[0].Result, ins[0]); err != nil {
		t.Fatal(err)
	}
	pages := map[string]string{"compare": cmp.String(), "replay": rep.String()}
	for _, o := range []string{compare.MaxGoodput, compare.MinCostPerGoodToken, compare.MaxCapacity} {
		pages["decide "+o] = decidePage(t, ins, o)
	}
	long := regexp.MustCompile(`\S{24,}`)
	for name, page := range pages {
		doc, err := html.Parse(strings.NewReader(page))
		if err != nil {
			t.Fatal(err)
		}
		seen := 0
		var walk func(n *html.Node)
		walk = func(n *html.Node) {
			if n.Type == html.ElementNode && (n.Data == "head" || n.Data == "svg") {
				return // not laid out as text, or a chart (checked by size)
			}
			if n.Type == html.TextNode {
				for _, w := range long.FindAllString(n.Data, -1) {
					seen++
					ok := false
					for a := n.Parent; a != nil && !ok; a = a.Parent {
						ok = wraps(a, sels)
					}
					if !ok {
						t.Errorf("%s: %q in <%s> has no rule to wrap it", name, w, n.Parent.Data)
					}
				}
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c)
			}
		}
		walk(doc)
		if seen == 0 {
			t.Errorf("%s: no long word to check (the fixture lost its digests?)", name)
		}
	}
}

// The selector matcher of TestLongTokensCanWrap matches what it should
// and nothing else.
func TestWrapSelectorMatcher(t *testing.T) {
	doc, err := html.Parse(strings.NewReader(`<table class="fields"><tr><th scope="row"><code>x</code></th><td class="num text">y</td></tr></table>`))
	if err != nil {
		t.Fatal(err)
	}
	var code, td *html.Node
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		switch n.Data {
		case "code":
			code = n
		case "td":
			td = n
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	for _, c := range []struct {
		n    *html.Node
		sel  string
		want bool
	}{
		{code, "th code", true}, {code, "table.fields th[scope=row] code", true}, {code, "td code", false}, {code, "table.values code", false},
		{code, "th[scope=col] code", false}, {td, "td.text", true}, {td, ".num", true}, {td, "td.unit", false}, {td, "th", false},
	} {
		if got := wraps(c.n, [][]string{strings.Fields(c.sel)}); got != c.want {
			t.Errorf("%q on <%s>: %v, want %v", c.sel, c.n.Data, got, c.want)
		}
	}
}

// TestDecideCapacityCaptionSaysWhatItShows: the max-capacity caption
// described replay's rule (every point's median attainment) beside the
// per-repeat capacities decide ranks, so "≥ 60 in 2 of 3 repeats, 20 in 1
// of 3" read as a second value of replay's "≥ 60". It now names the
// per-repeat rule and states replay's capacity of each input as replay
// computes it, under that name.
func TestDecideCapacityCaptionSaysWhatItShows(t *testing.T) {
	ins := signedInputs(t)
	page := html.UnescapeString(decidePage(t, ins, compare.MaxCapacity))
	if strings.Contains(page, "every point's median attainment") {
		t.Errorf("caption still describes the median-attainment rule for the per-repeat capacities")
	}
	for i, in := range ins {
		if in.Result.Capacity == nil {
			t.Fatalf("input %d has no rate-sweep capacity: the fixture cannot check the caption", i)
		}
		want := inputLabel(i) + " " + capacityText(in.Result.Capacity)
		if !strings.Contains(page, "Capacity of the median attainment curve, as replay prints it: ") || !strings.Contains(page, want) {
			t.Errorf("caption lacks replay's capacity %q", want)
		}
		var b bytes.Buffer
		if err := Brief(&b, in.Result); err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(b.String(), "): "+capacityText(in.Result.Capacity)+" (max passing rate") {
			t.Errorf("replay's brief report does not print %q as the capacity", capacityText(in.Result.Capacity))
		}
	}
}

// TestDecideDifferenceIsLabelledHodgesLehmann: decide printed "difference
// 38.494 req/s" beside two medians whose difference was 41.736: the
// number is the Hodges–Lehmann estimate (the median of the pairwise
// differences), and text, Markdown and HTML now say so.
func TestDecideDifferenceIsLabelledHodgesLehmann(t *testing.T) {
	ins := signedInputs(t)
	d, err := compare.Decide(ins, compare.DecideOptions{Objective: compare.MaxGoodput})
	if err != nil {
		t.Fatal(err)
	}
	if d.Shift == nil {
		t.Fatal("the fixture's decision has no difference: it cannot check the label")
	}
	for name, render := range map[string]func(*bytes.Buffer) error{
		"text":     func(b *bytes.Buffer) error { return DecideText(b, d) },
		"markdown": func(b *bytes.Buffer) error { return DecideMarkdown(b, d) },
		"html":     func(b *bytes.Buffer) error { return DecideHTML(b, d) },
	} {
		var b bytes.Buffer
		if err := render(&b); err != nil {
			t.Fatal(err)
		}
		out := html.UnescapeString(b.String())
		if !strings.Contains(out, "Hodges–Lehmann difference ") || regexp.MustCompile(`; difference [-+0-9]`).MatchString(out) {
			t.Errorf("%s: the difference is not labelled Hodges–Lehmann", name)
		}
	}
}
