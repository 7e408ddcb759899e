package report

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/compare"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

// hostile is publisher text that, written raw into Markdown, would add
// raw HTML, a link, an image, math and a forged table cell.
const hostile = `r1 | forged cell | <img src=x onerror=alert(1)> [click](https://evil.example) ![i](x) $x$ \| *b* ` + "`c`"

// hostileResult replays smallRun with the hostile text wherever the
// bundle's own strings reach a report: a point name, the boundary, the
// price's currency and text.
func hostileResult(t *testing.T) *replay.Result {
	t.Helper()
	run := smallRun()
	run.m.Load.Points[0].Name = hostile
	for _, r := range run.recs {
		if r.Point == "r1" {
			r.Point = hostile
		}
	}
	run.m.Client.Boundary = hostile
	run.m.Cost = &schema.Cost{PricePerHour: "2", Currency: hostile}
	res, err := replay.Replay(context.Background(), run, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// unescapedPipes counts the | that are not backslash-escaped.
func unescapedPipes(line string) int {
	n := 0
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++
		case '|':
			n++
		}
	}
	return n
}

// Every string from the bundle reaches Markdown escaped: no raw HTML, no
// link or image, no math, and every table row has its header's cells
// (before, a point name wrote its own table cells and HTML).
func TestMarkdownEscapesEveryBundleString(t *testing.T) {
	res := hostileResult(t)
	var b bytes.Buffer
	if err := Markdown(&b, res); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	checkMarkdownInert(t, md)
	if !strings.Contains(md, `forged cell`) {
		t.Fatalf("the hostile text is not in the report at all:\n%s", md)
	}
}

func checkMarkdownInert(t *testing.T, md string) {
	t.Helper()
	for _, bad := range []*regexp.Regexp{regexp.MustCompile(`<[a-zA-Z/!]`), regexp.MustCompile(`[^\\]\]\(`), regexp.MustCompile(`(^|[^\\])\$x`), regexp.MustCompile("(^|[^\\\\])`c")} {
		if loc := bad.FindStringIndex(md); loc != nil {
			t.Errorf("%s in the Markdown: %q", bad, md[max(0, loc[0]-40):min(len(md), loc[1]+40)])
		}
	}
	head := -1
	for _, line := range strings.Split(md, "\n") {
		if !strings.HasPrefix(line, "|") {
			head = -1
			continue
		}
		n := unescapedPipes(line)
		if head < 0 {
			head = n
			continue
		}
		if n != head {
			t.Errorf("table row with %d cell separators under a header with %d: %q", n, head, line)
		}
	}
}

// The HTML report escapes the same text: no element or link from it.
func TestHTMLEscapesEveryBundleString(t *testing.T) {
	res := hostileResult(t)
	var b bytes.Buffer
	if err := Write(&b, FormatHTML, res); err != nil {
		t.Fatal(err)
	}
	h := b.String()
	for _, bad := range []string{"<img", "href=", "onerror=alert(1)>"} {
		if strings.Contains(h, bad) {
			t.Errorf("%q in the HTML", bad)
		}
	}
	if !strings.Contains(h, "&lt;img src=x") {
		t.Errorf("the hostile text is not shown escaped")
	}
}

// compare and decide escape a hostile input name and manifest field in
// Markdown too (before, a backslash in the text cancelled the escape of
// the | after it and forged a cell).
func TestCompareAndDecideMarkdownEscapeBundleStrings(t *testing.T) {
	ins := compareInputs(t)
	ins[1].Name = hostile
	ins[1].Manifest.Model.Name = hostile
	ins[0].Manifest.Model.Name = hostile
	c, err := compare.Compare(ins, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := CompareMarkdown(&b, c); err != nil {
		t.Fatal(err)
	}
	checkMarkdownInert(t, b.String())
	d, err := compare.Decide(ins, compare.DecideOptions{Objective: compare.MaxGoodput})
	if err != nil {
		t.Fatal(err)
	}
	b.Reset()
	if err := DecideMarkdown(&b, d); err != nil {
		t.Fatal(err)
	}
	checkMarkdownInert(t, b.String())
}
