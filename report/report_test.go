package report

import (
	"bytes"
	"context"
	"encoding/csv"
	"flag"
	"io"
	"math/big"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
)

var update = flag.Bool("update", false, "rewrite golden files")

type memRun struct {
	m    *schema.Manifest
	recs []*schema.Record
}

func (r *memRun) Manifest() *schema.Manifest { return r.m }
func (r *memRun) Claims() *schema.Claims     { return nil }
func (r *memRun) OpenRecords() (schema.RecordIterator, error) {
	return &iter{recs: r.recs}, nil
}

type iter struct {
	recs []*schema.Record
	i    int
}

func (it *iter) Next() (*schema.Record, error) {
	if it.i >= len(it.recs) {
		return nil, io.EOF
	}
	it.i++
	return it.recs[it.i-1], nil
}
func (it *iter) Close() error { return nil }

// smallRun is a handcrafted two-point, two-repeat open-loop run.
func smallRun() *memRun {
	ms := int64(1e6)
	m := &schema.Manifest{Schema: schema.ManifestSchemaV1, Client: schema.Client{Boundary: schema.BoundaryClientStreaming}, Load: schema.Load{Mode: schema.ModeRate, Repeats: 2,
		Points: []schema.Point{{Name: "r1", Rate: 1}, {Name: "r2", Rate: 2}}},
		SLO: schema.SLO{TTFT: schema.Duration(200 * ms), TPOT: schema.Duration(50 * ms)}}
	var recs []*schema.Record
	for pi, pt := range []string{"r1", "r2"} {
		for rep := range 2 {
			for i := range int64(6) {
				sch := i * 1000 * ms / int64(pi+1)
				sent := sch + 3*i
				ttft := 100*ms + i*30*ms*int64(pi+1) + int64(rep)*7
				chunks := []int64{ttft, ttft + 40*ms, ttft + 90*ms, ttft + 130*ms}
				r := &schema.Record{ID: "x", Point: pt, Repeat: rep, Phase: schema.PhaseMeasure, ScheduledNS: &sch, SentNS: sent,
					EndNS: sent + chunks[3] + ms, ChunksNS: chunks, OutputTokens: 4 + i%2, InputTokens: 100, Status: schema.StatusOK}
				if i == 5 {
					r.Status, r.ChunksNS, r.OutputTokens = schema.StatusTimeout, nil, 0
				}
				if i == 4 {
					r.OutputTokens, r.ChunksNS = 1, chunks[:1]
				}
				recs = append(recs, r)
			}
			recs = append(recs, &schema.Record{ID: "w", Point: pt, Repeat: rep, Phase: schema.PhaseWarmup, SentNS: 0, EndNS: 1, ChunksNS: []int64{1}, OutputTokens: 1, Status: schema.StatusOK})
		}
	}
	return &memRun{m: m, recs: recs}
}

