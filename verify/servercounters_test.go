package verify_test

import (
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/simulator"
	"github.com/benchseal/benchseal/verify"
)

// The forgeries here are ones a run's own /metrics scrapes contradict:
// the engine's counters between a point's scrapes against the records.

// editWorkload rewrites every workload item of fr with edit, and the
// manifest's workload digest with it, as a key holder would.
func (fr *forgeRun) editWorkload(t *testing.T, edit func(item map[string]any)) {
	t.Helper()
	p := filepath.Join(fr.dir, schema.WorkloadFile)
	raw, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	for _, line := range bytes.Split(bytes.TrimSpace(raw), []byte("\n")) {
		var item map[string]any
		if err := json.Unmarshal(line, &item); err != nil {
			t.Fatal(err)
		}
		edit(item)
		b, _ := json.Marshal(item)
		out.Write(append(b, '\n'))
	}
	if err := os.WriteFile(p, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	h := sha256.Sum256(out.Bytes())
	fr.m.Workload.SHA256 = hex.EncodeToString(h[:])
}

// inflateOutput is the ×16 output-token forgery: every ok record's
// output_tokens ×16 after raising, consistently, every workload item's
// output_tokens, the point's output_tokens, decoding.max_tokens and
// min_tokens and the workload's output statistics (each record still
// holds its own chunks).
func (fr *forgeRun) inflateOutput(t *testing.T, k int) {
	t.Helper()
	fr.editWorkload(t, func(item map[string]any) {
		if v, ok := item["output_tokens"].(float64); ok {
			item["output_tokens"] = v * float64(k)
		}
	})
	d := &fr.m.Decoding
	d.MaxTokens, d.MinTokens = k*d.MaxTokens, k*d.MinTokens
	for i := range fr.m.Load.Points {
		fr.m.Load.Points[i].OutputTokens *= k
	}
	if w := fr.m.Workload.OutputTokens; w != nil {
		w.Min, w.Max, w.Mean = k*w.Min, k*w.Max, float64(k)*w.Mean
	}
	for _, r := range fr.recs {
		if r.Status == schema.StatusOK {
			r.OutputTokens *= int64(k)
			r.ChunkTokens = nil
		}
	}
}

// TestForgedOutputTokensContradictTheEngineCounters: output tokens ×16
// with the workload items, the point, max_tokens and min_tokens edited to
// match verified (output-token throughput ×16, TPOT ÷16), though the
// bundle's scrapes show the engine generated a sixteenth of them. Both
// simulator flavors: vLLM's generation_tokens_total and llama.cpp's
// tokens_predicted_total.
func TestForgedOutputTokensContradictTheEngineCounters(t *testing.T) {
	plan := capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 4, Requests: 120}}, Seed: 7, InputTokens: 32, OutputTokens: 32}
	for _, c := range []struct{ flavor, counter string }{
		{simulator.FlavorVLLM, "vllm:generation_tokens_total"},
		{simulator.FlavorLlamaCpp, "llamacpp:tokens_predicted_total"},
	} {
		t.Run(c.flavor, func(t *testing.T) {
			fr := captureFlavor(t, plan, 0.01, c.flavor, true, nil)
			fr.write(t)
			wantVerified(t, fr)
			bundle := fr.pack(t)
			fr.inflateOutput(t, 16)
			verr, res, err := fr.forge(t, bundle)
			wantRejected(t, verr, res, err, c.counter)
			wantRejected(t, verr, res, err, `point "c4" repeat 0`)
		})
	}
}

