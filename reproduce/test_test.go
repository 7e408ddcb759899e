package reproduce

import (
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/schema"
)

// syntheticManifest is the manifest of a benchseal capture of seeded
// synthetic prompts: what BuildTest rebuilds without a workload file.
func syntheticManifest() *schema.Manifest {
	seed := int64(7)
	temp := 0.5
	m := &schema.Manifest{Schema: schema.ManifestSchemaV1, Evidence: schema.EvidenceSelfRun}
	m.Client = schema.Client{Name: capture.ClientName, Boundary: schema.BoundaryClientStreaming, Seed: &seed}
	m.Decoding = schema.Decoding{Streaming: true, Endpoint: "/v1/chat/completions", IgnoreEOS: true, MinTokens: 4, Temperature: &temp}
	m.Workload = schema.Workload{Dataset: "synthetic", SHA256: strings.Repeat("a", 64),
		OutputTokens: &schema.LengthDist{Kind: "uniform", Spec: "2..6"}}
	m.Load = schema.Load{Mode: schema.ModeConcurrency, Repeats: 3, Generator: schema.GeneratorBenchsealV1,
		Warmup: schema.Warmup{Requests: 2},
		Points: []schema.Point{{Name: "c1", Concurrency: 1, Requests: 4, InputTokens: 8, OutputTokens: 6}, {Name: "c4", Concurrency: 4, Requests: 8, InputTokens: 8, OutputTokens: 6}}}
	m.SLO = schema.SLO{TTFT: schema.Duration(time.Second)}
	m.Notes = map[string]string{"cancellation": "a seeded 0.25 fraction of requests is cancelled by the client 50ms after its send (status cancelled)", "distinct_prompts": "every point × repeat sent synthetic prompts of its own"}
	return m
}

// TestBuildTestRebuildsASyntheticCapture: the load, seed, warmup,
// repeats, cancellations, distinct prompts, length distribution, request
// parameters and SLO all come from the manifest; no items are needed.
func TestBuildTestRebuildsASyntheticCapture(t *testing.T) {
	tt, err := BuildTest(Source{Manifest: syntheticManifest()}, 0)
	if err != nil {
		t.Fatal(err)
	}
	p := tt.Plan
	switch {
	case p.Mode != schema.ModeConcurrency || len(p.Points) != 2 || p.Points[1].Concurrency != 4 || p.Points[1].Requests != 8:
		t.Errorf("points %+v", p.Points)
	case p.Seed != 7 || p.Repeats != 3 || p.Warmup.Requests != 2 || !p.DistinctPrompts:
		t.Errorf("seed %d repeats %d warmup %+v distinct %v", p.Seed, p.Repeats, p.Warmup, p.DistinctPrompts)
	case p.Cancel == nil || p.Cancel.Fraction != 0.25 || time.Duration(p.Cancel.After) != 50*time.Millisecond:
		t.Errorf("cancel %+v", p.Cancel)
	case p.OutputLengths == nil || p.OutputLengths.String() != "2..6":
		t.Errorf("output lengths %v", p.OutputLengths)
	case tt.Prompts != nil:
		t.Errorf("a synthetic workload is regenerated, got %d items", len(tt.Prompts))
	case tt.Request.API != capture.APIChat || !tt.Request.Stream || !tt.Request.ForceLength || tt.Request.Temperature == nil || *tt.Request.Temperature != 0.5:
		t.Errorf("request %+v", tt.Request)
	case tt.SLO.TTFT != schema.Duration(time.Second) || tt.OriginalRepeats != 3 || len(tt.Notes) != 0:
		t.Errorf("slo %+v repeats %d notes %v", tt.SLO, tt.OriginalRepeats, tt.Notes)
	}
	fewer, err := BuildTest(Source{Manifest: syntheticManifest()}, 2)
	if err != nil || fewer.Plan.Repeats != 2 || len(fewer.Notes) != 1 || !strings.Contains(fewer.Notes[0], "2 repeats, fewer than the original's 3") {
		t.Errorf("--repeats 2: %v %+v", err, fewer)
	}
}

