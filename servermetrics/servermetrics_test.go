package servermetrics

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func load(t testing.TB, name string, at int64) *Snapshot {
	t.Helper()
	f, err := os.Open(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := Parse(f)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	s.AtNS = at
	return s
}

func near(a, b float64) bool { return math.Abs(a-b) < 1e-9 }

func TestParseEachEngineDocumentedExposition(t *testing.T) {
	for _, tc := range []struct {
		file, engine, metric string
		count, sum           float64
	}{
		{"sglang_docs.prom", EngineSGLang, "sglang:time_to_first_token_seconds", 2124, 656.0780844688416},
		{"vllm_before.prom", EngineVLLM, "vllm:time_to_first_token_seconds", 10, 1},
		{"tgi.prom", EngineTGI, "tgi_request_duration", 120, 96.5},
	} {
		t.Run(tc.engine, func(t *testing.T) {
			s := load(t, tc.file, 0)
			if got := DetectEngine(s); got != tc.engine {
				t.Errorf("engine %q, want %q", got, tc.engine)
			}
			f := s.Families[tc.metric]
			if f == nil || f.Hist == nil {
				t.Fatalf("%s not parsed as a histogram: %+v", tc.metric, f)
			}
			if f.Hist.Count != tc.count || !near(f.Hist.Sum, tc.sum) {
				t.Errorf("count %v sum %v, want %v %v", f.Hist.Count, f.Hist.Sum, tc.count, tc.sum)
			}
		})
	}
}

func TestParseSumsSeriesOverLabels(t *testing.T) {
	s := load(t, "vllm_before.prom", 0)
	if f := s.Families["vllm:request_success_total"]; f == nil || f.Sum != 10 {
		t.Errorf("request_success summed over finished_reason = %+v, want 10", f)
	}
}

func TestParseRejectsBadInput(t *testing.T) {
	for name, text := range map[string]string{
		"garbage":         "this is not an exposition\n",
		"different edges": "# TYPE h histogram\nh_bucket{a=\"1\",le=\"1\"} 1\nh_bucket{a=\"1\",le=\"+Inf\"} 1\nh_count{a=\"1\"} 1\nh_sum{a=\"1\"} 1\nh_bucket{a=\"2\",le=\"2\"} 1\nh_bucket{a=\"2\",le=\"+Inf\"} 1\nh_count{a=\"2\"} 1\nh_sum{a=\"2\"} 1\n",
		"nan gauge":       "# TYPE g gauge\ng NaN\n",
	} {
		if _, err := Parse(strings.NewReader(text)); err == nil {
			t.Errorf("%s: parsed without error", name)
		}
	}
}

func TestDeltaVLLMHistogramArithmetic(t *testing.T) {
	c, err := Delta("", []*Snapshot{load(t, "vllm_before.prom", 0), load(t, "vllm_after.prom", 10e9)}, wholeRun)
	if err != nil {
		t.Fatal(err)
	}
	if c.Engine != EngineVLLM {
		t.Fatalf("engine %q", c.Engine)
	}
	h := map[string]HistogramDelta{}
	for _, x := range c.Histograms {
		h[x.Role] = x
	}
	ttft := h[RoleTTFT]
	if ttft.Count != 20 || ttft.Mean == nil || !near(*ttft.Mean, 0.15) {
		t.Fatalf("ttft count %v mean %v, want 20 and 0.15", ttft.Count, ttft.Mean)
	}
	p50 := ttft.Estimates[0]
	if p50.Quantile != 0.5 || p50.Value == nil || !near(*p50.Value, 0.175) || p50.Lo != 0.1 || p50.Hi == nil || *p50.Hi != 0.25 {
		t.Errorf("ttft p50 estimate %+v, want 0.175 in [0.1, 0.25]", p50)
	}
	if a, _ := ttft.Attain(0.25); !a.Exact || !near(a.Lo, 0.75) {
		t.Errorf("attainment at the 0.25 edge %+v, want exactly 0.75", a)
	}
	if a, _ := ttft.Attain(0.2); a.Exact || !near(a.Lo, 0.25) || !near(a.Hi, 0.75) {
		t.Errorf("attainment at 0.2 (between edges) %+v, want bounds [0.25, 0.75]", a)
	}
	if a, _ := ttft.Attain(0.2); a.LoEdge == nil || *a.LoEdge != 0.1 || a.HiEdge == nil || *a.HiEdge != 0.25 {
		t.Errorf("attainment at 0.2 names edges %v and %v, want 0.1 and 0.25", a.LoEdge, a.HiEdge)
	}
	if a, _ := ttft.Attain(1e6); a.Exact || a.HiEdge != nil || a.Hi != 1 || a.LoEdge == nil {
		t.Errorf("attainment above the last finite edge %+v, want bounded by the last edge and 1 (+Inf)", a)
	}
	if a, _ := ttft.Attain(1e-9); a.Exact || a.LoEdge != nil || a.Lo != 0 || a.HiEdge == nil {
		t.Errorf("attainment below the first edge %+v, want bounded by 0 and the first edge", a)
	}
	e2e := h[RoleE2E]
	if !near(*e2e.Mean, 0.85) {
		t.Errorf("e2e mean %v, want 0.85", *e2e.Mean)
	}
	if p99 := e2e.Estimates[2]; p99.Value != nil || p99.Hi != nil || p99.Lo != 1.0 {
		t.Errorf("e2e p99 above the last finite edge %+v, want no value, lo 1.0, no upper bound", p99)
	}
	want := map[string]float64{RolePromptTokens: 2000, RoleGenerationTokens: 4000, RoleRequestSuccess: 20, RolePreemptions: 3}
	for _, d := range c.Counters {
		if w, ok := want[d.Role]; !ok || d.Delta != w {
			t.Errorf("counter %s Δ %v, want %v", d.Role, d.Delta, w)
		}
		delete(want, d.Role)
	}
	if len(want) != 0 {
		t.Errorf("counters missing: %v", want)
	}
	peaks := map[string]float64{}
	for _, g := range c.Gauges {
		peaks[g.Role] = *g.Peak
	}
	if peaks[RoleWaiting] != 3 || peaks[RoleKVCache] != 0.5 {
		t.Errorf("gauge peaks %v", peaks)
	}
	absent := map[string]string{}
	for _, a := range c.Absent {
		absent[a.Role] = a.Reason
	}
	for _, r := range []string{RoleITL, RoleTPOT, RoleQueue, RolePrefill, RoleDecode} {
		if absent[r] != "not exposed by the server" {
			t.Errorf("%s absent reason %q", r, absent[r])
		}
	}
}

func TestDeltaCounterResetMakesEveryCumulativeQuantityAbsent(t *testing.T) {
	// The after scrape precedes the before scrape: every counter went down.
	c, err := Delta(EngineVLLM, []*Snapshot{load(t, "vllm_after.prom", 0), load(t, "vllm_before.prom", 1e9)}, wholeRun)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Histograms) != 0 || len(c.Counters) != 0 {
		t.Errorf("a reset must not yield deltas: %+v %+v", c.Histograms, c.Counters)
	}
	n := 0
	for _, a := range c.Absent {
		if a.Reason == ReasonCounterReset {
			n++
		}
	}
	if n != 6 { // ttft, e2e, prompt, generation, success, preemptions
		t.Errorf("%d quantities absent for a reset, want 6: %+v", n, c.Absent)
	}
}