func TestNonStreamingBoundaryMeasuresOnlyE2E(t *testing.T) {
	run := smallRun()
	run.m.Client.Boundary = schema.BoundaryNonStreaming
	ms := int64(1e6)
	// The manifest has no provenance block: the boundary alone makes
	// first_chunk_ns absent. A TTFT or TPOT limit cannot be judged, so
	// the SLO metrics are null with that reason (the
	// note described a rule the numbers no longer followed); -1 = null.
	for _, tc := range []struct {
		name     string
		slo      replay.SLOSpec
		wantGood int64
	}{
		// e2e of the ok records of r1/0: 230, 260, 290, 320 ms (and the
		// one-token answer at 220 ms).
		{"ttft limit is null", replay.SLOSpec{TTFTNS: ptr(260 * ms), OneToken: "pass"}, -1},
		{"e2e limit", replay.SLOSpec{E2ENS: ptr(290 * ms), OneToken: "pass"}, 4},
		{"tpot limit is null", replay.SLOSpec{TPOTNS: ptr(1000 * ms), OneToken: "pass"}, -1},
		{"e2e and ttft limits are null", replay.SLOSpec{E2ENS: ptr(290 * ms), TTFTNS: ptr(260 * ms), OneToken: "pass"}, -1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			slo := tc.slo
			res, err := replay.Replay(context.Background(), run, replay.Options{SLO: &slo})
			if err != nil {
				t.Fatal(err)
			}
			p := res.Point("r1", 0)
			for _, d := range []string{"ttft_ns", "tpot_ns", "itl_ns", "ttft_sched_ns"} {
				if n := p.Dists[d].N; n != 0 {
					t.Errorf("%s: n = %d, want 0 at the non-streaming boundary", d, n)
				}
			}
			if n := p.Dists["e2e_ns"].N; n != 5 {
				t.Errorf("e2e_ns: n = %d, want 5", n)
			}
			if tc.wantGood < 0 {
				for _, k := range []string{"counts.good", "goodput", "token_goodput", "slo_attainment", "slo_attainment_ok"} {
					v, why := res.Resolve("r1", 0, k)
					if !v.IsNull() || strings.Count(why, "first_chunk_ns not measured") != 1 {
						t.Errorf("%s = %v, reason %q: want null, the reason stated once", k, v, why)
					}
				}
			} else if p.Counts.Good != tc.wantGood {
				t.Errorf("good = %d, want %d", p.Counts.Good, tc.wantGood)
			}
			if res.Boundary != schema.BoundaryNonStreaming || !slices.Contains(res.Notes, replay.NonStreamingNote) {
				t.Errorf("boundary %q, notes %q", res.Boundary, res.Notes)
			}
		})
	}
	// A sweep of the e2e limit with a TTFT limit held fixed cannot be
	// judged either: null with the note, not goodput 0 at every limit.
	slo := replay.SLOSpec{E2ENS: ptr(290 * ms), TTFTNS: ptr(260 * ms), OneToken: "pass"}
	res, err := replay.Replay(context.Background(), run, replay.Options{SLO: &slo, Sweep: &replay.SweepSpec{Metric: "e2e", FromNS: 100 * ms, ToNS: 300 * ms, Steps: 3}})
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range res.Sweep.Rows {
		for _, g := range r.Goodput {
			if !g.IsNull() {
				t.Fatalf("sweep goodput %v under an unmeasurable TTFT limit", g)
			}
		}
	}
}

func ptr(v int64) *int64 { return &v }

func TestCostPerMillionTokensFollowsThePriceAndTheWindow(t *testing.T) {
	run := smallRun()
	run.m.Cost = &schema.Cost{Currency: "USD", PricePerHour: "36"}
	res, err := replay.Replay(context.Background(), run, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p := res.Point("r1", 0)
	// price/h × 10⁶ ÷ (3600 s/h × tokens/s) = 36 × 10⁶ × window_s ÷ (3600 × tokens).
	tput := p.Scalars["output_token_throughput"].Rat()
	want := new(big.Rat).Quo(big.NewRat(36*1_000_000, 3600), tput)
	if got := p.Scalars[replay.CostPerMillionOutputTokens]; !got.IsExact() || got.Rat().Cmp(want) != 0 {
		t.Fatalf("cost per 1M output tokens = %v, want %v", got.Rat(), want)
	}
	good := p.Scalars[replay.CostPerMillionGoodTokens]
	if !good.IsExact() || good.Rat().Cmp(want) < 0 {
		t.Fatalf("cost per 1M good tokens %v must be ≥ per output token %v", good.Rat(), want)
	}
	var b bytes.Buffer
	if err := JSON(&b, res); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(b.Bytes(), []byte(`"price_per_hour": "36"`)) {
		t.Errorf("JSON lacks the price: %s", b.String()[:300])
	}
	run.m.Cost.PricePerHour = "-1"
	if _, err := replay.Replay(context.Background(), run, replay.Options{}); err == nil {
		t.Error("a negative price was accepted")
	}
}

func TestGolden(t *testing.T) {
	for _, c := range []struct {
		name string
		f    Format
		o    replay.Options
	}{
		{"small.json", FormatJSON, replay.Options{}},
		{"small.txt", FormatText, replay.Options{}},
		{"small_brief.txt", FormatBrief, replay.Options{}},
		{"small.csv", FormatCSV, replay.Options{}},
		{"small.md", FormatMarkdown, replay.Options{}},
		{"small_vllm.json", FormatJSON, replay.Options{Definitions: "vllm"}},
		{"small_sweep.txt", FormatText, replay.Options{Sweep: &replay.SweepSpec{Metric: "ttft", FromNS: 50e6, ToNS: 250e6, Steps: 5}}},
		{"small.html", FormatHTML, replay.Options{}},
		{"small_sweep.html", FormatHTML, replay.Options{Sweep: &replay.SweepSpec{Metric: "ttft", FromNS: 50e6, ToNS: 250e6, Steps: 5}}},
	} {
		t.Run(c.name, func(t *testing.T) {
			res, err := replay.Replay(context.Background(), smallRun(), c.o)
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := Write(&b, c.f, res); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, filepath.Join("testdata", c.name), b.Bytes())
		})
	}
}

