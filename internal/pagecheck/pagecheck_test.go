package pagecheck

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// chromium returns the browser to check with: BENCHSEAL_CHROMIUM, else
// chromium on PATH. Without one the test is skipped, unless
// BENCHSEAL_PAGECHECK is set (make screenshot-check sets it after
// installing Debian's chromium), when it fails.
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("BENCHSEAL_CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("BENCHSEAL_PAGECHECK") != "" {
		t.Fatal("no chromium on PATH and BENCHSEAL_CHROMIUM unset, but BENCHSEAL_PAGECHECK is set")
	}
	t.Skip("no chromium on PATH: make screenshot-check installs Debian's chromium and runs this check")
	return ""
}

// check lays out pages at every viewport, writing screenshots into shots
// when it is not "".
func check(t *testing.T, pages []string, shots string) []Problem {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	ps, err := Check(ctx, pages, Viewports, Options{Chromium: chromium(t), Shots: shots})
	if err != nil {
		t.Fatal(err)
	}
	return ps
}

// The checker finds each kind of defect on a page made to have just that
// one, names the element, and finds nothing on a page without defects.
func TestCheckerFindsEachDefect(t *testing.T) {
	const head = `<!DOCTYPE html><html><head><meta charset="utf-8"><style>
body{margin:0;font:14px sans-serif} main{max-width:600px;padding:10px}
.cards{display:grid;grid-template-columns:1fr 1fr;gap:10px} .cards section{border:1px solid #999}
.scroll{overflow-x:auto} td{white-space:nowrap;padding:2px 8px}
</style></head><body><main>`
	const tail = `</main></body></html>`
	long := strings.Repeat("0123456789abcdef", 8) // an unbreakable sha256-like token
	cases := []struct {
		name, body, kind, element string
	}{
		{"clean", `<div class="cards"><section><p>one</p></section><section><p>two ` + long[:20] + `</p></section></div>
<table><tr><th>a</th><th>b</th></tr><tr><td>1</td><td>2</td></tr></table>
<svg viewBox="0 0 100 20" width="100" height="20"><text x="2" y="14">ok</text></svg>`, "", ""},
		{"viewport", `<div style="width:2200px" id="wide">wide</div>`, "viewport", `div "wide"`},
		{"container", `<div style="width:200px"><div style="width:320px">inner</div></div>`, "container", `div > div "inner"`},
		{"spill", `<p style="width:200px">sha256:` + long + `</p>`, "spill", "p \"sha256:"},
		{"clipped", `<p style="width:100px;overflow:hidden;white-space:nowrap">a sentence far too long for its box</p>`, "clipped", "p \"a sentence"},
		{"hidden column", `<div class="scroll" style="width:300px"><table><tr><th>load</th><th>rate-10</th><th>rate-200</th></tr>
<tr><td>goodput</td><td>` + long[:40] + `</td><td>overloaded in 1 of 1 repeats</td></tr></table></div>`, "hidden", `div.scroll`},
		{"overlap", `<div style="display:grid;grid-template-columns:1fr 1fr"><section style="min-width:0"><p style="width:500px;margin:0">A</p></section><section style="margin-left:-300px">B</section></div>`, "overlap", `section:nth-of-type(2) "B"`},
		{"card overlap", `<div class="cards" style="grid-template-columns:280px 280px"><section><dl><dd>` + long + `</dd></dl></section><section>B</section></div>`, "overlap", `section:nth-of-type(2) "B"`},
		{"wide card", `<div class="cards"><section><dl><dd>` + long + `</dd></dl></section><section>B</section></div>`, "", `section:nth-of-type(1)`}, // past its grid, or past the paper
		{"chart text", `<svg viewBox="0 0 100 20" width="100" height="20"><text x="80" y="14">far-too-long-label</text></svg>`, "clipped", `svg > text "far-too-long-label"`},
	}
	dir := t.TempDir()
	var pages []string
	for i, c := range cases {
		p := filepath.Join(dir, string(rune('a'+i))+"-"+strings.ReplaceAll(c.name, " ", "-")+".html")
		if err := os.WriteFile(p, []byte(head+c.body+tail), 0o644); err != nil {
			t.Fatal(err)
		}
		pages = append(pages, p)
	}
	got := map[string][]Problem{}
	for _, p := range check(t, pages, "") {
		got[p.Page] = append(got[p.Page], p)
	}
	for i, c := range cases {
		ps := got[filepath.Base(pages[i])]
		if c.element == "" {
			for _, p := range ps {
				t.Errorf("%s: %v", c.name, p)
			}
			continue
		}
		// Every viewport finds the defect (print too).
		for _, vp := range Viewports {
			found := false
			for _, p := range ps {
				if p.Viewport == vp.Name && (c.kind == "" || p.Kind == c.kind) && strings.Contains(p.Element, c.element) {
					found = true
				}
			}
			if !found && !(c.name == "viewport" && vp.Width > 2200) {
				t.Errorf("%s at %s: no %s problem naming %q; got %v", c.name, vp.Name, c.kind, c.element, ps)
			}
		}
	}
}
