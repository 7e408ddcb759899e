package capture_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/servermetrics"
	"github.com/benchseal/benchseal/simulator"
)

// llamaSim serves the simulator as llama.cpp's server: close after each
// stream, a slot prompt cache reported in usage and timings, its
// /metrics, /props and /tokenize.
func llamaSim(t *testing.T, edit func(*simulator.Config)) (*simulator.Server, *httptest.Server) {
	t.Helper()
	cfg := simulator.DefaultConfig()
	cfg.Seed = 3
	cfg.TimeScale = 0.01
	cfg.Flavor = simulator.FlavorLlamaCpp
	cfg.CloseAfterStream = true
	cfg.MaxRunning = 4
	if edit != nil {
		edit(&cfg)
	}
	s, err := simulator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts
}

func llamaOptions(t *testing.T, url string) capture.Options {
	o := baseOptions(t, url)
	o.Plan.Points = []schema.Point{{Concurrency: 1, Requests: 12}, {Concurrency: 4, Requests: 16}}
	o.Plan.Repeats = 2
	return o
}

// TestServerClosingAfterStreamsCausesNoFailure: a server that closes the
// connection after every stream (llama.cpp) made about one request in
// six fail with EOF on the reused connection, although the server never
// saw it. Each such request is now resent once on a fresh connection,
// recorded in retries and the manifest's note, and the server served
// every request exactly once.
func TestServerClosingAfterStreamsCausesNoFailure(t *testing.T) {
	sim, ts := llamaSim(t, nil)
	o := llamaOptions(t, ts.URL)
	o.SkipPreflight = true
	res, err := capture.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	rf := readRun(t, o.OutDir)
	var retried int64
	for _, r := range rf.recs {
		if r.Status != schema.StatusOK {
			t.Errorf("%s: %s %s", r.ID, r.Status, r.Error)
		}
		retried += r.Retries
	}
	if retried == 0 {
		t.Fatal("no request was resent: the simulator did not close its connections under the client")
	}
	served, _ := sim.Stats()
	if served != res.Records {
		t.Errorf("the server served %d requests for %d records: a resend reached it twice or a record has no request", served, res.Records)
	}
	if n := rf.m.Notes["connections"]; !strings.Contains(n, "sent again at once on a fresh connection") {
		t.Errorf("notes.connections = %q", n)
	}
}

// TestServerErrorsAreNeverResent: a request the server answered, even
// with an error, is the server's and is not sent again.
func TestServerErrorsAreNeverResent(t *testing.T) {
	_, ts := llamaSim(t, func(c *simulator.Config) { c.ErrorRate = 1 })
	o := llamaOptions(t, ts.URL)
	o.SkipPreflight = true
	if _, err := capture.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	for _, r := range readRun(t, o.OutDir).recs {
		if r.Status != schema.StatusError || r.Retries != 0 {
			t.Fatalf("%s: status %s retries %d, want the server's error and no resend", r.ID, r.Status, r.Retries)
		}
	}
}

// TestLlamaCppCacheAndTimingsAreRecordedAndTheCacheStateMeasured: every
// record keeps the cached prompt tokens and timings the server reported,
// consistent with its usage, and each point's cache state is measured
// from them: with the same prompts in every point × repeat, all but the
// first are warm (before, all were "unknown").
func TestLlamaCppCacheAndTimingsAreRecordedAndTheCacheStateMeasured(t *testing.T) {
	_, ts := llamaSim(t, nil)
	o := llamaOptions(t, ts.URL)
	if _, err := capture.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	rf := readRun(t, o.OutDir)
	for _, r := range rf.recs {
		s := r.Server
		if s == nil || s.CachedTokens == nil || s.CacheN == nil || s.PromptN == nil || s.PredictedN == nil || s.PromptNS == nil || s.PredictedNS == nil {
			t.Fatalf("%s: server %+v, want every field llama.cpp reports", r.ID, s)
		}
		if *s.CachedTokens != *s.CacheN || *s.PromptN+*s.CacheN != r.InputTokens || *s.PredictedN != r.OutputTokens {
			t.Fatalf("%s: server %+v disagrees with input %d output %d", r.ID, *s, r.InputTokens, r.OutputTokens)
		}
	}
	ss := rf.m.ServerState
	if ss == nil || len(ss.Points) != 4 {
		t.Fatalf("server_state %+v", ss)
	}
	for i, p := range ss.Points {
		if p.Cache == nil || p.PrefixCacheSource != schema.StateMeasured {
			t.Fatalf("point %d: %+v, want a measured state", i, p)
		}
		if i > 0 && (p.PrefixCache != schema.PrefixCacheWarm || p.Cache.CachedTokens*2 < p.Cache.PromptTokens) {
			t.Errorf("point %d (%s r%d): %s with %+v, want warm and mostly cached (the prompts repeat)", i, p.Point, p.Repeat, p.PrefixCache, *p.Cache)
		}
	}
}