// TestForgedInputAndRequestCountsContradictTheEngineCounters: input
// tokens ×2 (within the item's stated length and the template allowance)
// and invented requests (records copied under new ids) against the
// engine's prompt-token and request counters; and requests removed
// (the slowest quarter dropped, a run cut short; the last two dropped
// with the plan lowered to match) against its count of finished
// requests.
func TestForgedInputAndRequestCountsContradictTheEngineCounters(t *testing.T) {
	plan := capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 4, Requests: 120}}, Seed: 7, InputTokens: 200, OutputTokens: 16}
	cases := []struct {
		name string
		edit func(fr *forgeRun)
		want string
	}{
		{"input ×2", func(fr *forgeRun) {
			for _, r := range fr.recs {
				r.InputTokens = r.InputTokens*2 - r.InputTokens/2
			}
		}, "vllm:prompt_tokens_total"},
		{"slowest quarter dropped", func(fr *forgeRun) {
			slices.SortFunc(fr.recs, func(a, b *schema.Record) int { return int((b.EndNS - b.SentNS) - (a.EndNS - a.SentNS)) })
			fr.recs = fr.recs[len(fr.recs)/4:]
			fr.m.Load.Points[0].Requests = len(fr.recs)
			fr.m.Incomplete, fr.m.IncompleteReason = true, "interrupted"
		}, "vllm:request_success_total"},
		// Two fewer than the point's concurrency + 1 that the earlier
		// bound allowed from elsewhere: only the preflight probe is.
		{"the last two requests dropped, the plan lowered to match", func(fr *forgeRun) {
			fr.dropLast(2)
		}, "vllm:request_success_total"},
		// One, which the probe's allowance covers, generated more than
		// the probe's max_tokens.
		{"the last request dropped, the plan lowered to match", func(fr *forgeRun) {
			fr.dropLast(1)
		}, "vllm:generation_tokens_total"},
		// llama.cpp counts no requests: only its generated tokens show it.
		{"llama.cpp: the last request dropped, the plan lowered to match", func(fr *forgeRun) {
			fr.dropLast(1)
		}, "llamacpp:tokens_predicted_total"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			flavor := ""
			if strings.HasPrefix(c.name, "llama.cpp") {
				flavor = simulator.FlavorLlamaCpp
			}
			fr := captureFlavor(t, plan, 0.01, flavor, true, nil)
			fr.write(t)
			wantVerified(t, fr)
			bundle := fr.pack(t)
			c.edit(fr)
			verr, res, err := fr.forge(t, bundle)
			wantRejected(t, verr, res, err, c.want)
		})
	}
}

// dropLast removes the last n measured records sent, as a run that
// stopped before sending them would lack them, and lowers the point's
// declared requests to match.
func (fr *forgeRun) dropLast(n int) {
	slices.SortFunc(fr.recs, func(a, b *schema.Record) int { return cmp.Compare(a.SentNS, b.SentNS) })
	fr.recs = fr.recs[:len(fr.recs)-n]
	fr.m.Load.Points[0].Requests = len(fr.recs)
	if ss := fr.m.ServerState; ss != nil {
		for i := range ss.Points {
			ss.Points[i].Cache = nil
		}
	}
}

// TestForgedOpenLoopRetimingContradictsTheScrapes: a 20 req/s open-loop
// capture (80 requests, 4 s) moved onto the 200 req/s schedule slots of the same seed
// (scheduled_ns and sent_ns from that schedule, every latency kept) and
// relabelled verified at 10× the request rate. The records then end long
// before the scrape after the point was sent; with scrapes during the
// point, the engine's count of finished requests at each contradicts
// them too.
func TestForgedOpenLoopRetimingContradictsTheScrapes(t *testing.T) {
	for _, c := range []struct {
		name     string
		interval float64 // seconds between scrapes during the point
		want     string
	}{
		{"before and after only", 0, "after its last request ended"},
		{"scrapes during", 0.25, "vllm:request_success_total"},
	} {
		t.Run(c.name, func(t *testing.T) {
			mod := func(o *capture.Options) {
				if c.interval > 0 {
					o.ServerMetricsInterval = time.Duration(c.interval * float64(time.Second))
				}
			}
			plan := func(rate float64) capture.Plan {
				return capture.Plan{Mode: schema.ModeRate, Points: []schema.Point{{Rate: rate, Arrival: schema.ArrivalConstant, Requests: 80}}, Seed: 7, InputTokens: 32, OutputTokens: 8}
			}
			slow := captureFlavor(t, plan(20), 0.01, "", true, mod)
			slow.write(t)
			wantVerified(t, slow)
			bundle := slow.pack(t)
			fast := captureFlavor(t, plan(200), 0.01, "", false, nil)
			slow.retime(t, fast)
			verr, res, err := slow.forge(t, bundle)
			wantRejected(t, verr, res, err, c.want)
		})
	}
}