func TestNumberFormatting(t *testing.T) {
	for _, c := range []struct {
		v    replay.Value
		want string
	}{
		{replay.Null, "null"},
		{replay.Int(42), "42"},
		{replay.Frac(1, 3), "0.333333333333"},
		{replay.Frac(5, 2), "2.5"},
		{replay.Float(350026954.5800982), "350026954.5800982"},
	} {
		if got := Number(c.v); got != c.want {
			t.Errorf("Number = %s want %s", got, c.want)
		}
	}
	// 867900003.6 ns → "867.900 ms"; half-even at presentation.
	if got := Decimal(replay.Frac(8679000036, 10), nsToMS, 3); got != "867.900" {
		t.Errorf("ms %s", got)
	}
	if got := Decimal(replay.Int(2500), nsToMS, 3); got != "0.002" {
		t.Errorf("half-even %s", got)
	}
}

// absentRun is smallRun imported from a tool that stored neither send
// times nor the chunks between the first and the last, with its own
// window for point r1 repeat 0 only.
func absentRun() *memRun {
	run := smallRun()
	p := &schema.Provenance{Windows: []schema.ToolWindow{{Point: "r1", Repeat: 0, WindowNS: 5e9, How: "the tool's duration (s)"}}}
	p.Set(schema.FieldSent, schema.FieldAbsent, "every request placed at 0")
	p.Set(schema.FieldChunks, schema.FieldAbsent, "only the first and last chunk stored")
	run.m.Provenance = p
	run.m.Evidence = schema.EvidenceImported
	return run
}

// TestGoldenUnmeasuredFieldsAreNullWithReason checks every output format
// of a run whose send times and chunks were not measured: the window is
// the tool's where stored (labelled) and null with the reason elsewhere;
// the rates divided by it, itl and stalls are null with the reason.
func TestGoldenUnmeasuredFieldsAreNullWithReason(t *testing.T) {
	for _, f := range []Format{FormatText, FormatJSON, FormatCSV, FormatMarkdown, FormatHTML} {
		t.Run(string(f), func(t *testing.T) {
			res, err := replay.Replay(context.Background(), absentRun(), replay.Options{})
			if err != nil {
				t.Fatal(err)
			}
			var b bytes.Buffer
			if err := Write(&b, f, res); err != nil {
				t.Fatal(err)
			}
			ext := map[Format]string{FormatText: "txt", FormatMarkdown: "md"}[f]
			if ext == "" {
				ext = string(f)
			}
			checkGolden(t, filepath.Join("testdata", "absent."+ext), b.Bytes())
			// Never the number the placeholders would give.
			for _, bad := range []string{"1.185", "4.502"} {
				if f != FormatHTML && bytes.Contains(b.Bytes(), []byte("point r2")) && bytes.Contains(b.Bytes(), []byte(bad)) {
					t.Errorf("output holds %s, a rate from unmeasured send times", bad)
				}
			}
		})
	}
}