func TestDeltaMissingSeriesSaysWhich(t *testing.T) {
	before := load(t, "vllm_before.prom", 0)
	delete(before.Families, "vllm:time_to_first_token_seconds")
	c, err := Delta(EngineVLLM, []*Snapshot{before, load(t, "vllm_after.prom", 1e9)}, wholeRun)
	if err != nil {
		t.Fatal(err)
	}
	for _, a := range c.Absent {
		if a.Role == RoleTTFT {
			if a.Reason != "missing from the scrape before the point" {
				t.Errorf("reason %q", a.Reason)
			}
			return
		}
	}
	t.Error("ttft not reported absent")
}

func TestDeltaNeedsTwoScrapesAndAKnownEngine(t *testing.T) {
	if _, err := Delta("", []*Snapshot{load(t, "vllm_before.prom", 0)}, wholeRun); err == nil {
		t.Error("one scrape accepted")
	}
	empty := &Snapshot{Families: map[string]*Family{}}
	if _, err := Delta("", []*Snapshot{empty, empty}, wholeRun); err == nil {
		t.Error("no engine accepted")
	}
}

func TestNamesTableHasOneEntryPerEngineRole(t *testing.T) {
	seen := map[string]bool{}
	for _, n := range Names {
		k := n.Engine + "/" + n.Role
		if seen[k] {
			t.Errorf("%s listed twice", k)
		}
		seen[k] = true
	}
	if _, ok := Lookup(EngineTGI, RoleTTFT); ok {
		t.Error("TGI has no TTFT histogram")
	}
}

