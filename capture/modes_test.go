package capture_test

import (
	"cmp"
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/simulator"
)

func TestOpenLoopHoldsRateWhenServerIsSlow(t *testing.T) {
	// Each request takes ≥ 300 ms; at 200 req/s a closed-loop client would
	// fall far behind. The open-loop schedule must not.
	ts := fastSim(t, func(c *simulator.Config) {
		c.TimeScale = 1
		c.PrefillBase = 300 * time.Millisecond
		c.PrefillPerToken = 0
		c.DecodeBase = time.Millisecond
		c.MaxRunning = 1000
	})
	o := baseOptions(t, ts.URL)
	o.Plan.Mode = schema.ModeRate
	o.Plan.OutputTokens = 2
	o.Plan.Points = []schema.Point{{Rate: 200, Arrival: schema.ArrivalConstant, Requests: 100}}
	res, err := capture.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	rf := readRun(t, o.OutDir)
	if c := countStatus(rf.recs, ""); c[schema.StatusOK] != 100 {
		t.Fatalf("statuses %v", c)
	}
	c := res.Cells[0]
	t.Logf("offered %.1f/s achieved %.1f/s, send lag p50 %v p99 %v max %v", c.OfferedRate, c.AchievedRate,
		time.Duration(c.SendLagP50), time.Duration(c.SendLagP99), time.Duration(c.SendLagMax))
	// A closed-loop client would fall to a fraction of the offered rate
	// (≈ 3 of 200/s here) and lag by the sum of the service times before
	// it (≈ 30 s at p99). The bounds leave room for a loaded CI machine,
	// where a starved client sends late and then catches up (measured with
	// 8 CPU hogs: achieved 120-190/s, lag p99 120-410 ms);
	// scripts/bench.d/capture.sh measures the real figures. That no request
	// goes out before its time is checked per record below.
	if c.AchievedRate < 0.25*c.OfferedRate {
		t.Errorf("achieved rate %.1f/s, offered %.1f/s", c.AchievedRate, c.OfferedRate)
	}
	if c.SendLagP99 > int64(2*time.Second) {
		t.Errorf("send lag p99 %v", time.Duration(c.SendLagP99))
	}
	// The schedule, not the responses, drives the sends: with every
	// response ≥ 300 ms away and one send due each 5 ms, tens of requests
	// are outstanding at once (one for a client that waits for each
	// answer). Load only bunches the sends, which raises the figure.
	n := maxOutstanding(rf.recs)
	t.Logf("at most %d requests outstanding at once", n)
	if n < 30 {
		t.Errorf("at most %d requests outstanding at once, want ≥ 30 (sends waited for responses)", n)
	}
	// Scheduled times are exactly the constant schedule.
	for _, r := range rf.recs {
		if r.ScheduledNS == nil {
			t.Fatalf("%s: no scheduled_ns in rate mode", r.ID)
		}
		if r.SentNS < *r.ScheduledNS {
			t.Errorf("%s: sent at %d ns, before its scheduled %d ns", r.ID, r.SentNS, *r.ScheduledNS)
		}
	}
	var first, last int64 = 1 << 62, 0
	for _, r := range rf.recs {
		first = min(first, *r.ScheduledNS)
		last = max(last, *r.ScheduledNS)
	}
	if span := time.Duration(last - first); span != 495*time.Millisecond {
		t.Errorf("scheduled span %v, want 495ms", span)
	}
}

// maxOutstanding is the most requests whose [sent_ns, end_ns) overlap.
func maxOutstanding(recs []*schema.Record) int {
	type edge struct {
		at    int64
		delta int
	}
	var es []edge
	for _, r := range recs {
		es = append(es, edge{r.SentNS, 1}, edge{r.EndNS, -1})
	}
	slices.SortFunc(es, func(a, b edge) int { return cmp.Or(cmp.Compare(a.at, b.at), a.delta-b.delta) })
	n, most := 0, 0
	for _, e := range es {
		n += e.delta
		most = max(most, n)
	}
	return most
}