// TestRateDistributionsReadPerSecond: a peer's distribution of rates
// (GuideLLM's requests_per_second) is shown as is, per second, in text and
// Markdown as in HTML — not scaled as ns to ms, where it read 0.000.
func TestRateDistributionsReadPerSecond(t *testing.T) {
	res, err := replay.Replay(context.Background(), smallRun(), replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	d := res.Results[0].Dists["e2e_ns"]
	d.Mean = replay.Frac(3, 2) // 1.5 requests per second
	res.Results[0].Dists["requests_per_second"] = d
	for _, f := range []Format{FormatText, FormatMarkdown} {
		var b bytes.Buffer
		if err := Write(&b, f, res); err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(b.String(), "\n") {
			if !strings.Contains(line, "requests_per_second") {
				continue
			}
			if !strings.Contains(line, "1.500") || !strings.Contains(line, "per s") || strings.Contains(line, " ms") {
				t.Errorf("%s: %q, want the mean 1.500 per s", f, line)
			}
		}
	}
}

// TestSweepTextIsTheSweepAloneAtRoundLimits: --sweep-slo without steps
// prints only the sweep, at round limits.
func TestSweepTextIsTheSweepAloneAtRoundLimits(t *testing.T) {
	sw, err := replay.ParseSweep("ttft=50ms..2s")
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.Replay(context.Background(), smallRun(), replay.Options{Sweep: sw})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Text(&b, res); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.Contains(out, "point r1 repeat 0") || strings.Contains(out, "summary of point") {
		t.Errorf("the sweep is printed after the whole report:\n%s", out)
	}
	for _, want := range []string{"\n  50.000  ", "\n 100.000  ", "\n1900.000  ", "\n2000.000  "} {
		if !strings.Contains(out, want) {
			t.Errorf("no line %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "152.632") {
		t.Errorf("uneven limit printed:\n%s", out)
	}
}

// TestSweepTextStatesTheLimitsHeldFixed: the text sweep's SLO line says
// the swept limit is swept (not the manifest's value, which plays no part
// in the tables), names the limits that stay in force, and every line of
// its tables fits a terminal even with many points and repeats.
func TestSweepTextStatesTheLimitsHeldFixed(t *testing.T) {
	slo, err := replay.ParseSLO("ttft=250ms,e2e=4s")
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.Replay(context.Background(), smallRun(), replay.Options{
		SLO:   &slo,
		Sweep: &replay.SweepSpec{Metric: "ttft", FromNS: 50e6, ToNS: 250e6, Steps: 5},
	})
	if err != nil {
		t.Fatal(err)
	}
	// Many points and repeats: the tables split into blocks of columns.
	for i := 0; i < 5; i++ {
		res.Sweep.Rows = append(res.Sweep.Rows, res.Sweep.Rows...)
	}
	var b bytes.Buffer
	if err := Text(&b, res); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	for _, want := range []string{
		"slo: ttft swept (the tables below), e2e 4000.000 ms, tpot -,",
		"held fixed (from --slo): e2e 4000.000 ms, one_token pass; good = meets the swept limit and these",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("no %q in\n%s", want, out)
		}
	}
	if strings.Contains(out, "ttft 250.000 ms") {
		t.Errorf("the swept limit's own value is printed:\n%s", out)
	}
	inTable := false
	for _, line := range strings.Split(out, "\n") {
		if strings.HasPrefix(line, "goodput (req/s) by") {
			inTable = true
		}
		if strings.HasPrefix(line, "load flags") {
			inTable = false
		}
		if inTable && utf8.RuneCountInString(line) > 100 {
			t.Errorf("sweep table line of %d columns: %q", utf8.RuneCountInString(line), line)
		}
	}
}

// TestStoredToolWindowMustBePossible: a publisher's stored window is a
// claim too. One shorter than the longest request, shorter than the total
// latency ÷ concurrency, or stored in a run that is not an import gives no
// window (null rates with the reason), never an inflated throughput.
func TestStoredToolWindowMustBePossible(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(m *schema.Manifest)
		want   string
	}{
		{"shorter than the longest request", func(m *schema.Manifest) { m.Provenance.Windows[0].WindowNS = 1e6 }, "shorter than the longest request"},
		{"not an import", func(m *schema.Manifest) { m.Evidence = schema.EvidenceSelfRun }, "counts only in an imported run"},
		{"below total latency over concurrency", func(m *schema.Manifest) {
			m.Load.Mode = schema.ModeConcurrency
			for i := range m.Load.Points {
				m.Load.Points[i].Concurrency, m.Load.Points[i].Rate = 1, 0
			}
			m.Provenance.Windows[0].WindowNS = 400e6 // ≥ the longest (320 ms), < Σ e2e (1320 ms) ÷ 1
		}, "total latency ÷ concurrency 1"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			run := absentRun()
			tc.mutate(run.m)
			res, err := replay.Replay(context.Background(), run, replay.Options{})
			if err != nil {
				t.Fatal(err)
			}
			p := res.Point("r1", 0)
			if v := p.Scalars["request_throughput"]; !v.IsNull() {
				t.Errorf("request_throughput = %v from an impossible window", v.Rat())
			}
			if why := p.NullReasons["request_throughput"]; !strings.Contains(why, tc.want) {
				t.Errorf("reason %q, want it to say %q", why, tc.want)
			}
		})
	}
}