// TestLlamaCppSlotsAreErasedAndDistinctPromptsKeepTheCacheEmpty: with
// --reset-prefix-cache capture erases every slot (total_slots from /props)
// before each point × repeat; with distinct prompts and no host prompt
// cache (--cache-ram 0) the engine then reports no cached token at the
// first request of any point, so every state is empty (reset, confirmed
// by the measurement). With the host cache (llama.cpp's default) a slot
// erase leaves the prompts cached: the same prompts sent again are warm,
// measured, although every erase answered 200. Without --slot-save-path
// the server answers 501, recorded with its message, and the state is
// what the engine reported.
func TestLlamaCppSlotsAreErasedAndDistinctPromptsKeepTheCacheEmpty(t *testing.T) {
	t.Run("slot save path", func(t *testing.T) {
		sim, ts := llamaSim(t, func(c *simulator.Config) { c.SlotSave, c.NoHostCache = true, true })
		o := llamaOptions(t, ts.URL)
		o.ResetPrefixCache = true
		o.Plan.DistinctPrompts = true
		o.Request.API = capture.APICompletions // no chat template shared by every prompt
		if _, err := capture.Run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		rf := readRun(t, o.OutDir)
		for i, p := range rf.m.ServerState.Points {
			if p.Reset == nil || !p.Reset.OK || len(p.Reset.Calls) != 4 || p.Reset.Calls[3].Path != "/slots/3?action=erase" {
				t.Fatalf("point %d: reset %+v, want the 4 slots erased", i, p.Reset)
			}
			if p.PrefixCache != schema.PrefixCacheEmpty || p.PrefixCacheSource != schema.StateReset || p.Cache == nil || p.Cache.FirstCached > 1 {
				t.Errorf("point %d: %s (%s) cache %+v, want empty after the reset, confirmed", i, p.PrefixCache, p.PrefixCacheSource, p.Cache)
			}
		}
		if sim.Resets() != 4*4 {
			t.Errorf("%d slots erased, want 16", sim.Resets())
		}
		if rf.m.Notes["distinct_prompts"] == "" {
			t.Error("no note on distinct prompts")
		}
	})
	t.Run("host cache outlives the erase", func(t *testing.T) {
		_, ts := llamaSim(t, func(c *simulator.Config) { c.SlotSave = true })
		o := llamaOptions(t, ts.URL)
		o.ResetPrefixCache = true
		o.Request.API = capture.APICompletions
		if _, err := capture.Run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		p := readRun(t, o.OutDir).m.ServerState.Points[2] // c1 repeat 1: the prompts of repeat 0 again
		if p.Reset == nil || !p.Reset.OK || p.PrefixCache != schema.PrefixCacheWarm || p.PrefixCacheSource != schema.StateMeasured {
			t.Errorf("reset ok %v, state %s (%s), want the erase recorded ok and the cache measured warm", p.Reset != nil && p.Reset.OK, p.PrefixCache, p.PrefixCacheSource)
		}
	})
	t.Run("no slot save path", func(t *testing.T) {
		_, ts := llamaSim(t, nil)
		o := llamaOptions(t, ts.URL)
		o.ResetPrefixCache = true
		if _, err := capture.Run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		p := readRun(t, o.OutDir).m.ServerState.Points[1]
		if p.Reset == nil || p.Reset.OK || p.Reset.Calls[0].Status != 501 || !strings.Contains(p.Reset.Calls[0].Error, "--slot-save-path") {
			t.Fatalf("reset %+v, want the 501 with its message", p.Reset)
		}
		if p.PrefixCacheSource != schema.StateMeasured || p.PrefixCache != schema.PrefixCacheWarm {
			t.Errorf("%s (%s), want warm measured", p.PrefixCache, p.PrefixCacheSource)
		}
	})
}

