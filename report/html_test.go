package report

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

// renamePoint renames a point in the manifest and the records of run.
func renamePoint(run *memRun, from, to string) {
	for i := range run.m.Load.Points {
		if run.m.Load.Points[i].Name == from {
			run.m.Load.Points[i].Name = to
		}
	}
	for _, r := range run.recs {
		if r.Point == from {
			r.Point = to
		}
	}
}

func renderHTML(t *testing.T, run *memRun, o replay.Options) string {
	t.Helper()
	res, err := replay.Replay(context.Background(), run, o)
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := HTML(&b, res); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

func TestHTMLEscapesRunStrings(t *testing.T) {
	const script = `<script>alert(1)</script>`
	// Each name tries to break out of a different context: element text,
	// an SVG <title>, an attribute, the SVG element itself.
	names := []string{script, `</title></text></svg><img src=x onerror=alert(2)>`, `" onmouseover="alert(3)`}
	run := smallRun()
	renamePoint(run, "r1", names[0])
	renamePoint(run, "r2", names[1])
	run.m.Cost = &schema.Cost{Currency: names[2], PricePerHour: "36"}
	res, err := replay.Replay(context.Background(), run, replay.Options{Sweep: &replay.SweepSpec{Metric: "tpot", FromNS: 10e6, ToNS: 60e6, Steps: 3}})
	if err != nil {
		t.Fatal(err)
	}
	res.Notes = append(res.Notes, script)
	var b bytes.Buffer
	if err := HTML(&b, res); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, bad := range []string{"<script", "<img", `" onmouseover="`, "</svg><"} {
		if strings.Contains(out, bad) {
			t.Errorf("output contains %q: a run string was not escaped", bad)
		}
	}
	// The point name appears as text: in the summary heading, the per-point
	// heading, the chart ticks and the tooltips.
	if n := strings.Count(out, "&lt;script&gt;alert(1)&lt;/script&gt;"); n < 5 {
		t.Errorf("escaped point name appears %d times, want it in headings, ticks and tooltips", n)
	}
	checkWellFormed(t, out)
}

func TestHTMLIsWellFormedAndSelfContained(t *testing.T) {
	long := smallRun()
	renamePoint(long, "r1", "a-rather-long-load-point-name-1")
	renamePoint(long, "r2", "a-rather-long-load-point-name-2")
	many := smallRun()
	for i := range 8 {
		name := "point-number-" + string(rune('a'+i))
		many.m.Load.Points = append(many.m.Load.Points, schema.Point{Name: name, Rate: float64(3 + i)})
		for _, r := range many.recs {
			if r.Point == "r1" {
				c := *r
				c.Point = name
				many.recs = append(many.recs, &c)
			}
		}
	}
	nonStreaming := smallRun()
	nonStreaming.m.Client.Boundary = schema.BoundaryNonStreaming
	noSLO := smallRun()
	noSLO.m.SLO = schema.SLO{}
	for _, c := range []struct {
		name string
		run  *memRun
		o    replay.Options
		want []string
	}{
		{"default", smallRun(), replay.Options{}, []string{"Goodput and request throughput by load point", "TTFT p50 and p99", "E2E latency p50 and p99"}},
		{"sweep", smallRun(), replay.Options{Sweep: &replay.SweepSpec{Metric: "ttft", FromNS: 50e6, ToNS: 250e6, Steps: 5}}, []string{"Goodput by ttft limit", "SLO 200.000 ms"}},
		{"one-step sweep", smallRun(), replay.Options{Sweep: &replay.SweepSpec{Metric: "e2e", FromNS: 0, ToNS: 0, Steps: 1}}, []string{"Goodput by e2e limit"}},
		{"peer floats", smallRun(), replay.Options{Definitions: "vllm"}, []string{"definitions</dt><dd>vllm"}},
		{"long names are cut", long, replay.Options{}, []string{"a-rather-long…</text>", "<title>a-rather-long-load-point-name-1</title>"}},
		{"many points rotate", many, replay.Options{}, []string{"rotate(-35)", "point-number-h"}},
		{"non-streaming", nonStreaming, replay.Options{}, []string{"no defined ttft"}},
		{"no slo", noSLO, replay.Options{}, []string{"Goodput is undefined: no SLO is set."}},
	} {
		t.Run(c.name, func(t *testing.T) {
			out := renderHTML(t, c.run, c.o)
			checkWellFormed(t, out)
			checkSelfContained(t, out)
			for _, w := range c.want {
				if !strings.Contains(out, w) {
					t.Errorf("output lacks %q", w)
				}
			}
			if again := renderHTML(t, c.run, c.o); again != out {
				t.Error("two renderings of the same run differ")
			}
		})
	}
}

func TestHTMLShowsMeaningsNextToTPOTAndITL(t *testing.T) {
	out := renderHTML(t, smallRun(), replay.Options{})
	res, _ := replay.Replay(context.Background(), smallRun(), replay.Options{})
	// header, each summary table, each point's distribution table
	want := 1 + len(res.Summary) + len(res.Results)
	for _, k := range []string{"tpot_ns", "itl_ns"} {
		m := html.EscapeString(Meanings[k])
		if n := strings.Count(out, m); n != want {
			t.Errorf("%s meaning appears %d times, want %d", k, n, want)
		}
	}
}

// voidElements never have an end tag.
var voidElements = map[string]bool{"meta": true, "br": true, "hr": true, "img": true, "input": true, "link": true, "col": true, "wbr": true}

// checkWellFormed checks that every element of page is closed in order
// (the HTML tokenizer), that the parse tree has its SVG charts in the SVG
// namespace, and that every <svg> is well-formed XML on its own.
func checkWellFormed(t *testing.T, page string) {
	t.Helper()
	if !strings.HasPrefix(page, "<!DOCTYPE html>\n") {
		t.Error("page does not start with <!DOCTYPE html>")
	}
	z := html.NewTokenizer(strings.NewReader(page))
	var stack []string
	svgs := 0
	for done := false; !done; {
		switch z.Next() {
		case html.ErrorToken:
			if !errors.Is(z.Err(), io.EOF) {
				t.Fatalf("tokenize: %v", z.Err())
			}
			done = true
		case html.StartTagToken:
			name, _ := z.TagName()
			if string(name) == "svg" {
				svgs++
			}
			if !voidElements[string(name)] {
				stack = append(stack, string(name))
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			if len(stack) == 0 || stack[len(stack)-1] != string(name) {
				t.Fatalf("</%s> closes %v", name, stack)
			}
			stack = stack[:len(stack)-1]
		}
	}
	if len(stack) > 0 {
		t.Fatalf("unclosed elements %v", stack)
	}
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	inSVGNS := 0
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && n.Data == "svg" && n.Namespace == "svg" {
			inSVGNS++
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if inSVGNS != svgs {
		t.Errorf("%d <svg> tags but %d svg elements in the parse tree", svgs, inSVGNS)
	}
	for rest := page; ; {
		i := strings.Index(rest, "<svg")
		if i < 0 {
			break
		}
		j := strings.Index(rest[i:], "</svg>")
		if j < 0 {
			t.Fatal("<svg> without </svg>")
		}
		part := rest[i : i+j+len("</svg>")]
		d := xml.NewDecoder(strings.NewReader(part))
		for {
			_, err := d.Token()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				t.Fatalf("svg is not well-formed XML: %v\n%s", err, part)
			}
		}
		rest = rest[i+j:]
	}
}

// checkSelfContained checks that the page loads nothing and runs nothing.
func checkSelfContained(t *testing.T, page string) {
	t.Helper()
	for _, bad := range []string{"<script", "<link", "<img", "<iframe", "<object", "<embed", " src=", " href=", "url(", "@import", "http://", "https://"} {
		if strings.Contains(page, bad) {
			t.Errorf("page contains %q", bad)
		}
	}
}