func FuzzParse(f *testing.F) {
	for _, n := range []string{"sglang_docs.prom", "vllm_before.prom", "tgi.prom", "llamacpp.prom"} {
		b, err := os.ReadFile(filepath.Join("testdata", n))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		s, err := Parse(strings.NewReader(string(b)))
		if err != nil {
			return
		}
		if _, err := Delta("", []*Snapshot{s, s}, wholeRun); err != nil && DetectEngine(s) != "" {
			t.Errorf("delta of a scrape with itself: %v", err)
		}
	})
}

func TestDocsTableEqualsNames(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "docs", "server-metrics.md"))
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, l := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(l, "| vllm |") || strings.HasPrefix(l, "| sglang |") || strings.HasPrefix(l, "| tgi |") || strings.HasPrefix(l, "| llamacpp |") {
			rows = append(rows, l)
		}
	}
	if len(rows) != len(Names) {
		t.Fatalf("docs/server-metrics.md lists %d names, servermetrics.Names %d", len(rows), len(Names))
	}
	for i, n := range Names {
		want := "| " + n.Engine + " | " + n.Role + " | " + n.Kind + " | `" + n.Metric + "` | " + n.Note + " |"
		if rows[i] != want {
			t.Errorf("docs row %d\n got %s\nwant %s", i, rows[i], want)
		}
	}
}

// wholeRun is a load that every test scrape falls inside.
var wholeRun = Load{ToNS: 1 << 62}

// TestLlamaCppScrapeIsRead: a real llama.cpp /metrics answer is detected
// as llama.cpp (it was unknown: no server column at all) and every name
// of the table is found in it; what llama.cpp lacks (histograms, a
// finished-requests counter) is absent with its reason.
func TestLlamaCppScrapeIsRead(t *testing.T) {
	s := load(t, "llamacpp.prom", 0)
	if got := DetectEngine(s); got != EngineLlamaCpp {
		t.Fatalf("engine %q, want %q", got, EngineLlamaCpp)
	}
	col, err := Delta("", []*Snapshot{s, s}, wholeRun)
	if err != nil {
		t.Fatal(err)
	}
	if len(col.Absent) != 0 || len(col.Histograms) != 0 {
		t.Errorf("absent %+v histograms %d: every llama.cpp name of the table is in the scrape, none a histogram", col.Absent, len(col.Histograms))
	}
	got := map[string]bool{}
	for _, c := range col.Counters {
		got[c.Role] = true
	}
	for _, r := range []string{RolePromptTokens, RolePromptTokensCached, RoleGenerationTokens, RolePromptSeconds, RoleGenerationSeconds, RoleDecodeCalls} {
		if !got[r] {
			t.Errorf("counter %s missing", r)
		}
	}
	if _, ok := Lookup(EngineLlamaCpp, RoleRequestSuccess); ok {
		t.Error("llama.cpp has no finished-requests counter")
	}
	if _, ok := ServedBefore(s); ok {
		t.Error("a fresh start cannot be measured without a finished-requests counter")
	}
}
