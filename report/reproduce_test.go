package report

import (
	"bytes"
	"strings"
	"testing"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"github.com/benchseal/benchseal/reproduce/verdict"
)

// sampleReproduction is a report with each kind of verdict: a ratio
// reproduced, one not, an inconclusive one with the repeats needed, an
// exact count, and a claim the reproduction cannot determine.
func sampleReproduction() *verdict.Report {
	f := func(v float64) *float64 { return &v }
	d := "sha256:" + strings.Repeat("ab", 32)
	r := &verdict.Report{Schema: verdict.SchemaV1, Original: verdict.OriginalRef{Bundle: "pub.tar", RunManifest: d, Authenticated: true, SignedBy: []string{"sha256:k"}},
		ReproductionDir: "repro", ReproductionManifestDigest: d, Margin: 0.1, Alpha: 0.05, Definitions: "benchseal", Boundary: "client-streaming",
		Repeats: verdict.RepeatCounts{Original: 4, Reproduction: 4}, Limits: []string{"hardware differs: A100 vs H100"}, Notes: []string{"note <b>"}}
	r.Claims = []verdict.ClaimVerdict{
		{Point: "c4", Metric: "ttft_ns.p50", Paths: []string{"ttft_ns.p50"}, Kind: verdict.KindRatio, Claimed: f(3e7), Original: []float64{3e7, 3.1e7}, Reproduced: []float64{3e7, 3.05e7},
			OriginalMedian: f(3.05e7), ReproducedMedian: f(3.025e7), Ratio: f(0.99), Lo: f(0.97), Hi: f(1.02), Confidence: f(0.9), Verdict: verdict.Reproduced},
		{Point: "c4", Metric: "request_throughput", Paths: []string{"request_throughput"}, Kind: verdict.KindRatio, Claimed: f(36), Original: []float64{36}, Reproduced: []float64{108},
			OriginalMedian: f(36), ReproducedMedian: f(108), Ratio: f(3), Lo: f(2.8), Hi: f(3.2), Confidence: f(0.9), Verdict: verdict.NotReproduced},
		{Point: "c4", Metric: "e2e_ns.p50", Paths: []string{"e2e_ns.p50"}, Kind: verdict.KindRatio, Claimed: f(1e8), Original: []float64{1e8}, Reproduced: []float64{1e8},
			OriginalMedian: f(1e8), ReproducedMedian: f(1e8), Ratio: f(1), Verdict: verdict.Inconclusive, RepeatsNeeded: 3, Reason: "too few repeats"},
		{Point: "c4", Metric: "counts.sent", Paths: []string{"counts.sent"}, Kind: verdict.KindExact, Claimed: f(16), Original: []float64{16}, Reproduced: []float64{16},
			OriginalMedian: f(16), ReproducedMedian: f(16), Verdict: verdict.Reproduced},
		{Point: "c1", Metric: "counts.ok", Paths: []string{"counts.ok"}, Kind: verdict.KindExact, ClaimedPerRepeat: []float64{24, 23}, Original: []float64{24, 23}, Reproduced: []float64{23, 24},
			OriginalMedian: f(23.5), ReproducedMedian: f(23.5), Verdict: verdict.Reproduced},
		{Point: "c4", Metric: "goodput", Paths: []string{"goodput"}, Kind: verdict.KindRatio, Original: []float64{3}, Reproduced: []float64{},
			OriginalMedian: f(3), Verdict: verdict.Inconclusive, Reason: "the reproduction's records do not determine it"},
	}
	r.Overall, r.Counts, r.Withheld = verdict.Overall(r.Claims, nil)
	return r
}

// TestReproduceOutputs: the JSON validates against its published schema;
// text, Markdown and HTML print the table, the overall verdict and the
// limits, in display units, with publisher text escaped.
func TestReproduceOutputs(t *testing.T) {
	r := sampleReproduction()
	if r.Overall != verdict.NotReproduced || r.Counts != (verdict.VerdictCounts{Reproduced: 3, NotReproduced: 1, Inconclusive: 2}) {
		t.Fatalf("overall %s counts %+v", r.Overall, r.Counts)
	}
	sch, err := OutputSchema(SchemaReproduce)
	if err != nil {
		t.Fatal(err)
	}
	doc, err := jsonschema.UnmarshalJSON(bytes.NewReader(sch))
	if err != nil {
		t.Fatal(err)
	}
	c := jsonschema.NewCompiler()
	c.DefaultDraft(jsonschema.Draft2020)
	if err := c.AddResource("https://benchseal.dev/schema/reproduce/v1", doc); err != nil {
		t.Fatal(err)
	}
	s := c.MustCompile("https://benchseal.dev/schema/reproduce/v1")
	outs := map[Format]string{}
	for _, f := range []Format{FormatJSON, FormatText, FormatMarkdown, FormatHTML} {
		var b bytes.Buffer
		if err := WriteReproduce(&b, f, r); err != nil {
			t.Fatal(err)
		}
		outs[f] = b.String()
	}
	v, err := jsonschema.UnmarshalJSON(strings.NewReader(outs[FormatJSON]))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Validate(v); err != nil {
		t.Errorf("JSON does not match its schema: %v\n%s", err, outs[FormatJSON])
	}
	for _, want := range []string{"30.500 ms", "30.250 ms", "0.990 [0.970, 1.020]", "36.000 req/s", "NOT REPRODUCED", "INCONCLUSIVE (about 3 reproduction repeats needed): too few repeats", "23..24", "hardware differs: A100 vs H100", "[0.909, 1.100]", "1.000 (no interval)"} {
		for _, f := range []Format{FormatText, FormatMarkdown, FormatHTML} {
			if !strings.Contains(strings.ReplaceAll(outs[f], `\`, ""), want) { // Markdown escapes brackets
				t.Errorf("%s lacks %q", f, want)
			}
		}
	}
	if !strings.HasSuffix(outs[FormatText], "\nNOT REPRODUCED (3 reproduced, 1 not reproduced, 2 inconclusive)\n") {
		t.Errorf("text does not end with the overall verdict:\n%s", outs[FormatText])
	}
	if strings.Contains(outs[FormatText], "23.5") || !strings.Contains(outs[FormatJSON], `"claimed": null`) || !strings.Contains(outs[FormatJSON], `"claimed_per_repeat": [`) {
		t.Errorf("a count's median or a made-up claimed value is printed:\n%s", outs[FormatText])
	}
	if strings.Contains(outs[FormatHTML], "note <b>") || !strings.Contains(outs[FormatHTML], "note &lt;b&gt;") {
		t.Error("HTML does not escape a note")
	}
	if err := WriteReproduce(&bytes.Buffer{}, FormatCSV, r); err == nil {
		t.Error("CSV accepted")
	}
}
