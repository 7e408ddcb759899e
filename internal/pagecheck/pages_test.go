package pagecheck

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// benchseal returns the binary to make the pages with: BENCHSEAL_BIN, else
// one built from this module.
func benchseal(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("BENCHSEAL_BIN"); p != "" {
		return p
	}
	bin := filepath.Join(t.TempDir(), "benchseal")
	build := exec.Command("go", "build", "-o", bin, "./cmd/benchseal")
	build.Dir = filepath.Join("..", "..")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// declareCost adds a declared price to a run's manifest, as a publisher
// states it (cost.currency, cost.price_per_hour).
func declareCost(t *testing.T, run, price string) {
	t.Helper()
	p := filepath.Join(run, "manifest.json")
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["cost"] = map[string]any{"currency": "USD", "price_per_hour": price}
	if b, err = json.MarshalIndent(m, "", "  "); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// benchsealPages makes every kind of HTML page benchseal writes, with the
// inputs that stretch a layout: a replay report of a seven-point rate sweep
// whose last points are overloaded, with an SLO sweep and a declared
// price; a replay report of a signed bundle; compare and decide (each
// objective) of two signed bundles, whose cards hold the key fingerprint
// and bundle digest (long sha256 strings); and compare and decide of two
// concurrency sweeps.
func benchsealPages(t *testing.T, dir string) []string {
	t.Helper()
	bin := benchseal(t)
	run := func(args ...string) {
		t.Helper()
		cmd := exec.Command(bin, args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH=1767225600")
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("benchseal %v: %v\n%s", args, err, stderr.String())
		}
	}
	run("synth", "--out", "sweep", "--mode", "rate", "--points", "4,8,16,24,32,48,64", "--repeats", "2", "--requests", "1400")
	declareCost(t, filepath.Join(dir, "sweep"), "36")
	run("replay", "sweep", "--sweep-slo", "ttft=50ms..1s:8", "--output", "html", "--out", "report.html")
	run("keygen", "--out", "publisher", "--no-password")
	for i, seed := range []string{"2", "3"} {
		name := []string{"a", "b"}[i]
		run("synth", "--out", name, "--mode", "rate", "--points", "8,24,48,72", "--seed", seed, "--repeats", "4", "--requests", "1600")
		declareCost(t, filepath.Join(dir, name), []string{"12.5", "9.75"}[i])
		run("pack", name, "--out", name+".oci.tar", "--key", "publisher.key")
		run("synth", "--out", "c"+name, "--seed", seed, "--repeats", "4", "--requests", "1200")
	}
	run("replay", "a.oci.tar", "--output", "html", "--out", "report-bundle.html")
	signed := []string{"a.oci.tar", "b.oci.tar", "--key", "publisher.pub", "--allow-different-workload", "--output", "html"}
	run(append([]string{"compare", "--sweep-slo", "ttft=50ms..1s:6", "--out", "compare.html"}, signed...)...)
	for _, o := range []struct{ objective, page string }{
		{"max-goodput", "decide-goodput.html"}, {"min-cost-per-good-token", "decide-cost.html"}, {"max-capacity", "decide-capacity.html"},
	} {
		run(append([]string{"decide", "--objective", o.objective, "--out", o.page}, signed...)...)
	}
	run("compare", "ca", "cb", "--allow-different-workload", "--output", "html", "--out", "compare-concurrency.html")
	run("decide", "ca", "cb", "--allow-different-workload", "--objective", "max-capacity", "--output", "html", "--out", "decide-concurrency.html")
	pages, err := filepath.Glob(filepath.Join(dir, "*.html"))
	if err != nil || len(pages) != 8 {
		t.Fatalf("pages: %v %v", pages, err)
	}
	return pages
}

// Every page benchseal writes lays out at 1280 px, 1920 px and on A4 paper
// with nothing past the edge, out of its box, cut off, overlapping or
// scrolled out of view. It builds the binary and makes its inputs (about
// a minute on 2 busy cores), so it runs in make screenshot-check (and
// ci-full), which sets BENCHSEAL_PAGECHECK, not in make test;
// report's TestLongTokensCanWrap keeps the static property there.
func TestBenchsealPagesFitEveryWidth(t *testing.T) {
	if os.Getenv("BENCHSEAL_PAGECHECK") == "" {
		t.Skip("set BENCHSEAL_PAGECHECK=1 (make screenshot-check) to lay out benchseal's pages in Chromium")
	}
	chromium(t)
	start := time.Now()
	pages := benchsealPages(t, t.TempDir())
	made := time.Since(start)
	for _, p := range check(t, pages, os.Getenv("BENCHSEAL_SCREENSHOTS")) {
		t.Error(p)
	}
	t.Logf("%d pages made in %v, checked at %d widths in %v", len(pages), made.Round(time.Millisecond), len(Viewports), (time.Since(start) - made).Round(time.Millisecond))
}
