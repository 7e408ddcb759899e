package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/replay"
)

// TestSweepIsInCSVAndMarkdown: --sweep-slo with --output csv or markdown
// printed the ordinary report and dropped the sweep without a word. The
// CSV is now the sweep as one table (a row per point, repeat and limit, the
// values as the JSON's), the Markdown its two tables.
func TestSweepIsInCSVAndMarkdown(t *testing.T) {
	res, err := replay.Replay(context.Background(), smallRun(), replay.Options{Sweep: &replay.SweepSpec{Metric: "ttft", FromNS: 50e6, ToNS: 250e6, Steps: 5}})
	if err != nil {
		t.Fatal(err)
	}
	sw := res.Sweep
	var b bytes.Buffer
	if err := CSV(&b, res); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{"definitions", "point", "repeat", "swept", "limit_ns", "goodput", "slo_attainment", "held"}; strings.Join(rows[0], ",") != strings.Join(want, ",") {
		t.Fatalf("CSV header %v, want %v", rows[0], want)
	}
	if got, want := len(rows)-1, len(sw.Rows)*len(sw.LimitsNS); got != want {
		t.Fatalf("CSV has %d sweep rows, want %d", got, want)
	}
	last := rows[len(rows)-1]
	r := sw.Rows[len(sw.Rows)-1]
	if last[3] != "ttft" || last[4] != "250000000" || last[5] != csvNum(r.Goodput[len(sw.LimitsNS)-1]) || last[6] != csvNum(r.Attainment[len(sw.LimitsNS)-1]) {
		t.Errorf("last CSV row %v: want ttft at 250000000 ns with goodput %s", last, csvNum(r.Goodput[len(sw.LimitsNS)-1]))
	}
	b.Reset()
	if err := Markdown(&b, res); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{"### sweep of the ttft limit", "goodput (req/s) by ttft limit and point/repeat", "SLO attainment (% of declared) by ttft limit", "| 250.000 |"} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q:\n%s", want, md)
		}
	}
}
