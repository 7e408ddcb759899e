package plan_test

import (
	"bytes"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/plan"
	"github.com/benchseal/benchseal/schema"
)

func example() *plan.Plan {
	return &plan.Plan{
		Schema: plan.SchemaV1, Title: "t",
		Workload: plan.Workload{Kind: "synthetic"},
		Load: plan.Load{Mode: schema.ModeConcurrency, Repeats: 2, Seed: 7, Warmup: schema.Warmup{Requests: 2},
			Points: []schema.Point{{Name: "c1", Concurrency: 1, Requests: 10, InputTokens: 8, OutputTokens: 4}, {Name: "c4", Concurrency: 4, Requests: 10, InputTokens: 8, OutputTokens: 4}}},
		SLO:         schema.SLO{TTFT: schema.Duration(200e6), OneToken: "pass"},
		Definitions: "benchseal", Boundary: schema.BoundaryClientStreaming,
		Metrics: []string{"goodput", "ttft_ns.p99"},
	}
}

func TestDecodeDigestIsFormattingFree(t *testing.T) {
	p := example()
	ind, err := p.Indent()
	if err != nil {
		t.Fatal(err)
	}
	got, err := plan.Decode(bytes.NewReader(ind), "plan.json")
	if err != nil {
		t.Fatal(err)
	}
	d1, _ := p.Digest()
	d2, _ := got.Digest()
	if d1 != d2 || !strings.HasPrefix(d1, "sha256:") {
		t.Fatalf("%s != %s", d1, d2)
	}
	c, _ := p.Canonical()
	d3, _ := func() (string, error) {
		g, err := plan.Decode(bytes.NewReader(c), "c")
		if err != nil {
			return "", err
		}
		return g.Digest()
	}()
	if d3 != d1 {
		t.Fatal("compact and indented forms differ in digest")
	}
}