// retime moves fr's records onto the schedule slots of fast (the same
// items at a higher rate) and relabels the point as fast's.
func (fr *forgeRun) retime(t *testing.T, fast *forgeRun) {
	t.Helper()
	slot := map[int64]*schema.Record{}
	for _, r := range fast.recs {
		slot[*r.Item] = r
	}
	old, p := fr.m.Load.Points[0].Name, fast.m.Load.Points[0]
	for _, r := range fr.recs {
		f := slot[*r.Item]
		d := r.SentNS - *r.ScheduledNS
		lat := r.EndNS - r.SentNS
		s := *f.ScheduledNS
		r.ScheduledNS = &s
		r.SentNS = s + d
		r.EndNS = r.SentNS + lat
		r.Point = p.Name
		r.ID = p.Name + strings.TrimPrefix(r.ID, old)
	}
	fr.m.Load.Points[0].Name, fr.m.Load.Points[0].Rate = p.Name, p.Rate
	if sm := fr.m.ServerMetrics; sm != nil {
		for i := range sm.Scrapes {
			if sm.Scrapes[i].Point == old {
				sm.Scrapes[i].Point = p.Name
			}
		}
	}
	if ss := fr.m.ServerState; ss != nil {
		for i := range ss.Points {
			if ss.Points[i].Point == old {
				ss.Points[i].Point = p.Name
			}
		}
	}
}

// TestOpenLoopRetimingWithoutScrapesIsSaidUnverified: without scrapes
// nothing but the records places an open-loop run's sends in time, so the
// same re-timing verifies, and verify says what it could not check.
func TestOpenLoopRetimingWithoutScrapesIsSaidUnverified(t *testing.T) {
	plan := func(rate float64) capture.Plan {
		return capture.Plan{Mode: schema.ModeRate, Points: []schema.Point{{Rate: rate, Arrival: schema.ArrivalConstant, Requests: 20}}, Seed: 7, InputTokens: 32, OutputTokens: 8}
	}
	slow := captureFlavor(t, plan(40), 0.01, "", false, nil)
	slow.write(t)
	bundle := slow.pack(t)
	fast := captureFlavor(t, plan(400), 0.01, "", false, nil)
	slow.retime(t, fast)
	verr, res, err := slow.forge(t, bundle)
	if verr != nil || err != nil || !res.Verified {
		t.Fatalf("validate %v, verify %v: the re-timing is not detectable without scrapes, and the test should show it", verr, err)
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "open-loop timing: no server-metrics scrapes") }) {
		t.Errorf("verify's warnings do not say the open-loop timing is unverified: %q", res.Warnings)
	}
}

// TestHonestCapturesAgreeWithTheirEngineCounters: honest captures with
// scrapes taken often during every point (both simulator flavors, closed
// and open loop, warmup, several repeats, at a time scale where requests
// last tens of milliseconds, long enough even on a loaded machine for the 20 ms
// scrapes to fall inside every point) validate and verify: the tolerances of
// the counter and scrape-instant checks hold for them.
func TestHonestCapturesAgreeWithTheirEngineCounters(t *testing.T) {
	often := func(o *capture.Options) { o.ServerMetricsInterval = 20 * time.Millisecond }
	for _, flavor := range []string{simulator.FlavorVLLM, simulator.FlavorLlamaCpp} {
		for _, c := range []struct {
			name string
			plan capture.Plan
		}{
			{"closed c1,c16", capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 1, Requests: 60}, {Concurrency: 16, Requests: 200}}, Repeats: 2, Seed: 3, InputTokens: 32, OutputTokens: 16}},
			{"closed c8 warmup", capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 8, Requests: 400}}, Warmup: schema.Warmup{Requests: 16}, Seed: 3, InputTokens: 32, OutputTokens: 16}},
			{"rate 300 poisson", capture.Plan{Mode: schema.ModeRate, Points: []schema.Point{{Rate: 300, Arrival: schema.ArrivalPoisson, Requests: 150}}, Seed: 3, InputTokens: 32, OutputTokens: 16}},
		} {
			t.Run(flavor+" "+c.name, func(t *testing.T) {
				fr := captureFlavor(t, c.plan, 0.02, flavor, true, often)
				if n := len(fr.m.ServerMetrics.Scrapes); n < 6 {
					t.Fatalf("only %d scrapes: the test needs scrapes during the points", n)
				}
				fr.write(t)
				wantVerified(t, fr)
			})
		}
	}
}