func TestTimeoutAndPlannedCancellationGiveTheirStatuses(t *testing.T) {
	ts := fastSim(t, func(c *simulator.Config) {
		c.TimeScale = 1
		c.PrefillBase = 5 * time.Millisecond
		c.PrefillPerToken = 0
		c.DecodeBase = 20 * time.Millisecond // 8 tokens: ≥ 165 ms
	})
	o := baseOptions(t, ts.URL)
	o.Plan.Points = []schema.Point{{Concurrency: 20, Requests: 20}}
	o.Plan.RequestTimeout = schema.Duration(100 * time.Millisecond)
	o.Plan.Cancel = &capture.Cancel{Fraction: 0.5, After: schema.Duration(30 * time.Millisecond)}
	o.SkipPreflight = true // the probe itself would fail or take the time
	if _, err := capture.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	rf := readRun(t, o.OutDir)
	c := countStatus(rf.recs, "")
	if c[schema.StatusTimeout] == 0 || c[schema.StatusCancelled] == 0 || c[schema.StatusTimeout]+c[schema.StatusCancelled] != 20 {
		t.Fatalf("statuses %v", c)
	}
	for _, r := range rf.recs {
		d := time.Duration(r.EndNS - r.SentNS)
		switch r.Status {
		case schema.StatusTimeout:
			if d < 100*time.Millisecond || d > time.Second {
				t.Errorf("%s: timeout after %v", r.ID, d)
			}
		case schema.StatusCancelled:
			if d < 30*time.Millisecond || d > time.Second || !strings.Contains(r.Error, "plan") {
				t.Errorf("%s: cancelled after %v (%s)", r.ID, d, r.Error)
			}
		}
	}
	if !strings.Contains(rf.m.Notes["cancellation"], "0.5") {
		t.Errorf("cancellation not noted: %v", rf.m.Notes)
	}
}

func TestMaxOutstandingRejectsAndServer429IsRejected(t *testing.T) {
	t.Run("client cap", func(t *testing.T) {
		ts := fastSim(t, func(c *simulator.Config) {
			c.TimeScale = 1
			c.PrefillBase = 50 * time.Millisecond
			c.DecodeBase = time.Millisecond
		})
		o := baseOptions(t, ts.URL)
		o.Plan.Mode = schema.ModeRate
		o.Plan.MaxOutstanding = 2
		o.Plan.Points = []schema.Point{{Rate: 400, Arrival: schema.ArrivalConstant, Requests: 40}}
		if _, err := capture.Run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		rf := readRun(t, o.OutDir)
		c := countStatus(rf.recs, "")
		if c[schema.StatusRejected] < 20 || c[schema.StatusOK] < 2 || c[schema.StatusOK]+c[schema.StatusRejected] != 40 {
			t.Fatalf("statuses %v", c)
		}
		for _, r := range rf.recs {
			if r.Status == schema.StatusRejected && !strings.HasPrefix(r.Error, "client:") {
				t.Errorf("%s: %s", r.ID, r.Error)
			}
		}
	})
	t.Run("server 429", func(t *testing.T) {
		ts := fastSim(t, func(c *simulator.Config) {
			c.TimeScale = 1
			c.PrefillBase = 20 * time.Millisecond
			c.MaxRunning, c.QueueLimit = 1, 0
		})
		o := baseOptions(t, ts.URL)
		o.Plan.Points = []schema.Point{{Concurrency: 4, Requests: 12}}
		if _, err := capture.Run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		rf := readRun(t, o.OutDir)
		c := countStatus(rf.recs, "")
		if c[schema.StatusRejected] == 0 || c[schema.StatusOK] == 0 {
			t.Fatalf("statuses %v", c)
		}
		for _, r := range rf.recs {
			if r.Status == schema.StatusRejected && !strings.Contains(r.Error, "429") {
				t.Errorf("%s: %s", r.ID, r.Error)
			}
		}
	})
}