// TestBuildTestReadsTheShippedItems: a prompts-file workload is sent from
// the bundle's workload.jsonl, the points stating no lengths of their own.
func TestBuildTestReadsTheShippedItems(t *testing.T) {
	m := syntheticManifest()
	m.Workload.Dataset, m.Workload.OutputTokens = "prompts.jsonl", nil
	delete(m.Notes, "distinct_prompts")
	items := `{"prompt":"hello there","output_tokens":3}` + "\n" + `{"messages":[{"role":"user","content":"hi"}],"output_tokens":5}` + "\n"
	src := Source{Manifest: m, Workload: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(items)), nil }}
	tt, err := BuildTest(src, 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(tt.Prompts) != 2 || tt.Prompts[1].OutputTokens != 5 || tt.Dataset != "prompts.jsonl" {
		t.Errorf("items %+v dataset %q", tt.Prompts, tt.Dataset)
	}
	for _, pt := range tt.Plan.Points {
		if pt.InputTokens != 0 || pt.OutputTokens != 0 {
			t.Errorf("point %s keeps lengths %d/%d", pt.Name, pt.InputTokens, pt.OutputTokens)
		}
	}
}

// TestBuildTestRefusesWhatCannotBeRebuilt: each reason a test cannot be
// rebuilt is named, with the manifest field at fault.
func TestBuildTestRefusesWhatCannotBeRebuilt(t *testing.T) {
	notSynthetic := func(m *schema.Manifest) { m.Workload.Dataset = "prompts.jsonl" }
	cases := []struct {
		name string
		edit func(m *schema.Manifest)
		want string
	}{
		{"hash only", notSynthetic, "ships only the workload's hash (workload.sha256 " + strings.Repeat("a", 64) + "), not its prompts (workload.jsonl)"},
		{"no workload", func(m *schema.Manifest) { notSynthetic(m); m.Workload.SHA256 = "" }, "ships no workload: neither its prompts (workload.jsonl) nor a hash"},
		{"private", func(m *schema.Manifest) { notSynthetic(m); m.Workload.Private = true }, "the workload is private (workload.private)"},
		{"imported without load mode", func(m *schema.Manifest) {
			m.Evidence, m.Source, m.Load.Mode = schema.EvidenceImported, &schema.Source{Tool: "vllm"}, ""
		}, `imported from vllm, whose load mode (load.mode "") is neither concurrency nor rate`},
		{"imported without items", func(m *schema.Manifest) {
			m.Evidence, m.Source = schema.EvidenceImported, &schema.Source{Tool: "aiperf"}
		}, "ships only the workload's hash"},
		{"shard", func(m *schema.Manifest) { m.Shard = &schema.Shard{Index: 1, Count: 2} }, "shard 1 of 2 of a sharded capture (manifest.shard)"},
		{"trace", func(m *schema.Manifest) {
			m.Workload.Trace = &schema.TraceSource{Format: schema.TraceMooncake, File: "t.jsonl"}
		}, "replays the mooncake trace t.jsonl (workload.trace)"},
		{"sessions", func(m *schema.Manifest) {
			m.Workload.Sessions = &schema.SessionSource{Format: schema.ConversationsShareGPT, File: "c.json", Sessions: 6, Turns: 10}
		}, "6 multi-turn sessions of sharegpt c.json (workload.sessions)"},
		{"external", func(m *schema.Manifest) {
			m.Evidence, m.Source, m.External = schema.EvidenceImported, &schema.Source{Tool: "mlperf"}, []schema.ExternalRef{{Kind: "mlperf-inference"}}
		}, "external evidence (manifest.external, mlperf-inference)"},
		{"server timer", func(m *schema.Manifest) { m.Client.Boundary = schema.BoundaryServerTimer }, "boundary is server-timer (client.boundary)"},
		{"no endpoint", func(m *schema.Manifest) { m.Decoding.Endpoint = "" }, "decoding.endpoint is not stated"},
		{"other endpoint", func(m *schema.Manifest) { m.Decoding.Endpoint = "/v1/embeddings" }, `decoding.endpoint "/v1/embeddings"`},
		{"no points", func(m *schema.Manifest) { m.Load.Points = nil }, "load.points is empty"},
		{"unbounded point", func(m *schema.Manifest) { m.Load.Points[1].Requests = 0 }, "load.points[1] c4 states neither requests nor duration"},
		{"cancellation unread", func(m *schema.Manifest) { m.Notes["cancellation"] = "some requests were cancelled" }, "notes.cancellation"},
		{"bad length spec", func(m *schema.Manifest) { m.Workload.OutputTokens.Spec = "lots" }, `workload.output_tokens.spec "lots"`},
		{"load capture refuses", func(m *schema.Manifest) { m.Load.Points[0].Concurrency = 0 }, "its load as capture would run it"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := syntheticManifest()
			c.edit(m)
			_, err := BuildTest(Source{Manifest: m}, 0)
			if !errors.Is(err, ErrNotReproducible) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("error %v, want ErrNotReproducible saying %q", err, c.want)
			}
		})
	}
	if _, err := BuildTest(Source{Manifest: syntheticManifest()}, -1); err == nil {
		t.Error("negative repeats accepted")
	}
}