// TestScrapesWithoutFromNSAreInvalidOrSaidUnverified: from_ns is what the
// scrape-instant checks (records end before the scrape after the point is
// sent, and it follows the last end within schema.AfterScrapeSlackNS) read.
// A capture states it on every scrape, so one deleted beside the others is
// a contradiction, and so is every one deleted from a run whose
// client.capture_revision promises it. Deleted together with the revision,
// the run reads as one from before from_ns was recorded: it verifies, but
// every claim on its points is UNVERIFIED (a c4 capture re-laid as c16
// recomputes to its forged claims), and verify says which checks were not
// made.
func TestScrapesWithoutFromNSAreInvalidOrSaidUnverified(t *testing.T) {
	plan := capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 2, Requests: 8}}, Seed: 7, InputTokens: 32, OutputTokens: 8}
	fr := captureFlavor(t, plan, 0.01, "", true, nil)
	fr.write(t)
	one, all, older := fr.pack(t), fr.pack(t), fr.pack(t)
	ss := fr.m.ServerMetrics.Scrapes
	if len(ss) < 2 || countFromNS(ss) != len(ss) || fr.m.Client.CaptureRevision != schema.CaptureRevision {
		t.Fatalf("the capture's scrapes do not all state from_ns, or it states no revision (%d): %+v", fr.m.Client.CaptureRevision, ss)
	}
	ss[len(ss)-1].FromNS = nil
	verr, res, err := fr.forge(t, one)
	wantRejected(t, verr, res, err, "scrapes state from_ns")
	for i := range ss {
		ss[i].FromNS = nil
	}
	verr, res, err = fr.forge(t, all)
	wantRejected(t, verr, res, err, "from_ns removed from the run")
	fr.m.Client.CaptureRevision = 0
	verr, res, err = fr.forge(t, older)
	if verr != nil || err != nil || !res.Verified {
		t.Fatalf("validate %v, verify %v: a run whose scrapes state no from_ns and that states no revision reads as an older run and should verify", verr, err)
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "scrape timing: no scrape states from_ns") }) {
		t.Errorf("verify's warnings do not say the scrape timing is unverified: %q", res.Warnings)
	}
	wantAllUnverified(t, res, "does not state from_ns")
}

// wantAllUnverified fails unless res has claims and every one but
// counts.sent (the number of records, which they alone fix) is UNVERIFIED
// with a reason holding why.
func wantAllUnverified(t *testing.T, res *verify.Result, why string) {
	t.Helper()
	if len(res.Claims) < 2 {
		t.Fatal("no claims checked")
	}
	for _, c := range res.Claims {
		if c.Metric == "counts.sent" {
			continue
		}
		if c.Outcome != schema.ClaimNotRecomputable || !strings.Contains(c.Reason, why) {
			t.Errorf("claim %s %s: %s (%s), want not recomputable because %q", c.Point, c.Metric, c.Outcome, c.Reason, why)
		}
	}
}

// TestClosedLoopRunWithoutScrapesIsSaidUnverified: with no scrapes nothing
// cross-checks the records' counts against the engine nor places the
// points in time, and verify says so for a closed-loop run as it does for
// an open-loop one, with every claim UNVERIFIED.
func TestClosedLoopRunWithoutScrapesIsSaidUnverified(t *testing.T) {
	plan := capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 2, Requests: 8}}, Seed: 7, InputTokens: 32, OutputTokens: 8}
	fr := captureFlavor(t, plan, 0.01, "", false, nil)
	fr.write(t)
	bundle := fr.pack(t)
	verr, res, err := fr.forge(t, bundle)
	if verr != nil || err != nil || !res.Verified {
		t.Fatalf("validate %v, verify %v", verr, err)
	}
	if !slices.ContainsFunc(res.Warnings, func(w string) bool { return strings.Contains(w, "server counters: no server-metrics scrapes") }) {
		t.Errorf("verify's warnings do not say the records' counts are not cross-checked: %q", res.Warnings)
	}
	wantAllUnverified(t, res, "no stored server-metrics scrape was taken both before and after it")
}

