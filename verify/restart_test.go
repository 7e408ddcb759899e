package verify_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/simulator"
	"github.com/benchseal/benchseal/verify"
)

// fakeRestart edits the stored scrape fr.m.ServerMetrics.Scrapes[i] as a
// key holder would: every counter series named with prefix raised by
// 1e9 (so it goes down to the next scrape) and, when shift is not 0,
// process_start_time_seconds moved by shift seconds (so the drop reads as
// an engine restart), the manifest's sha256 to match.
func (fr *forgeRun) fakeRestart(t *testing.T, i int, prefix string, shift float64) {
	t.Helper()
	s := &fr.m.ServerMetrics.Scrapes[i]
	name := filepath.Join(fr.dir, schema.AttachmentsDir, s.File)
	raw, err := os.ReadFile(name)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(raw), "\n")
	for k, l := range lines {
		f := strings.Fields(l)
		if len(f) != 2 {
			continue
		}
		v, err := strconv.ParseFloat(f[1], 64)
		switch {
		case err != nil:
		case strings.HasPrefix(l, prefix) && strings.Contains(f[0], "_total"):
			lines[k] = f[0] + " " + strconv.FormatFloat(v+1e9, 'f', -1, 64)
		case shift != 0 && f[0] == "process_start_time_seconds":
			lines[k] = f[0] + " " + strconv.FormatFloat(v+shift, 'f', -1, 64)
		}
	}
	edited := []byte(strings.Join(lines, "\n"))
	if err := os.WriteFile(name, edited, 0o644); err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(edited)
	s.SHA256 = hex.EncodeToString(sum[:])
}

// dropFresh removes server_state.fresh and its scrape from fr.
func (fr *forgeRun) dropFresh(t *testing.T) {
	t.Helper()
	f := fr.m.ServerState.Fresh
	if f == nil || f.Source != schema.StateMeasured {
		t.Fatal("fixture: no measured fresh start")
	}
	if err := os.Remove(filepath.Join(fr.dir, schema.AttachmentsDir, f.Scrape)); err != nil {
		t.Fatal(err)
	}
	fr.m.ServerState.Fresh = nil
}

// firstBefore is the index of the first before scrape of fr.
func (fr *forgeRun) firstBefore(t *testing.T) int {
	t.Helper()
	i := slices.IndexFunc(fr.m.ServerMetrics.Scrapes, func(s schema.Scrape) bool { return s.When == schema.ScrapeBefore })
	if i < 0 {
		t.Fatal("no before scrape")
	}
	return i
}

// verifyClaims packs fr's edited run and verifies it (no key), with the
// claims recomputed.
func (fr *forgeRun) verifyClaims(t *testing.T) *verify.Result {
	t.Helper()
	fr.write(t)
	if err := validateRun(fr.dir); err != nil {
		t.Fatalf("validate: %v", err)
	}
	v := newVerifier(t, nil, verify.WithClaimChecker(replay.ClaimChecker{}))
	res, err := v.Verify(context.Background(), fr.pack(t), verify.Policy{AllowUnsignedUnsafe: true})
	if err != nil || !res.Verified {
		t.Fatalf("verify: %v", err)
	}
	return res
}

