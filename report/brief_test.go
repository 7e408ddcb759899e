package report

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/benchseal/benchseal/replay"
)

// TestBriefIsOneTableAScreenWide: replay's default text is one table of
// at most 100 columns, a row per point and repeat and a median row per
// point of several repeats, with a legend; each number is the one the
// detail report prints for the same point, repeat and metric.
func TestBriefIsOneTableAScreenWide(t *testing.T) {
	res, err := replay.Replay(context.Background(), smallRun(), replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var brief, detail bytes.Buffer
	if err := Brief(&brief, res); err != nil {
		t.Fatal(err)
	}
	if err := Text(&detail, res); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(brief.String(), "\n")
	if len(lines) > len(strings.Split(detail.String(), "\n"))/2 {
		t.Errorf("brief of %d lines is not much shorter than the detail", len(lines))
	}
	var rows [][]string
	inTable := false
	for _, l := range lines {
		if strings.HasPrefix(l, "point ") {
			inTable = true
		}
		if inTable && l == "" {
			inTable = false
		}
		if inTable {
			if n := utf8.RuneCountInString(l); n > 100 {
				t.Errorf("table line of %d columns: %q", n, l)
			}
			rows = append(rows, strings.Fields(l))
		}
	}
	if len(rows) < 3 {
		t.Fatalf("no table in\n%s", brief.String())
	}
	// The detail's line of a point and repeat for each column (the
	// summary block's for the medians).
	d := detail.String()
	medians := 0
	for _, f := range rows[2:] {
		if f[0] == "ci" {
			continue
		}
		point, repeat := f[0], f[1]
		var block string
		if repeat == "median" {
			medians++
			_, block, _ = strings.Cut(d, "summary of point "+point+" across repeats")
		} else {
			_, block, _ = strings.Cut(d, "point "+point+" repeat "+repeat+"\n")
		}
		block, _, _ = strings.Cut(block, "\n\n")
		for i, name := range []string{"goodput", "slo_attainment", "request_throughput"} {
			if !containsField(block, name, f[2+i]) {
				t.Errorf("%s/%s: %s %s is not the detail's:\n%s", point, repeat, name, f[2+i], block)
			}
		}
		if repeat != "median" {
			for i, c := range [][2]string{{"ttft", "p50"}, {"ttft", "p99"}, {"e2e", "p99"}, {"tpot", "p50"}} {
				if !distHas(block, c[0], c[1], f[5+i]) {
					t.Errorf("%s/%s: %s %s %s is not the detail's:\n%s", point, repeat, c[0], c[1], f[5+i], block)
				}
			}
		}
	}
	if medians == 0 {
		t.Errorf("no median row in\n%s", brief.String())
	}
	for _, want := range []string{"req/s: request throughput", "--detail"} {
		if !strings.Contains(brief.String(), want) {
			t.Errorf("legend lacks %q:\n%s", want, brief.String())
		}
	}
}

// containsField reports whether a line of block starts (after spaces)
// with name and holds value as its next field.
func containsField(block, name, value string) bool {
	for _, l := range strings.Split(block, "\n") {
		f := strings.Fields(l)
		if len(f) >= 2 && f[0] == strings.TrimSpace(name) && f[1] == value {
			return true
		}
	}
	return false
}

// distHas reports whether the distribution line name of block holds
// field followed by value.
func distHas(block, name, field, value string) bool {
	for _, l := range strings.Split(block, "\n") {
		if f := strings.Fields(l); len(f) > 0 && f[0] == name {
			return strings.Contains(l, " "+field+" "+value+" ")
		}
	}
	return false
}

// TestBriefFlagsOverloadAndExplainsIt: a point the overload test flags
// reads OVERLOADED in its row, and the legend says what that means and
// where the evidence is.
func TestBriefFlagsOverloadAndExplainsIt(t *testing.T) {
	res := flaggedSmallRun(t, replay.Options{})
	var b bytes.Buffer
	if err := Brief(&b, res); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	var row string
	for _, l := range strings.Split(out, "\n") {
		if f := strings.Fields(l); len(f) > 1 && f[0] == "r2" && f[1] == "1" {
			row = l
		}
	}
	if !strings.HasSuffix(row, "OVERLOADED") {
		t.Errorf("row r2/1 %q does not end in the flag:\n%s", row, out)
	}
	if !strings.Contains(out, "OVERLOADED: the overload test found the server falling behind the arrivals (the evidence: --detail)") {
		t.Errorf("no legend of the flag:\n%s", out)
	}
}

// TestIntervalTextIsNeverHalf: a summary with one bound prints that bound
// and why the other is missing, never "[-, x]".
func TestIntervalTextIsNeverHalf(t *testing.T) {
	f := func(v replay.Value) string { return Decimal(v, one, 3) }
	for _, c := range []struct {
		s    replay.Summary
		want string
	}{
		{replay.Summary{N: 5, CILow: replay.Null, CIHigh: replay.Int(55)}, "(at most 55.000; no lower bound from 5 repeats)"},
		{replay.Summary{N: 5, CILow: replay.Int(50), CIHigh: replay.Null}, "(at least 50.000; no upper bound from 5 repeats)"},
		{replay.Summary{N: 9, CILow: replay.Int(50), CIHigh: replay.Int(55)}, "[50.000, 55.000]"},
		{replay.Summary{N: 2, CILow: replay.Null, CIHigh: replay.Null}, "[-, -]"},
	} {
		if got := intervalText(c.s, f); got != c.want {
			t.Errorf("%+v: %q, want %q", c.s, got, c.want)
		}
	}
}