// TestLlamaCppServerMetricsAreScraped: llama.cpp's names gave no server
// column (auto skipped the scrape, an explicit URL stopped the run); now
// its counters are read and their deltas match the records.
func TestLlamaCppServerMetricsAreScraped(t *testing.T) {
	_, ts := llamaSim(t, nil)
	o := llamaOptions(t, ts.URL)
	o.Plan.Repeats = 1
	o.ServerMetrics = ts.URL + "/metrics"
	if _, err := capture.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	rf := readRun(t, o.OutDir)
	sc := rf.m.ServerMetrics.Scrapes
	if len(sc) < 2 {
		t.Fatalf("%d scrapes", len(sc))
	}
	snap := func(name string) *servermetrics.Snapshot {
		b, err := os.ReadFile(filepath.Join(o.OutDir, schema.AttachmentsDir, filepath.FromSlash(name)))
		if err != nil {
			t.Fatal(err)
		}
		s, err := servermetrics.Parse(strings.NewReader(string(b)))
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	col, err := servermetrics.Delta("", []*servermetrics.Snapshot{snap(sc[0].File), snap(sc[1].File)}, servermetrics.Load{ToNS: 1 << 62})
	if err != nil || col.Engine != servermetrics.EngineLlamaCpp {
		t.Fatalf("column %+v, %v", col, err)
	}
	var in, cached, out int64
	for _, r := range rf.recs {
		if r.Point == sc[0].Point && r.Repeat == sc[0].Repeat {
			n, _ := r.Server.Cached()
			in, cached, out = in+r.InputTokens, cached+n, out+r.OutputTokens
		}
	}
	want := map[string]float64{servermetrics.RolePromptTokens: float64(in - cached), servermetrics.RolePromptTokensCached: float64(cached), servermetrics.RoleGenerationTokens: float64(out)}
	for _, c := range col.Counters {
		if w, ok := want[c.Role]; ok && c.Delta != w {
			t.Errorf("%s: delta %v, records say %v", c.Role, c.Delta, w)
		}
		delete(want, c.Role)
	}
	if len(want) > 0 {
		t.Errorf("counters missing: %v", want)
	}
}

// TestLlamaCppIsDetected: without --set, llama.cpp's server was an
// unknown engine; its owned_by, Server header and /props build_info
// (real answers of llama-server, testdata/llamacpp) now name it, its
// version and its slots.
func TestLlamaCppIsDetected(t *testing.T) {
	models, err := os.ReadFile(filepath.Join("testdata", "llamacpp", "models.json"))
	if err != nil {
		t.Fatal(err)
	}
	props, err := os.ReadFile(filepath.Join("testdata", "llamacpp", "props.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		models bool
		header string
	}{{"all three", true, "llama.cpp"}, {"/props alone", false, ""}, {"Server header and /props", false, "llama.cpp"}} {
		t.Run(tc.name, func(t *testing.T) {
			ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if tc.header != "" {
					w.Header().Set("Server", tc.header)
				}
				switch {
				case r.URL.Path == "/v1/models" && tc.models:
					w.Write(models)
				case r.URL.Path == "/props":
					w.Write(props)
				default:
					http.NotFound(w, r)
				}
			}))
			defer ts.Close()
			si := capture.ProbeServer(context.Background(), ts.Client(), ts.URL, "")
			if si.EngineName != capture.EngineLlamaCpp || si.Speaks != capture.EngineLlamaCpp || si.EngineVersion != "b1-de3ff81" || si.Slots != 4 || si.Simulator {
				t.Errorf("%+v", si)
			}
		})
	}
}

// TestPerChunkUsageNoteSaysWhatTheServerSent: the note claimed per-chunk
// counts a server like llama.cpp never sends (usage on the last chunk
// only); it now says none came.
func TestPerChunkUsageNoteSaysWhatTheServerSent(t *testing.T) {
	_, ts := llamaSim(t, nil)
	o := llamaOptions(t, ts.URL)
	o.Request.PerChunkUsage = true
	o.Plan.Repeats = 1
	if _, err := capture.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	rf := readRun(t, o.OutDir)
	if n := rf.m.Notes["per_chunk_usage"]; !strings.Contains(n, "none of the 28 ok streams") {
		t.Errorf("note %q", n)
	}
	for _, r := range rf.recs {
		if r.ChunkTokens != nil {
			t.Fatalf("%s has chunk_tokens", r.ID)
		}
	}
}