func TestDecodeRejects(t *testing.T) {
	good, _ := example().Canonical()
	for name, doc := range map[string]string{
		"unknown field":   strings.Replace(string(good), `"title":"t"`, `"title":"t","extra":1`, 1),
		"duplicate key":   strings.Replace(string(good), `"title":"t"`, `"title":"t","title":"u"`, 1),
		"wrong schema":    strings.Replace(string(good), plan.SchemaV1, "benchseal/plan/v2", 1),
		"duplicate point": strings.Replace(string(good), `"name":"c4"`, `"name":"c1"`, 1),
		"no repeats":      strings.Replace(string(good), `"repeats":2`, `"repeats":0`, 1),
		"dataset no hash": strings.Replace(string(good), `"kind":"synthetic"`, `"kind":"dataset"`, 1),
		"bad definitions": strings.Replace(string(good), `"definitions":"benchseal"`, `"definitions":"mine"`, 1),
	} {
		if _, err := plan.Decode(strings.NewReader(doc), name); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

func TestStatementRoundTrip(t *testing.T) {
	p := example()
	st, err := p.Statement()
	if err != nil {
		t.Fatal(err)
	}
	got, d, err := plan.ParseStatement(st)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := p.Digest()
	if d != want || got.Title != "t" {
		t.Fatalf("%s %s", d, want)
	}
	// The subject must be the plan's own digest.
	bad := strings.Replace(string(st), strings.TrimPrefix(want, "sha256:"), strings.Repeat("0", 64), 1)
	if _, _, err := plan.ParseStatement([]byte(bad)); err == nil {
		t.Fatal("subject of another plan accepted")
	}
}

// run returns a manifest, claims and cells that match example() exactly.
func run(t *testing.T) (*schema.Manifest, *schema.Claims, []plan.Cell) {
	p := example()
	d, _ := p.Digest()
	seed := p.Load.Seed
	m := &schema.Manifest{
		Plan: &schema.PlanRef{SHA256: strings.TrimPrefix(d, "sha256:")},
		Load: schema.Load{Mode: p.Load.Mode, Points: append([]schema.Point(nil), p.Load.Points...), Repeats: 2, Warmup: p.Load.Warmup, Generator: schema.GeneratorBenchsealV1},
		SLO:  p.SLO, Client: schema.Client{Boundary: p.Boundary, Seed: &seed},
	}
	c := &schema.Claims{Definitions: "benchseal"}
	for _, pt := range p.Load.Points {
		c.Points = append(c.Points, schema.PointClaim{Point: pt.Name, Metrics: []schema.Claim{{Metric: "goodput"}, {Metric: "summary.ttft_ns.p99.median"}}})
	}
	var cells []plan.Cell
	for _, pt := range p.Load.Points {
		for r := 0; r < 2; r++ {
			cells = append(cells, plan.Cell{Point: pt.Name, Repeat: r, Records: 12})
		}
	}
	return m, c, cells
}

func TestCheckNamesEveryDeviation(t *testing.T) {
	p := example()
	d, _ := p.Digest()
	m, c, cells := run(t)
	if devs := p.Check(d, m, c, cells); len(devs) != 0 {
		t.Fatalf("exact run deviates: %v", devs)
	}
	for _, tc := range []struct {
		kind string
		mut  func(*schema.Manifest, *schema.Claims, *[]plan.Cell)
	}{
		{plan.DevUnplanned, func(m *schema.Manifest, _ *schema.Claims, cs *[]plan.Cell) {
			m.Load.Points = append(m.Load.Points, schema.Point{Name: "c16", Concurrency: 16, Requests: 10})
		}},
		{plan.DevMissingPoint, func(m *schema.Manifest, _ *schema.Claims, _ *[]plan.Cell) { m.Load.Points = m.Load.Points[:1] }},
		{plan.DevPointChanged, func(m *schema.Manifest, _ *schema.Claims, _ *[]plan.Cell) { m.Load.Points[1].Concurrency = 8 }},
		{plan.DevMissingRepeat, func(_ *schema.Manifest, _ *schema.Claims, cs *[]plan.Cell) { *cs = (*cs)[:3] }},
		{plan.DevCount, func(_ *schema.Manifest, _ *schema.Claims, cs *[]plan.Cell) { (*cs)[0].Records = 11 }},
		{plan.DevSLO, func(m *schema.Manifest, _ *schema.Claims, _ *[]plan.Cell) { m.SLO.TTFT = schema.Duration(300e6) }},
		{plan.DevSLO, func(_ *schema.Manifest, c *schema.Claims, _ *[]plan.Cell) { c.SLO = &schema.SLO{TTFT: 1} }},
		{plan.DevDefinitions, func(_ *schema.Manifest, c *schema.Claims, _ *[]plan.Cell) { c.Definitions = "vllm" }},
		{plan.DevMetric, func(_ *schema.Manifest, c *schema.Claims, _ *[]plan.Cell) {
			c.Points[0].Metrics = append(c.Points[0].Metrics, schema.Claim{Metric: "request_throughput"})
		}},
		// Planned latency metrics left unclaimed
		{plan.DevUnclaimed, func(_ *schema.Manifest, c *schema.Claims, _ *[]plan.Cell) {
			c.Points[1].Metrics = c.Points[1].Metrics[:1]
		}},
		{plan.DevUnclaimed, func(_ *schema.Manifest, c *schema.Claims, _ *[]plan.Cell) { c.Points = c.Points[:1] }},
		{plan.DevUnclaimed, func(_ *schema.Manifest, c *schema.Claims, _ *[]plan.Cell) {
			r := 0
			c.Points[1] = schema.PointClaim{Point: c.Points[1].Point, Repeat: &r, Metrics: c.Points[1].Metrics}
		}},
		{plan.DevBoundary, func(m *schema.Manifest, _ *schema.Claims, _ *[]plan.Cell) {
			m.Client.Boundary = schema.BoundaryNonStreaming
		}},
		{plan.DevRepeats, func(m *schema.Manifest, _ *schema.Claims, _ *[]plan.Cell) { m.Load.Repeats = 3 }},
		{plan.DevWarmup, func(m *schema.Manifest, _ *schema.Claims, _ *[]plan.Cell) { m.Load.Warmup.Requests = 0 }},
		{plan.DevSeed, func(m *schema.Manifest, _ *schema.Claims, _ *[]plan.Cell) { s := int64(8); m.Client.Seed = &s }},
		{plan.DevPlanDigest, func(m *schema.Manifest, _ *schema.Claims, _ *[]plan.Cell) { m.Plan = nil }},
		{plan.DevMode, func(m *schema.Manifest, _ *schema.Claims, _ *[]plan.Cell) { m.Load.Mode = schema.ModeRate }},
		{plan.DevIncomplete, func(m *schema.Manifest, _ *schema.Claims, _ *[]plan.Cell) { m.Incomplete = true }},
	} {
		m, c, cells := run(t)
		tc.mut(m, c, &cells)
		devs := p.Check(d, m, c, cells)
		found := false
		for _, dv := range devs {
			found = found || dv.Kind == tc.kind
		}
		if !found {
			t.Errorf("%s: not reported (got %v)", tc.kind, devs)
		}
	}
}

// FuzzParseStatement: arbitrary payloads never panic, and whatever parses
// has a digest that is the plan's own.
func FuzzParseStatement(f *testing.F) {
	st, _ := example().Statement()
	f.Add(st)
	f.Add([]byte(`{}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		p, d, err := plan.ParseStatement(b)
		if err != nil {
			return
		}
		if got, _ := p.Digest(); got != d {
			t.Fatalf("%s != %s", got, d)
		}
	})
}

// A plan-registered run with load.generator deleted (so
// its moved scheduled_ns went unchecked) matched the plan. A run that does
// not declare the generator capture executes plans under cannot match one.
func TestRunWithoutGeneratorDeviatesFromPlan(t *testing.T) {
	p := &plan.Plan{Schema: plan.SchemaV1, Load: plan.Load{Mode: schema.ModeRate, Repeats: 1, Seed: 7,
		Points: []schema.Point{{Name: "a", Rate: 20, Arrival: schema.ArrivalPoisson, Requests: 20}}}}
	seed := int64(7)
	m := &schema.Manifest{Client: schema.Client{Seed: &seed}, Load: schema.Load{Mode: schema.ModeRate, Repeats: 1, Points: p.Load.Points}}
	devs := p.Check("sha256:x", m, nil, []plan.Cell{{Point: "a", Repeat: 0, Records: 20}})
	found := false
	for _, d := range devs {
		found = found || d.Kind == plan.DevGenerator
	}
	if !found {
		t.Fatalf("no %s deviation: %v", plan.DevGenerator, devs)
	}
}

// TestDeviationDetailsReadAsStated: a changed warmup and SLO are said in
// the plan's words, not as Go structs, and a limit the run does not set
// reads "none", never "0s" (a limit of zero).
func TestDeviationDetailsReadAsStated(t *testing.T) {
	p := example()
	d, _ := p.Digest()
	m, c, cells := run(t)
	m.Load.Warmup = schema.Warmup{Requests: 4}
	m.SLO = schema.SLO{TTFT: schema.Duration(300e6)}
	got := map[string]string{}
	for _, dv := range p.Check(d, m, c, cells) {
		got[dv.Kind] = dv.Detail
	}
	if w := got[plan.DevWarmup]; w != "planned 2 requests, run 4 requests" {
		t.Errorf("warmup: %q", w)
	}
	if s := got[plan.DevSLO]; !strings.Contains(s, "manifest ttft=300ms e2e=none tpot=none one_token=not stated") || strings.Contains(s, "0s") {
		t.Errorf("slo: %q", s)
	}
}

// TestClaimWithoutARepeatCoversRepeatsOnlyAsASummary: a claim without a
// repeat counted as the point's summary, so a plan of two repeats matched
// with claims replay checks against repeat 0 alone. Replay checks such a
// claim against the summary across the repeats; on a metric not
// summarised across repeats it covers none of them (one repeat planned:
// that repeat).
func TestClaimWithoutARepeatCoversRepeatsOnlyAsASummary(t *testing.T) {
	for _, tc := range []struct {
		repeats int
		metric  string
		covered bool
	}{
		{2, "ttft_ns.p90", false},
		{2, "ttft_ns.p99", true},
		{2, "summary.ttft_ns.p99.median", true},
		{1, "ttft_ns.p90", true},
	} {
		p := example()
		p.Load.Repeats = tc.repeats
		p.Metrics = []string{"goodput", tc.metric}
		d, _ := p.Digest()
		m, c, cells := run(t)
		m.Load.Repeats = tc.repeats
		cells = cells[:0]
		for _, pt := range p.Load.Points {
			for r := range tc.repeats {
				cells = append(cells, plan.Cell{Point: pt.Name, Repeat: r, Records: 12})
			}
		}
		for i := range c.Points {
			c.Points[i].Metrics = []schema.Claim{{Metric: "goodput"}, {Metric: tc.metric}}
		}
		unclaimed := false
		for _, dv := range p.Check(d, m, c, cells) {
			unclaimed = unclaimed || dv.Kind == plan.DevUnclaimed
		}
		if unclaimed == tc.covered {
			t.Errorf("%d repeats, %s without a repeat: unclaimed %v, want %v", tc.repeats, tc.metric, unclaimed, !tc.covered)
		}
	}
}