// TestFakeRestartLeavesThePointsClaimsUnverified: output ×16, the fresh
// start (the baseline before the point) removed, and the point's before
// scrape's counters raised by 1e9 with its process start time moved, so
// the drop reads as a restart and no counter bounds the records. Before,
// every claim MATCHED (output throughput ×16) beside one warning; now
// every claim of the point but counts.sent is UNVERIFIED, saying why.
func TestFakeRestartLeavesThePointsClaimsUnverified(t *testing.T) {
	plan := capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 4, Requests: 40}}, Seed: 7, InputTokens: 32, OutputTokens: 16}
	fr := captureFlavor(t, plan, 0.01, simulator.FlavorVLLM, true, nil)
	fr.inflateOutput(t, 16)
	fr.dropFresh(t)
	fr.fakeRestart(t, fr.firstBefore(t), "vllm:", -100)
	res := fr.verifyClaims(t)
	if len(res.Claims) == 0 {
		t.Fatal("no claims checked")
	}
	for _, c := range res.Claims {
		switch {
		case c.Metric == "counts.sent":
		case c.Outcome == schema.ClaimMatched:
			t.Errorf("%s %s MATCHED on a point whose counters went down", c.Point, c.Metric)
		case !strings.Contains(c.Reason, "went down") || !strings.Contains(c.Reason, "restarted"):
			t.Errorf("%s %s: reason %q does not say the counters went down across a restart", c.Point, c.Metric, c.Reason)
		}
	}
}

// TestInProcessSimulatorCannotRestart: with --simulate on the command
// line, one scrape's process start time moved (its counters raised
// too, or not) is invalid: the in-process simulator is one process.
func TestInProcessSimulatorCannotRestart(t *testing.T) {
	for _, prefix := range []string{"vllm:", "none"} {
		t.Run(prefix, func(t *testing.T) {
			plan := capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 4, Requests: 20}}, Seed: 7, InputTokens: 32, OutputTokens: 8}
			fr := captureFlavor(t, plan, 0.01, simulator.FlavorVLLM, true, nil)
			fr.m.Client.CommandLine = []string{"benchseal", "capture", "--simulate=true"}
			fr.write(t)
			wantVerified(t, fr)
			fr.fakeRestart(t, fr.firstBefore(t), prefix, -100)
			fr.write(t)
			err := validateRun(fr.dir)
			if err == nil || !strings.Contains(err.Error(), "in-process simulator") || !strings.Contains(err.Error(), "cannot restart") {
				t.Fatalf("validate: want the restart refused, got %v", err)
			}
		})
	}
}

// TestFreshStartRemovedFromASimulatorRunIsInvalid: a --simulate capture
// of client.capture_revision 2 measures the fresh start from its first
// scrape; server_state.fresh and its scrape deleted is invalid.
func TestFreshStartRemovedFromASimulatorRunIsInvalid(t *testing.T) {
	plan := capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 2, Requests: 10}}, Seed: 7, InputTokens: 32, OutputTokens: 8}
	fr := captureFlavor(t, plan, 0.01, simulator.FlavorVLLM, true, nil)
	fr.m.Client.CommandLine = []string{"benchseal", "capture", "--simulate=true"}
	if fr.m.Client.CaptureRevision < 2 {
		t.Fatalf("fixture: capture_revision %d", fr.m.Client.CaptureRevision)
	}
	fr.write(t)
	wantVerified(t, fr)
	fr.dropFresh(t)
	fr.write(t)
	err := validateRun(fr.dir)
	if err == nil || !strings.Contains(err.Error(), "server_state.fresh") || !strings.Contains(err.Error(), "removed from the run") {
		t.Fatalf("validate: want the removed fresh start refused, got %v", err)
	}
}