// TestSyntheticPromptsAreNTokensOfTheServedModel: a synthetic prompt of
// input_tokens N was N words, which the server counted as more (here a
// word over five bytes is two tokens, and BOS and the chat template add
// theirs). With the server's tokenizer endpoint each prompt is made
// exactly N tokens as the server counts them, so every record's
// input_tokens (the server's usage) is N, the unit of the failed ones
// too, and the manifest says which unit it is.
func TestSyntheticPromptsAreNTokensOfTheServedModel(t *testing.T) {
	for _, api := range []string{capture.APIChat, capture.APICompletions} {
		t.Run(api, func(t *testing.T) {
			_, ts := llamaSim(t, nil)
			o := llamaOptions(t, ts.URL)
			o.Request.API = api
			o.Plan.InputTokens = 40
			if _, err := capture.Run(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			rf := readRun(t, o.OutDir)
			for _, r := range rf.recs {
				if r.Status == schema.StatusOK && r.InputTokens != 40 {
					t.Fatalf("%s: the server counted %d prompt tokens, want 40", r.ID, r.InputTokens)
				}
			}
			if n := rf.m.Notes[capture.NoteInputTokens]; !strings.Contains(n, "exactly N tokens of the served model") {
				t.Errorf("note %q", n)
			}
			if d := rf.m.Workload.InputTokens; d == nil || d.Min != 40 || d.Max != 40 {
				t.Errorf("workload.input_tokens %+v", d)
			}
			items := readWorkload(t, o.OutDir)
			for i, it := range items {
				if words := len(strings.Fields(it.Prompt)); it.InputTokens != 40 || words >= 40 {
					t.Fatalf("item %d: input_tokens %d, %d words: want 40 tokens, fewer words (some words are two tokens)", i, it.InputTokens, words)
				}
			}
		})
	}
}

// TestPromptsStayWordsWithTheUnitStated: without a tokenizer endpoint
// (the simulator acting as vLLM has none), or when counting fails, the
// prompts stay N words and the manifest says the unit is words.
func TestPromptsStayWordsWithTheUnitStated(t *testing.T) {
	t.Run("no endpoint", func(t *testing.T) {
		ts := httptest.NewServer(mustSim(t))
		t.Cleanup(ts.Close)
		o := baseOptions(t, ts.URL)
		if _, err := capture.Run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		rf := readRun(t, o.OutDir)
		if n := rf.m.Notes[capture.NoteInputTokens]; !strings.Contains(n, "N words of benchseal's vocabulary, not N tokens: the server offered no tokenizer endpoint") {
			t.Errorf("note %q", n)
		}
		for i, it := range readWorkload(t, o.OutDir) {
			if len(strings.Fields(it.Prompt)) != 32 {
				t.Fatalf("item %d: %d words, want 32", i, len(strings.Fields(it.Prompt)))
			}
		}
	})
	t.Run("counting fails", func(t *testing.T) {
		_, ts := llamaSim(t, nil)
		o := llamaOptions(t, ts.URL)
		o.Tokenizer = failingTokenizer{}
		if _, err := capture.Run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		rf := readRun(t, o.OutDir)
		if n := rf.m.Notes[capture.NoteInputTokens]; !strings.Contains(n, "counting them with the server's test tokenizer failed (no tokens today)") {
			t.Errorf("note %q", n)
		}
	})
}

type failingTokenizer struct{}

func (failingTokenizer) Count(context.Context, string) (int, error) {
	return 0, errors.New("no tokens today")
}
func (failingTokenizer) Name() string { return "test tokenizer" }

func readWorkload(t *testing.T, dir string) []capture.Item {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, schema.WorkloadFile))
	if err != nil {
		t.Fatal(err)
	}
	var out []capture.Item
	for _, l := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var it capture.Item
		if err := json.Unmarshal([]byte(l), &it); err != nil {
			t.Fatal(err)
		}
		out = append(out, it)
	}
	return out
}