func TestInBandErrorsAreErrors(t *testing.T) {
	ts := fastSim(t, func(c *simulator.Config) { c.ErrorRate = 1 })
	o := baseOptions(t, ts.URL)
	o.SkipPreflight = true // the probe itself would fail or take the time
	if _, err := capture.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	rf := readRun(t, o.OutDir)
	for _, r := range rf.recs {
		if r.Status != schema.StatusError || !strings.Contains(r.Error, "in-band error") {
			t.Fatalf("%s: %s %q", r.ID, r.Status, r.Error)
		}
	}
}

func TestInterruptFinishesValidIncompleteRun(t *testing.T) {
	ts := fastSim(t, func(c *simulator.Config) {
		c.TimeScale = 1
		c.DecodeBase = 10 * time.Millisecond
	})
	o := baseOptions(t, ts.URL)
	o.Plan.OutputTokens = 1000 // 10 s per request
	o.Plan.Points = []schema.Point{{Concurrency: 4, Requests: 100}}
	o.Grace = 50 * time.Millisecond
	ctx, cancel := context.WithCancelCause(context.Background())
	// Interrupt once all 4 requests are in flight and the manifest on disk
	// says the capture is in progress (a fixed 200 ms timer fired before the
	// first send on a loaded machine). The requests take 10 s each, so a
	// capture that waited for them instead of cancelling them fails the
	// time bound below.
	var sawInProgress bool
	var cancelledAt time.Time
	o.ProgressInterval = 10 * time.Millisecond
	o.Progress = func(p capture.Progress) {
		if p.Final || !cancelledAt.IsZero() {
			return
		}
		if !sawInProgress {
			b, _ := os.ReadFile(filepath.Join(o.OutDir, schema.ManifestFile))
			sawInProgress = strings.Contains(string(b), `"incomplete": true`) && strings.Contains(string(b), "capture in progress")
		}
		if sawInProgress && p.InFlight == 4 {
			cancelledAt = time.Now()
			cancel(context.Canceled)
		}
	}
	// Backstop: a capture that never reports 4 in flight is stopped too and
	// fails below (cancelledAt stays zero).
	backstop := time.AfterFunc(time.Minute, func() { cancel(context.Canceled) })
	defer backstop.Stop()
	o.SkipPreflight = true // the probe itself would fail or take the time
	res, err := capture.Run(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	if cancelledAt.IsZero() {
		t.Fatal("progress never reported 4 requests in flight with the manifest in progress")
	}
	if el := time.Since(cancelledAt); el > 5*time.Second {
		t.Errorf("stop took %v after the interrupt (in-flight requests not cancelled after the grace)", el)
	}
	if !res.Stopped || !sawInProgress {
		t.Errorf("stopped=%v sawInProgress=%v", res.Stopped, sawInProgress)
	}
	rf := readRun(t, o.OutDir)
	if !rf.m.Incomplete || !strings.Contains(rf.m.IncompleteReason, "interrupted") {
		t.Errorf("manifest incomplete=%v reason=%q", rf.m.Incomplete, rf.m.IncompleteReason)
	}
	c := countStatus(rf.recs, "")
	if c[schema.StatusCancelled] != 4 || len(rf.recs) != 4 {
		t.Errorf("statuses %v", c)
	}
}

func TestNonStreamingCompletionsAndPromptsFile(t *testing.T) {
	ts := fastSim(t, nil)
	o := baseOptions(t, ts.URL)
	o.Request.Stream = false
	o.Request.API = capture.APICompletions
	items, err := capture.ReadPrompts(strings.NewReader(`{"prompt":"one two three","output_tokens":5}
{"messages":[{"role":"user","content":"four five"}]}
`), "p.jsonl", 3)
	if err != nil {
		t.Fatal(err)
	}
	o.Prompts = items
	o.Dataset = "p.jsonl"
	o.Plan.Points = []schema.Point{{Concurrency: 2, Requests: 6}}
	if _, err := capture.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	rf := readRun(t, o.OutDir)
	if rf.m.Client.Boundary != schema.BoundaryNonStreaming || rf.m.Decoding.Endpoint != "/v1/completions" || rf.m.Workload.Items != 2 {
		t.Errorf("manifest %+v %+v", rf.m.Client, rf.m.Decoding)
	}
	if pv := rf.m.Provenance; pv.Field(schema.FieldFirstChunk).Usable() || pv.Field(schema.FieldChunks).Status != schema.FieldDerived {
		t.Errorf("provenance %+v: a non-streaming capture must declare first_chunk_ns absent and chunks_ns derived", pv)
	}
	for _, r := range rf.recs {
		want := int64(5)
		if *r.Item != 0 {
			want = 3
		}
		if r.Status != schema.StatusOK || len(r.ChunksNS) != 1 || r.OutputTokens != want {
			t.Errorf("%+v", r)
		}
	}
}

func TestReasoningCountsAsContentAndPerChunkUsageGivesChunkTokens(t *testing.T) {
	ts := fastSim(t, func(c *simulator.Config) {
		c.ReasoningTokens = 4
		c.MaxChunkTokens = 3
		c.KeepAlive = 50 * time.Microsecond // ×0.01 scale
		c.PrefillBase = 10 * time.Millisecond
	})
	o := baseOptions(t, ts.URL)
	o.Request.PerChunkUsage = true
	o.Plan.OutputTokens = 12
	if _, err := capture.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	rf := readRun(t, o.OutDir)
	multi := false
	for _, r := range rf.recs {
		if r.Status != schema.StatusOK || r.OutputTokens != 12 || r.ChunkTokens == nil {
			t.Fatalf("%+v", r)
		}
		if len(r.ChunksNS) < 12 {
			multi = true
		}
	}
	if !multi {
		t.Errorf("no multi-token chunks seen")
	}
}

func TestUnforcedLengthWithoutUsageIsMarkedEstimate(t *testing.T) {
	// A server with no usage: wrap the simulator to drop include_usage.
	ts := fastSim(t, nil)
	o := baseOptions(t, ts.URL)
	o.Request.Stream = true
	o.Request.ForceLength = false
	o.Plan.Points = []schema.Point{{Concurrency: 2, Requests: 4}}
	res, err := capture.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	if res.Manifest.Decoding.IgnoreEOS || res.Manifest.Decoding.MinTokens != 0 {
		t.Errorf("decoding %+v", res.Manifest.Decoding)
	}
}

func TestPlanErrorsAreReportedTogether(t *testing.T) {
	_, err := capture.DecodePlan(strings.NewReader(`{"mode":"rate","points":[{"name":"a","rate":0},{"name":"a","rate":5,"arrival":"zipf","requests":3}],"repeats":-1}`))
	if err == nil {
		t.Fatal("no error")
	}
	for _, want := range []string{"repeats", "rate 0", "duplicate name", "zipf", "set requests or duration"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q: %v", want, err)
		}
	}
	if _, err := capture.DecodePlan(strings.NewReader(`{"mode":"concurrency","points":[{"concurrency":2,"requests":3}],"bogus":1}`)); err == nil {
		t.Error("unknown field accepted")
	}
}

func TestProtocolPresetMatrix(t *testing.T) {
	pts := capture.ProtocolPoints(schema.ModeConcurrency, nil, 0)
	if len(pts) != 16 || pts[0].Name != "in128-out128-c1" || pts[15].Name != "in2048-out1024-c64" || pts[15].Requests != 512 {
		t.Fatalf("%+v", pts)
	}
	p := capture.Plan{Mode: schema.ModeConcurrency, Points: pts}
	if err := p.Normalize(); err != nil {
		t.Fatal(err)
	}
}