// checkGolden compares got with the golden file at path (rewritten with
// -update).
func checkGolden(t *testing.T, path string, got []byte) {
	t.Helper()
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(want, got) {
		t.Errorf("%s differs from golden; rerun with -update and review the diff", path)
	}
}

// TestSweepOfAnUnmeasuredFieldIsNull: a sweep of the TTFT limit over a run
// whose first chunks were not measured gives no number, and says why.
func TestSweepOfAnUnmeasuredFieldIsNull(t *testing.T) {
	run := absentRun()
	run.m.Provenance.Set(schema.FieldFirstChunk, schema.FieldAbsent, "non-streaming")
	sw, err := replay.ParseSweep("ttft=50ms..250ms")
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.Replay(context.Background(), run, replay.Options{Sweep: sw})
	if err != nil {
		t.Fatal(err)
	}
	for _, row := range res.Sweep.Rows {
		for i := range row.Goodput {
			if !row.Goodput[i].IsNull() || !row.Attainment[i].IsNull() {
				t.Fatalf("%s/%d: a number from an unmeasured ttft", row.Point, row.Repeat)
			}
		}
	}
	var b bytes.Buffer
	if err := Text(&b, res); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "note: sweep of ttft is null: first_chunk_ns not measured by the source (non-streaming)") {
		t.Errorf("no reason in\n%s", b.String())
	}
}

// TestCSVCellsAreNeverFormulas: a point name is publisher text; a cell
// that a spreadsheet would evaluate (=, +, -, @) gets a leading apostrophe
// (=HYPERLINK(...) as a point name), numbers stay as
// they are.
func TestCSVCellsAreNeverFormulas(t *testing.T) {
	run := smallRun()
	evil := `=HYPERLINK("http://x","y")`
	run.m.Load.Points[0].Name = evil
	for _, r := range run.recs {
		if r.Point == "r1" {
			r.Point = evil
		}
	}
	res, err := replay.Replay(context.Background(), run, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	if err := Write(&b, FormatCSV, res); err != nil {
		t.Fatal(err)
	}
	rows, err := csv.NewReader(&b).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	sawEvil := false
	for _, row := range rows {
		for _, cell := range row {
			if cell == "'"+evil {
				sawEvil = true
			}
			if cell != "" && strings.ContainsRune("=+-@", rune(cell[0])) {
				if _, err := strconv.ParseFloat(cell, 64); err != nil {
					t.Errorf("cell %q would be evaluated as a formula", cell)
				}
			}
		}
	}
	if !sawEvil {
		t.Errorf("the point name is not written as the text '%s", evil)
	}
	for cell, want := range map[string]string{"-1.5": "-1.5", "+3": "+3", "@x": "'@x", "-x": "'-x", "a=b": "a=b", "\tx": "'\tx"} {
		if got := csvCell(cell); got != want {
			t.Errorf("csvCell(%q) = %q, want %q", cell, got, want)
		}
	}
}

// TestNoSLOPrintsNone: a run without an SLO prints "slo: none", not empty
// limits, a one-token rule and "(from none)".
func TestNoSLOPrintsNone(t *testing.T) {
	run := smallRun()
	run.m.SLO = schema.SLO{}
	res, err := replay.Replay(context.Background(), run, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []Format{FormatText, FormatMarkdown} {
		var b bytes.Buffer
		if err := Write(&b, f, res); err != nil {
			t.Fatal(err)
		}
		if s := b.String(); !strings.Contains(s, "slo:** none  \n") && !strings.Contains(s, "slo: none\n") || strings.Contains(s, "from none") {
			t.Errorf("format %v: %s", f, s[:min(len(s), 400)])
		}
	}
}