func mustSim(t *testing.T) *simulator.Server {
	t.Helper()
	cfg := simulator.DefaultConfig()
	cfg.TimeScale = 0.01
	s, err := simulator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestLlamaCppFingerprintIsRecorded: the system_fingerprint llama.cpp
// sends in its answers (its build) is kept in engine.server beside what
// the probe read, streaming or not (the engine's name without --set is
// TestLlamaCppIsDetected's, from real answers; the simulator names
// itself).
func TestLlamaCppFingerprintIsRecorded(t *testing.T) {
	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprint("stream ", stream), func(t *testing.T) {
			_, ts := llamaSim(t, nil)
			o := llamaOptions(t, ts.URL)
			o.Request.Stream = stream
			o.Plan.Points, o.Plan.Repeats = o.Plan.Points[:1], 1
			if _, err := capture.Run(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			m := readRun(t, o.OutDir).m
			if got := m.Engine.Server[capture.ServerFingerprint]; got != simulator.LlamaCppBuildInfo {
				t.Errorf("engine.server.system_fingerprint %q, want %q", got, simulator.LlamaCppBuildInfo)
			}
		})
	}
}

// TestUncountedRequestsTakeTheServersCountOfTheirPrompt: with prompts in
// words (the server has no tokenizer endpoint), a request the server did
// not count (a 429, an in-band error before the usage) kept its prompt's
// word count beside the server's token counts of the ok ones: two units in
// one column. Each now takes the server's count of the same prompt from an
// ok answer of the run, also one that came after it (the records file is
// rewritten), or is 0, uncounted, and the manifest's note says how many.
func TestUncountedRequestsTakeTheServersCountOfTheirPrompt(t *testing.T) {
	_, ts := llamaSim(t, func(c *simulator.Config) {
		c.NoTokenize, c.ErrorRate, c.Seed = true, 0.3, 5
		c.MaxRunning, c.QueueLimit = 2, 1
	})
	o := llamaOptions(t, ts.URL)
	o.SkipPreflight = true
	if _, err := capture.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	rf := readRun(t, o.OutDir)
	count := map[int64]int64{}
	firstOK := map[int64]int64{}
	for _, r := range rf.recs {
		if r.Status != schema.StatusOK {
			continue
		}
		if c, ok := count[*r.Item]; ok && c != r.InputTokens {
			t.Fatalf("item %d counted %d and %d", *r.Item, c, r.InputTokens)
		}
		count[*r.Item] = r.InputTokens
		if e, ok := firstOK[*r.Item]; !ok || r.EndNS < e {
			firstOK[*r.Item] = r.EndNS
		}
		if r.InputTokens == 32 {
			t.Fatalf("%s: the server counted its 32 words as 32 tokens: the test needs a server whose count differs", r.ID)
		}
	}
	status := map[string]int{}
	uncounted, later := 0, 0
	for _, r := range rf.recs {
		if r.Status == schema.StatusOK {
			continue
		}
		status[r.Status]++
		c, ok := count[*r.Item]
		switch {
		case !ok && r.InputTokens != 0:
			t.Errorf("%s (%s): input_tokens %d, but no answer counted its prompt: want 0", r.ID, r.Status, r.InputTokens)
		case !ok:
			uncounted++
		case r.InputTokens != c:
			t.Errorf("%s (%s): input_tokens %d, the server counted its prompt %d", r.ID, r.Status, r.InputTokens, c)
		case r.EndNS+int64(time.Millisecond) < firstOK[*r.Item]:
			later++
		}
	}
	if status[schema.StatusRejected] == 0 || status[schema.StatusError] == 0 || later == 0 {
		t.Fatalf("want 429s, in-band errors and a failure before its prompt's first ok answer: %v, %d later", status, later)
	}
	n := rf.m.Notes[capture.NoteInputTokens]
	if !strings.Contains(n, "every record's input_tokens is the server's count of its prompt") {
		t.Errorf("note %q", n)
	}
	u := rf.m.Notes[capture.NoteUncountedInput]
	if want := fmt.Sprintf("%d record(s) that did not end ok have input_tokens 0: uncounted", uncounted); uncounted > 0 && !strings.HasPrefix(u, want) {
		t.Errorf("note %q, want %q", u, want)
	} else if uncounted == 0 && u != "" {
		t.Errorf("note %q names uncounted records; there are none", u)
	}
	t.Logf("%v failed, %d counted by a later answer, %d uncounted", status, later, uncounted)
}