// TestScrapesRemovedFromASimulatedRunAreInvalid: output tokens ×16 with
// manifest.server_metrics and the scrapes deleted (server_state.fresh with
// them) verified, 21 claims MATCHED. A capture of revision 1 with
// --simulate scrapes the simulator, which always answers, so no scrape
// contradicts its own command line; with the revision deleted as well
// the records' tokens per chunk still contradict the simulator.
func TestScrapesRemovedFromASimulatedRunAreInvalid(t *testing.T) {
	plan := capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 4, Requests: 40}}, Seed: 7, InputTokens: 32, OutputTokens: 32}
	fr := captureFlavor(t, plan, 0.01, "", true, nil)
	fr.m.Client.CommandLine = []string{"benchseal", "capture", "--concurrency=4", "--out=run", "--requests=40", "--simulate=true"}
	fr.write(t)
	wantVerified(t, fr)
	bundle, older := fr.pack(t), fr.pack(t)
	fr.inflateOutput(t, 16)
	fr.m.ServerMetrics = nil
	if fr.m.ServerState != nil {
		fr.m.ServerState.Fresh = nil
	}
	if err := os.RemoveAll(filepath.Join(fr.dir, schema.AttachmentsDir, schema.ServerMetricsDir)); err != nil {
		t.Fatal(err)
	}
	verr, res, err := fr.forge(t, bundle)
	wantRejected(t, verr, res, err, "scrapes removed from the run")
	// Without a revision the run reads as an older one (it verified with
	// every claim UNVERIFIED); its records still hold 16 tokens per
	// content chunk, and the in-process simulator sends one.
	fr.m.Client.CaptureRevision = 0
	verr, res, err = fr.forge(t, older)
	wantRejected(t, verr, res, err, "sends one token per chunk")
}

func countFromNS(ss []schema.Scrape) int {
	n := 0
	for _, s := range ss {
		if s.FromNS != nil {
			n++
		}
	}
	return n
}

// TestFakeCounterResetDoesNotSwitchOffTheCounterCheck: output tokens ×16
// (as above) with every counter of the point's before scrape raised by
// 1e9, so that they go down to the after scrape as if the engine had
// restarted, and the scrape's sha256 in the manifest to match. The rise
// from the scrape taken before that one (here the fresh scrape before the
// run) still bounds the records from below.
func TestFakeCounterResetDoesNotSwitchOffTheCounterCheck(t *testing.T) {
	plan := capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 4, Requests: 60}}, Seed: 7, InputTokens: 32, OutputTokens: 32}
	fr := captureFlavor(t, plan, 0.01, simulator.FlavorVLLM, true, nil)
	fr.write(t)
	wantVerified(t, fr)
	fr.inflateOutput(t, 16)
	ss := fr.m.ServerMetrics.Scrapes
	i := slices.IndexFunc(ss, func(s schema.Scrape) bool { return s.When == schema.ScrapeBefore })
	if i < 0 {
		t.Fatal("no before scrape")
	}
	name := filepath.Join(fr.dir, schema.AttachmentsDir, ss[i].File)
	raw, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	for k, l := range lines {
		f := strings.Fields(l)
		if len(f) != 2 || !strings.HasPrefix(l, "vllm:") || !strings.Contains(f[0], "_total") {
			continue
		}
		v, err := strconv.ParseFloat(f[1], 64)
		if err != nil {
			t.Fatal(err)
		}
		lines[k] = f[0] + " " + strconv.FormatFloat(v+1e9, 'f', -1, 64)
	}
	edited := []byte(strings.Join(lines, "\n"))
	if err := os.WriteFile(name, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(edited)
	ss[i].SHA256 = hex.EncodeToString(sum[:])
	fr.write(t)
	err = validateRun(fr.dir)
	if err == nil || !strings.Contains(err.Error(), "vllm:generation_tokens_total") || !strings.Contains(err.Error(), "went down from the point's before scrape") {
		t.Fatalf("validate: want the generation-token counter counted from the scrape before, got %v", err)
	}
}

