package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// removeLastMeasured captures a simulated run (one point, c4, of 40
// requests, latencies scaled by 0.01) into dir/name and drops its last
// measured record: a request removed from the end, so only the declared
// count shows it (the request numbers stay contiguous). The run has one
// point because the engine's count of finished requests allows one
// request from elsewhere (the preflight probe, up to 8 output tokens, so
// the requests ask for 8) at the first point only:
// at a later one, the request the engine counted and the records lack
// contradicts it (see schema's serverTally.elsewhere).
func removeLastMeasured(t *testing.T, dir, name string) string {
	t.Helper()
	run := filepath.Join(dir, name)
	var out, errOut bytes.Buffer
	if code := Main([]string{"capture", "--simulate", "--concurrency", "4", "--requests", "40", "--output-tokens", "8", "--sim-time-scale", "0.01", "--out", run}, strings.NewReader(""), &out, &errOut); code != ExitOK {
		t.Fatalf("capture: exit %d: %s", code, errOut.String())
	}
	path := filepath.Join(run, "records.jsonl")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(b), "\n")
	drop := -1
	for i, l := range lines {
		if strings.Contains(l, `"id":"c4.r0.m39"`) {
			drop = i
		}
	}
	if drop < 0 {
		t.Fatalf("no record c4.r0.m39 in %s", path)
	}
	lines = append(lines[:drop], lines[drop+1:]...)
	if err := os.WriteFile(path, []byte(strings.Join(lines, "")), 0o644); err != nil {
		t.Fatal(err)
	}
	return run
}

// markIncomplete marks the run's manifest incomplete, with a reason.
func markIncomplete(t *testing.T, run string) {
	t.Helper()
	path := filepath.Join(run, "manifest.json")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	m["incomplete"], m["incomplete_reason"] = true, "stopped by hand"
	if b, err = json.Marshal(m); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A run missing a declared measured request and not marked incomplete is
// invalid: replay (with or without --write-claims, which then writes
// nothing), compare and decide refuse it with exit 3 and validate's own
// problem, where replay printed it as an INCOMPLETE run and wrote claims.
// Marked incomplete, the same records replay with the missing request
// counted as not sent (never cancelled), as validate's message says.
func TestReplayRefusesRemovedWork(t *testing.T) {
	dir := t.TempDir()
	cut := removeLastMeasured(t, dir, "cut")
	main := func(args ...string) (int, string, string) {
		var out, errOut bytes.Buffer
		code := Main(args, strings.NewReader(""), &out, &errOut)
		return code, out.String(), out.String() + errOut.String()
	}
	const problem = `field "load.points[0].requests": point "c4" repeat 0 (measure) has 39 records, the manifest declares 40: 1 request(s) are missing (a run missing work is valid only when marked incomplete`
	code, _, vErr := main("validate", cut)
	if code != ExitRejected || !strings.Contains(vErr, problem) {
		t.Fatalf("validate: exit %d, want %d with %q: %s", code, ExitRejected, problem, vErr)
	}
	// validate's whole line, from the field on, is what the others say.
	line := vErr[strings.Index(vErr, problem):]
	line = line[:strings.IndexByte(line, '\n')]
	claims := filepath.Join(dir, "claims.json")
	for _, args := range [][]string{
		{"replay", cut},
		{"replay", cut, "--output", "json"},
		{"replay", cut, "--write-claims", claims},
		{"compare", cut, cut},
		{"decide", cut, cut, "--objective", "max-goodput"},
	} {
		code, _, errOut := main(args...)
		if code != ExitRejected || !strings.Contains(errOut, line) {
			t.Errorf("%s: exit %d, want %d with validate's %q: %s", strings.Join(args, " "), code, ExitRejected, line, errOut)
		}
	}
	if _, err := os.Lstat(claims); err == nil {
		t.Errorf("replay --write-claims of an invalid run wrote %s", claims)
	}

	markIncomplete(t, cut)
	if code, _, errOut := main("validate", cut); code != ExitOK {
		t.Fatalf("validate of the run marked incomplete: exit %d: %s", code, errOut)
	}
	claims = filepath.Join(dir, "incomplete-claims.json")
	code, out, errOut := main("replay", cut, "--write-claims", claims)
	if code != ExitOK || !strings.Contains(out, "the run is INCOMPLETE") {
		t.Fatalf("replay --write-claims of the run marked incomplete: exit %d: %s%s", code, out, errOut)
	}
	if code, out, errOut = main("replay", cut, "--detail"); code != ExitOK {
		t.Fatalf("replay of the run marked incomplete: exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, "INCOMPLETE run (stopped by hand): 1 declared measured request(s) have no record: counted as not sent") ||
		!strings.Contains(out, "declared 40 = sent 39 + not sent 1") {
		t.Errorf("replay of the run marked incomplete does not count the missing request as not sent:\n%s", out)
	}
	if _, err := os.Lstat(claims); err != nil {
		t.Errorf("replay --write-claims of a valid incomplete run: %v", err)
	}
	_, csv, _ := main("replay", cut, "--output", "csv")
	for _, want := range []string{"benchseal,c4,0,counts.not_sent,1\n", "benchseal,c4,0,counts.cancelled,0\n"} {
		if !strings.Contains(csv, want) {
			t.Errorf("replay --output csv lacks %q", strings.TrimSpace(want))
		}
	}
}

// validate's message and docs/format.md say what replay does with the
// missing requests of a run marked incomplete: not sent, misses in SLO
// attainment (they said "cancelled", which replay never counts them as).
func TestMissingWorkIsDescribedAsNotSent(t *testing.T) {
	dir := t.TempDir()
	cut := removeLastMeasured(t, dir, "cut")
	var out, errOut bytes.Buffer
	Main([]string{"validate", cut}, strings.NewReader(""), &out, &errOut)
	if !strings.Contains(out.String()+errOut.String(), "and then they count as not sent (counts.not_sent) and as misses in SLO attainment") {
		t.Errorf("validate's message does not say the missing requests are not sent: %s", out.String()+errOut.String())
	}
	doc, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "docs", "format.md"))
	if err != nil {
		t.Fatal(err)
	}
	s := strings.Join(strings.Fields(string(doc)), " ")
	if !strings.Contains(s, "the missing ones count as not sent, `counts.not_sent`") || strings.Contains(s, "i.e. cancelled") {
		t.Errorf("docs/format.md \"No work removed\" does not say the missing requests are counts.not_sent")
	}
}