// TestWarmCacheForgedColdWithAFakeRestartIsUnverified: the warm cache
// presented cold (as TestWarmCacheForgedColdContradictsTheCacheCounter)
// with the warm point's before scrape's llama.cpp counters raised by
// 1e9, which llama.cpp (no process start time) reads as nothing to
// tell. The cached-token bound is not held there, so before, the forgery
// verified with every claim MATCHED; now the point's claims are
// UNVERIFIED.
func TestWarmCacheForgedColdWithAFakeRestartIsUnverified(t *testing.T) {
	plan := capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 1, Requests: 8}, {Concurrency: 2, Requests: 8}}, Seed: 1, InputTokens: 32, OutputTokens: 8}
	fr := captureFlavor(t, plan, 0.01, simulator.FlavorLlamaCpp, true, nil)
	ss := fr.m.ServerState
	for _, r := range fr.recs {
		if s := r.Server; s != nil && s.CachedTokens != nil {
			zero := int64(0)
			if s.PromptN != nil && s.CacheN != nil {
				n := *s.PromptN + *s.CacheN
				s.PromptN = &n
			}
			s.CachedTokens, s.CacheN = &zero, &zero
		}
	}
	for i := range ss.Points {
		ss.Points[i].PrefixCache = schema.PrefixCacheEmpty
		if c := ss.Points[i].Cache; c != nil {
			c.CachedTokens, c.FirstCached = 0, 0
		}
	}
	warm := fr.m.Load.Points[1].Name
	i := slices.IndexFunc(fr.m.ServerMetrics.Scrapes, func(s schema.Scrape) bool {
		return s.When == schema.ScrapeBefore && s.Point == warm
	})
	if i < 0 {
		t.Fatal("no before scrape of the warm point")
	}
	fr.fakeRestart(t, i, "llamacpp:", 0)
	res := fr.verifyClaims(t)
	n := 0
	for _, c := range res.Claims {
		if c.Point != warm || c.Metric == "counts.sent" {
			continue
		}
		n++
		if c.Outcome == schema.ClaimMatched {
			t.Errorf("%s %s MATCHED on a point whose counters went down", c.Point, c.Metric)
		}
	}
	if n == 0 {
		t.Fatalf("no claim on point %s", warm)
	}
}

// TestTokensMovedBetweenRecordsOfASimulatorRun: against the in-process
// simulator (--simulate), one ok record cut to its first and last chunk
// and 2 output tokens, its other tokens given to another record (the
// total kept, so the engine's counter agrees): before, it validated, and
// the run's tpot moved with every claim MATCHED. The cut record is under
// decoding.min_tokens; the raised one holds more tokens than chunks,
// and the simulator sends one token per chunk. (Items and max_tokens say
// 32, min_tokens 16, as a forger edits them.)
func TestTokensMovedBetweenRecordsOfASimulatorRun(t *testing.T) {
	plan := capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 2, Requests: 10}}, Seed: 7, InputTokens: 32, OutputTokens: 16}
	fr := captureFlavor(t, plan, 0.01, simulator.FlavorVLLM, true, nil)
	fr.m.Client.CommandLine = []string{"benchseal", "capture", "--simulate=true"}
	if fr.m.Decoding.MinTokens != 16 {
		t.Fatalf("fixture: decoding.min_tokens %d", fr.m.Decoding.MinTokens)
	}
	fr.write(t)
	wantVerified(t, fr)
	var ok []*schema.Record
	for _, r := range fr.recs {
		if r.Status == schema.StatusOK && r.Phase == schema.PhaseMeasure && len(r.ChunksNS) == int(r.OutputTokens) {
			ok = append(ok, r)
		}
	}
	if len(ok) < 2 {
		t.Fatal("fixture: fewer than 2 ok records")
	}
	// The items, the point, max_tokens and the workload say 32, so the
	// raised record stays under its item's length; min_tokens stays 16.
	fr.editWorkload(t, func(item map[string]any) { item["output_tokens"] = 32 })
	fr.m.Decoding.MaxTokens, fr.m.Load.Points[0].OutputTokens = 32, 32
	if w := fr.m.Workload.OutputTokens; w != nil {
		w.Min, w.Max, w.Mean = 32, 32, 32
	}
	cut, raised := ok[0], ok[1]
	moved := cut.OutputTokens - 2
	cut.ChunksNS = []int64{cut.ChunksNS[0], cut.ChunksNS[len(cut.ChunksNS)-1]}
	cut.OutputTokens, cut.ChunkTokens = 2, nil
	raised.OutputTokens += moved
	raised.ChunkTokens = nil
	fr.write(t)
	err := validateRun(fr.dir)
	for _, want := range []string{"is 2, fewer than decoding.min_tokens 16", "one token per chunk"} {
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("validate: want %q, got %v", want, err)
		}
	}
}