// TestWarmCacheForgedColdContradictsTheCacheCounter: a llama.cpp run whose
// second point found its prompts cached (the same prompts as the first),
// presented cold: every record's cached_tokens and cache_n zeroed and
// prompt_n raised by as much, server_state's cache sums zeroed and each
// point labelled empty. The two prompt counters' sum still agrees with the
// records, but the engine's prompt_tokens_cached_total rose by the tokens
// it reused; before, the forgery verified and compared as cold beside an
// honest cold run.
func TestWarmCacheForgedColdContradictsTheCacheCounter(t *testing.T) {
	plan := capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 1, Requests: 8}, {Concurrency: 2, Requests: 8}}, Seed: 1, InputTokens: 32, OutputTokens: 8}
	fr := captureFlavor(t, plan, 0.01, simulator.FlavorLlamaCpp, true, nil)
	wantVerified(t, fr)
	ss := fr.m.ServerState
	if ss == nil || len(ss.Points) != 2 || ss.Points[1].PrefixCache != schema.PrefixCacheWarm {
		t.Fatalf("fixture: server_state %+v, want the second point warm", ss)
	}
	bundle := fr.pack(t)
	for _, r := range fr.recs {
		s := r.Server
		if s == nil || s.CachedTokens == nil {
			continue
		}
		zero := int64(0)
		if s.PromptN != nil && s.CacheN != nil {
			n := *s.PromptN + *s.CacheN
			s.PromptN = &n
		}
		s.CachedTokens, s.CacheN = &zero, &zero
	}
	for i := range ss.Points {
		ss.Points[i].PrefixCache = schema.PrefixCacheEmpty
		if c := ss.Points[i].Cache; c != nil {
			c.CachedTokens, c.FirstCached = 0, 0
		}
	}
	verr, res, err := fr.forge(t, bundle)
	wantRejected(t, verr, res, err, "llamacpp:prompt_tokens_cached_total")
	wantRejected(t, verr, res, err, "served from the cache")
}

// TestRelabelledTokenCountsStillMeetThePromptCounter: client.token_counts
// is the signer's label; relabelled chunk-count-estimate, input tokens ×2
// verified (the prompt-token counter was compared only for server-usage).
func TestRelabelledTokenCountsStillMeetThePromptCounter(t *testing.T) {
	plan := capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 4, Requests: 60}}, Seed: 7, InputTokens: 200, OutputTokens: 16}
	fr := captureFlavor(t, plan, 0.01, "", true, nil)
	fr.write(t)
	wantVerified(t, fr)
	bundle := fr.pack(t)
	fr.m.Client.TokenCounts = "chunk-count-estimate"
	for _, r := range fr.recs {
		r.InputTokens = r.InputTokens*2 - r.InputTokens/2
	}
	verr, res, err := fr.forge(t, bundle)
	wantRejected(t, verr, res, err, "vllm:prompt_tokens_total")
}

// TestTokensWithinTheOldCounterSlackContradictTheSettledScrape: the after
// scrape was held to the records less the point's concurrency times the
// largest record, a number the records choose. Output ×2 at N = 2C, and
// one record raised ×16 (its item, the point, max_tokens and min_tokens
// raised with it) so that the others could share C × that record's tokens,
// verified. Capture now sends the after scrape schema.CounterLagNS after
// the last end, when the engine has counted every request, so it must hold
// the records in full.
func TestTokensWithinTheOldCounterSlackContradictTheSettledScrape(t *testing.T) {
	for _, c := range []struct {
		name string
		plan capture.Plan
		edit func(fr *forgeRun)
	}{
		{"output ×2 at N = 2C", capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 4, Requests: 8}}, Seed: 7, InputTokens: 32, OutputTokens: 32}, func(fr *forgeRun) {
			fr.inflateOutput(t, 2)
		}},
		{"one record ×16, the others sharing the slack", capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 4, Requests: 40}}, Seed: 7, InputTokens: 32, OutputTokens: 32}, func(fr *forgeRun) {
			honest := map[*schema.Record]int64{}
			for _, r := range fr.recs {
				honest[r] = r.OutputTokens
			}
			fr.inflateOutput(t, 16)
			big := false
			for _, r := range fr.recs {
				if r.Status != schema.StatusOK {
					continue
				}
				if !big {
					big = true
					continue // keeps its ×16
				}
				r.OutputTokens = honest[r] + 40 // 39 × 40 < 4 × 16 × 32 − 15 × 32
			}
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			fr := captureFlavor(t, c.plan, 0.01, "", true, nil)
			fr.write(t)
			wantVerified(t, fr)
			bundle := fr.pack(t)
			c.edit(fr)
			verr, res, err := fr.forge(t, bundle)
			wantRejected(t, verr, res, err, "vllm:generation_tokens_total")
		})
	}
}

// TestAfterScrapeWithinTheCounterLag: an after scrape sent less than
// schema.CounterLagNS after the point's last end contradicts a capture of
// client.capture_revision 2, which waits that long; under revision 1 it
// is allowed (the engine may not have counted every request yet), but
// then the token counts are held only within a slack the records choose,
// so every claim on the point is UNVERIFIED.
func TestAfterScrapeWithinTheCounterLag(t *testing.T) {
	plan := capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 2, Requests: 8}}, Seed: 7, InputTokens: 32, OutputTokens: 8}
	fr := captureFlavor(t, plan, 0.01, "", true, nil)
	fr.write(t)
	wantVerified(t, fr)
	now, older := fr.pack(t), fr.pack(t)
	var last int64
	for _, r := range fr.recs {
		last = max(last, r.EndNS)
	}
	ss := fr.m.ServerMetrics.Scrapes
	i := slices.IndexFunc(ss, func(s schema.Scrape) bool { return s.When == schema.ScrapeAfter })
	if i < 0 || *ss[i].FromNS-last < schema.CounterLagNS {
		t.Fatalf("fixture: the after scrape %+v is not %d ns after the last end %d", ss, schema.CounterLagNS, last)
	}
	from := last + 1_000_000
	ss[i].FromNS = &from
	verr, res, err := fr.forge(t, now)
	wantRejected(t, verr, res, err, "waits 0.250 s before it")
	fr.m.Client.CaptureRevision = 1
	verr, res, err = fr.forge(t, older)
	if verr != nil || err != nil || !res.Verified {
		t.Fatalf("validate %v, verify %v", verr, err)
	}
	wantAllUnverified(t, res, "within the 0.250 s an engine may take")
}

// TestWarmupEndingInsideTheBeforeScrapesLag: capture waits
// schema.CounterLagNS after a point's warmup before the scrape before the
// point (client.capture_revision 3), so the engine's count of finished
// requests inside the point can hold no warmup request; the point's upper
// bound then allows only the preflight probe from elsewhere. A warmup
// record moved to end just before that scrape contradicts a revision-3
// capture; under revision 2, which did not wait, it is allowed, and so is
// one more request from elsewhere.
func TestWarmupEndingInsideTheBeforeScrapesLag(t *testing.T) {
	plan := capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 4, Requests: 20}}, Warmup: schema.Warmup{Requests: 4}, Seed: 7, InputTokens: 32, OutputTokens: 8}
	fr := captureFlavor(t, plan, 0.01, "", true, nil)
	fr.write(t)
	wantVerified(t, fr)
	now, older := fr.pack(t), fr.pack(t)
	ss := fr.m.ServerMetrics.Scrapes
	i := slices.IndexFunc(ss, func(s schema.Scrape) bool { return s.When == schema.ScrapeBefore })
	var warm *schema.Record
	for _, r := range fr.recs {
		if r.Phase == schema.PhaseWarmup && (warm == nil || r.EndNS > warm.EndNS) {
			warm = r
		}
	}
	if i < 0 || warm == nil || *ss[i].FromNS-warm.EndNS < schema.CounterLagNS {
		t.Fatalf("fixture: the before scrape %+v is not %d ns after the warmup's last end %+v", ss, schema.CounterLagNS, warm)
	}
	warm.EndNS = *ss[i].FromNS - 1_000_000
	first := warm.SentNS
	for _, r := range fr.recs {
		if r.Phase == schema.PhaseWarmup {
			first = min(first, r.SentNS)
		}
	}
	span := warm.EndNS - first // the warmup's stated length, to match
	fr.m.ServerState.Points[0].WarmupNS = &span
	verr, res, err := fr.forge(t, now)
	wantRejected(t, verr, res, err, fmt.Sprintf("1 record(s) (record %q among them) ended less than 0.250 s before the scrape before the point was sent", warm.ID))
	fr.m.Client.CaptureRevision = 2
	verr, res, err = fr.forge(t, older)
	if verr != nil || err != nil || !res.Verified {
		t.Fatalf("revision 2: validate %v, verify %v", verr, err)
	}
}

// TestCounterResetWithinOneProcessIsInvalid: the point's before scrape's
// counters raised by 1e9 (its sha256 to match), so that every counter
// goes down to the after scrape as if the engine had restarted; nothing
// else edited. Both scrapes state the same process_start_time_seconds,
// so the engine did not restart: the edited scrape is a contradiction
// (before, the reset switched the comparison from that scrape off). With
// the before scrape's start time moved too, a restart is what the
// scrapes say: the run verifies, and verify says the counters went down.
func TestCounterResetWithinOneProcessIsInvalid(t *testing.T) {
	for _, restart := range []bool{false, true} {
		t.Run(fmt.Sprintf("restart %v", restart), func(t *testing.T) {
			plan := capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 4, Requests: 20}}, Seed: 7, InputTokens: 32, OutputTokens: 8}
			fr := captureFlavor(t, plan, 0.01, simulator.FlavorVLLM, true, nil)
			fr.write(t)
			wantVerified(t, fr)
			ss := fr.m.ServerMetrics.Scrapes
			i := slices.IndexFunc(ss, func(s schema.Scrape) bool { return s.When == schema.ScrapeBefore })
			if i < 0 {
				t.Fatal("no before scrape")
			}
			name := filepath.Join(fr.dir, schema.AttachmentsDir, ss[i].File)
			raw, err := os.ReadFile(name)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Contains(raw, []byte("\nprocess_start_time_seconds ")) {
				t.Fatal("fixture: the simulator's scrape states no process_start_time_seconds")
			}
			lines := strings.Split(string(raw), "\n")
			for k, l := range lines {
				f := strings.Fields(l)
				if len(f) != 2 {
					continue
				}
				v, err := strconv.ParseFloat(f[1], 64)
				if err != nil {
					continue
				}
				switch {
				case strings.HasPrefix(l, "vllm:") && strings.Contains(f[0], "_total"):
					lines[k] = f[0] + " " + strconv.FormatFloat(v+1e9, 'f', -1, 64)
				case restart && f[0] == "process_start_time_seconds":
					lines[k] = f[0] + " " + strconv.FormatFloat(v-3600, 'f', -1, 64)
				}
			}
			edited := []byte(strings.Join(lines, "\n"))
			if err := os.WriteFile(name, edited, 0o644); err != nil {
				t.Fatal(err)
			}
			sum := sha256.Sum256(edited)
			ss[i].SHA256 = hex.EncodeToString(sum[:])
			fr.write(t)
			verr := validateRun(fr.dir)
			if !restart {
				if verr == nil || !strings.Contains(verr.Error(), "the engine did not restart") {
					t.Fatalf("validate: want the reset within one process refused, got %v", verr)
				}
				return
			}
			if verr != nil {
				t.Fatalf("validate: a restart the scrapes show: %v", verr)
			}
			out := fr.pack(t)
			v := newVerifier(t, nil, verify.WithClaimChecker(replay.ClaimChecker{}))
			res, err := v.Verify(context.Background(), out, verify.Policy{AllowUnsignedUnsafe: true})
			if err != nil || !res.Verified {
				t.Fatalf("verify: %v", err)
			}
			if !slices.ContainsFunc(res.Warnings, func(w string) bool {
				return strings.Contains(w, "UNVERIFIED server counters") && strings.Contains(w, "went down") && strings.Contains(w, "the engine restarted")
			}) {
				t.Errorf("verify's warnings do not say the counters went down: %q", res.Warnings)
			}
		})
	}
}
