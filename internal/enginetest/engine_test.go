package enginetest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/servermetrics"
)

// server is one llama-server process on a free loopback port.
type server struct {
	url string
	log string
	cmd *exec.Cmd
}

// startServer runs llama-server with one thread (two stalled under load
// on this machine), 4 slots and its /metrics; slotSave adds
// --slot-save-path, without which slot erase answers 501.
func startServer(t *testing.T, bin, model string, slotSave bool) *server {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	ln.Close()
	dir := t.TempDir()
	args := []string{"-m", model, "-t", "1", "--host", "127.0.0.1", "--port", fmt.Sprint(port), "-np", "4", "-c", "4096", "--metrics"}
	if slotSave {
		args = append(args, "--slot-save-path", filepath.Join(dir, "slots"))
		os.MkdirAll(filepath.Join(dir, "slots"), 0o755)
	}
	s := &server{url: fmt.Sprintf("http://127.0.0.1:%d", port), log: filepath.Join(dir, "server.log")}
	lf, err := os.Create(s.log)
	if err != nil {
		t.Fatal(err)
	}
	s.cmd = exec.Command(bin, args...)
	s.cmd.Stdout, s.cmd.Stderr = lf, lf
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		s.cmd.Process.Kill()
		s.cmd.Wait()
		lf.Close()
	})
	deadline := time.Now().Add(60 * time.Second)
	for {
		resp, err := http.Get(s.url + "/health")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return s
			}
		}
		if time.Now().After(deadline) {
			b, _ := os.ReadFile(s.log)
			t.Fatalf("llama-server did not become healthy in 60 s:\n%s", b)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// modelID is the id the server lists (the model file's path).
func (s *server) modelID(t *testing.T) string {
	resp, err := http.Get(s.url + "/v1/models")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var l struct{ Data []struct{ ID string } }
	if err := json.NewDecoder(resp.Body).Decode(&l); err != nil || len(l.Data) == 0 {
		t.Fatalf("/v1/models: %v %+v", err, l)
	}
	return l.Data[0].ID
}

// bench runs the benchseal binary, failing the test on a non-zero exit.
func bench(t *testing.T, bin string, args ...string) string {
	t.Helper()
	var out bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &out, &out
	cmd.Env = append(os.Environ(), "BENCHSEAL_PASSWORD=engine-test")
	if err := cmd.Run(); err != nil {
		t.Fatalf("benchseal %s: %v\n%s", strings.Join(args, " "), err, out.String())
	}
	return out.String()
}

func readRecords(t *testing.T, dir string) []*schema.Record {
	t.Helper()
	_, recs := artifacttest.ReadRun(t, dir)
	return recs
}

func readManifest(t *testing.T, dir string) *schema.Manifest {
	t.Helper()
	rd, err := schema.OpenRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return rd.Manifest()
}

// TestLlamaServer captures closed loop, open loop, completions and
// non-streaming runs from a real llama-server, then validates, packs,
// verifies and replays each, and checks every request against the
// engine's own account of it.
func TestLlamaServer(t *testing.T) {
	llama, model, bin := os.Getenv("BENCHSEAL_LLAMA_SERVER"), os.Getenv("BENCHSEAL_LLAMA_MODEL"), os.Getenv("BENCHSEAL_BIN")
	if llama == "" || model == "" || bin == "" {
		t.Skip("BENCHSEAL_LLAMA_SERVER, BENCHSEAL_LLAMA_MODEL and BENCHSEAL_BIN not set (make engine-test sets them)")
	}
	work := t.TempDir()
	bench(t, bin, "keygen", "--out", filepath.Join(work, "pub"), "--no-password")
	srv := startServer(t, llama, model, true)
	id := srv.modelID(t)
	common := []string{"--endpoint", srv.url, "--model", id, "--input-tokens", "32", "--output-tokens", "12",
		"--distinct-prompts", "--reset-prefix-cache", "--server-metrics-interval", "1s"}
	// Each run its own seed: the engine's host prompt cache keeps every
	// earlier run's prompts (a slot erase leaves it), see "again".
	runs := []struct {
		name string
		args []string
	}{
		{"closed", []string{"--seed", "1", "--concurrency", "1,4,8", "--repeats", "2", "--requests", "24", "--warmup-requests", "2"}},
		{"open", []string{"--seed", "2", "--rate", "15", "--requests", "30", "--arrival", "poisson"}},
		{"completions", []string{"--seed", "3", "--api", "completions", "--concurrency", "4", "--requests", "16"}},
		{"whole", []string{"--seed", "4", "--no-stream", "--concurrency", "2", "--requests", "12"}},
		{"again", []string{"--seed", "4", "--no-stream", "--concurrency", "2", "--requests", "12"}},
	}
	for _, r := range runs {
		t.Run(r.name, func(t *testing.T) {
			dir := filepath.Join(work, r.name)
			bench(t, bin, append(append([]string{"capture", "--out", dir}, common...), r.args...)...)
			m := readManifest(t, dir)
			recs := readRecords(t, dir)
			checkEngine(t, m)
			checkRecords(t, m, recs, !slices.Contains(r.args, "--no-stream"))
			checkCacheStates(t, m)
			checkCacheUse(t, r.name, m)
			n := checkMetrics(t, dir, m, recs)
			var retries int64
			for _, rec := range recs {
				retries += rec.Retries
			}
			var states []string
			for _, p := range m.ServerState.Points {
				states = append(states, fmt.Sprintf("%s/r%d %s(%s) %d/%d cached", p.Point, p.Repeat, p.PrefixCache, p.PrefixCacheSource, p.Cache.CachedTokens, p.Cache.PromptTokens))
			}
			t.Logf("%d records, %d resent, %d /metrics counter deltas equal to the records'; cache: %s", len(recs), retries, n, strings.Join(states, ", "))
			bench(t, bin, "validate", dir)
			oci := filepath.Join(work, r.name+".oci")
			bench(t, bin, "pack", dir, "--out", oci, "--key", filepath.Join(work, "pub.key"))
			bench(t, bin, "verify", oci, "--key", filepath.Join(work, "pub.pub"))
			bench(t, bin, "replay", oci)
		})
	}
	t.Run("forged input tokens", func(t *testing.T) {
		// +100 input tokens on every ok record, within the workload
		// item's bound (its 32 tokens + 256 for a template): the
		// engine's prompt counters (computed + cached) contradict it.
		dir := filepath.Join(work, "forged")
		if err := os.CopyFS(dir, os.DirFS(filepath.Join(work, "whole"))); err != nil {
			t.Fatal(err)
		}
		recs := readRecords(t, dir)
		for _, name := range []string{schema.RecordsFile, schema.RecordsZstdFile, schema.ClaimsFile} {
			os.Remove(filepath.Join(dir, name))
		}
		var buf bytes.Buffer
		rw, _ := schema.NewRecordWriter(&buf, false)
		for _, r := range recs {
			if r.Status == schema.StatusOK {
				r.InputTokens += 100
			}
			rw.Write(r)
		}
		if err := rw.Close(); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, schema.RecordsFile), buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		out, err := exec.Command(bin, "validate", dir).CombinedOutput()
		if want := "llamacpp:prompt_tokens_total + llamacpp:prompt_tokens_cached_total"; err == nil || !bytes.Contains(out, []byte(want)) {
			t.Errorf("validate of the forged run: %v, want a problem naming %q:\n%s", err, want, out)
		}
	})
	t.Run("reproduce", func(t *testing.T) { checkReproduce(t, bin, srv.url, id, work) })
	t.Run("slot erase without --slot-save-path", func(t *testing.T) {
		plain := startServer(t, llama, model, false)
		dir := filepath.Join(work, "plain")
		bench(t, bin, "capture", "--out", dir, "--endpoint", plain.url, "--model", plain.modelID(t), "--input-tokens", "32",
			"--output-tokens", "8", "--concurrency", "2", "--requests", "8", "--repeats", "2", "--reset-prefix-cache")
		m := readManifest(t, dir)
		for _, p := range m.ServerState.Points {
			if p.Reset == nil || p.Reset.OK || p.Reset.Calls[0].Status != http.StatusNotImplemented || !strings.Contains(p.Reset.Calls[0].Error, "--slot-save-path") {
				t.Errorf("%s r%d: reset %+v, want llama.cpp's 501 and its message", p.Point, p.Repeat, p.Reset)
			}
		}
		checkCacheStates(t, m)
		checkRecords(t, m, readRecords(t, dir), true)
	})
}

// checkEngine: the engine named itself without --set.
func checkEngine(t *testing.T, m *schema.Manifest) {
	t.Helper()
	if m.Engine.Name != "llamacpp" || !strings.HasPrefix(m.Engine.Version, "b") || m.Engine.Server["Server"] != "llama.cpp" {
		t.Errorf("engine %q %q server header %q: want llamacpp, its build_info, llama.cpp", m.Engine.Name, m.Engine.Version, m.Engine.Server["Server"])
	}
	// Its answers' system_fingerprint is its build, as /props says.
	if fp := m.Engine.Server["system_fingerprint"]; m.Notes["preflight"] != "" && fp != m.Engine.Version {
		t.Errorf("engine.server.system_fingerprint %q, want the build %q", fp, m.Engine.Version)
	}
}

// checkRecords: no request failed, and each agrees with the engine's own
// account: the prompt it counted (computed + reused from the cache), the
// tokens it generated (one streamed chunk each), and its timers inside
// the client's span (the server cannot have worked on the request before
// it was sent or after its answer arrived).
func checkRecords(t *testing.T, m *schema.Manifest, recs []*schema.Record, stream bool) {
	t.Helper()
	if len(recs) == 0 {
		t.Fatal("no records")
	}
	for _, r := range recs {
		s := r.Server
		switch {
		case r.Status != schema.StatusOK:
			t.Errorf("%s: %s %s (a spurious failure: the engine served everything it was sent)", r.ID, r.Status, r.Error)
			continue
		case s == nil || s.PromptN == nil || s.CacheN == nil || s.PredictedN == nil || s.PromptNS == nil || s.PredictedNS == nil || s.CachedTokens == nil:
			t.Errorf("%s: server %+v: the engine's usage and timings were not all recorded", r.ID, s)
			continue
		}
		// The prompts were made 32 tokens with the engine's own
		// tokenizer (its POST /tokenize): the engine counted exactly
		// that many.
		if r.InputTokens != 32 {
			t.Errorf("%s: the engine counted %d prompt tokens for a prompt made 32 tokens with its tokenizer", r.ID, r.InputTokens)
		}
		if *s.PromptN+*s.CacheN != r.InputTokens || *s.CachedTokens != *s.CacheN {
			t.Errorf("%s: input_tokens %d, engine prompt_n %d + cache_n %d, cached_tokens %d", r.ID, r.InputTokens, *s.PromptN, *s.CacheN, *s.CachedTokens)
		}
		if *s.PredictedN != r.OutputTokens {
			t.Errorf("%s: output_tokens %d, engine predicted_n %d", r.ID, r.OutputTokens, *s.PredictedN)
		}
		if stream && int64(len(r.ChunksNS)) != r.OutputTokens {
			t.Errorf("%s: %d content chunks for %d tokens", r.ID, len(r.ChunksNS), r.OutputTokens)
		}
		if span := r.EndNS - r.SentNS; *s.PromptNS+*s.PredictedNS > span {
			t.Errorf("%s: engine timers %d + %d ns exceed the client's span %d ns", r.ID, *s.PromptNS, *s.PredictedNS, span)
		}
		if stream && len(r.ChunksNS) > 0 && *s.PromptNS > r.ChunksNS[0] {
			t.Errorf("%s: engine prompt time %d ns after the client's first chunk %d ns", r.ID, *s.PromptNS, r.ChunksNS[0])
		}
	}
	if n := m.Notes["input_tokens"]; !strings.Contains(n, "exactly N tokens of the served model") {
		t.Errorf("notes.input_tokens %q: want prompts of exactly N tokens, counted by the engine", n)
	}
	if m.Client.TokenCounts != "server-usage" {
		t.Errorf("token_counts %q", m.Client.TokenCounts)
	}
}

// checkCacheStates: every point × repeat's prefix-cache state is
// measured or backed by a reset the engine's report confirms.
func checkCacheStates(t *testing.T, m *schema.Manifest) {
	t.Helper()
	if m.ServerState == nil || len(m.ServerState.Points) == 0 {
		t.Fatal("no server_state")
	}
	for _, p := range m.ServerState.Points {
		if p.Cache == nil || (p.PrefixCacheSource != schema.StateMeasured && p.PrefixCacheSource != schema.StateReset) {
			t.Errorf("%s r%d: prefix cache %s (%s), cache %+v: not measured", p.Point, p.Repeat, p.PrefixCache, p.PrefixCacheSource, p.Cache)
		}
	}
}

// checkCacheUse: with prompts of its own and every slot erased, a
// point's first request finds nothing cached but the chat template's
// opening tokens (a chat prompt starts with them; completions prompts
// share nothing), so each state is empty, the reset confirmed. The same
// prompts sent again ("again") are served from llama.cpp's host prompt
// cache, which the slot erase does not empty: the erase answered 200,
// the state is warm, measured.
func checkCacheUse(t *testing.T, run string, m *schema.Manifest) {
	t.Helper()
	for _, p := range m.ServerState.Points {
		if p.Reset == nil || !p.Reset.OK {
			t.Errorf("%s r%d: reset %+v, want every slot erased", p.Point, p.Repeat, p.Reset)
		}
		if run == "again" {
			if p.PrefixCache != schema.PrefixCacheWarm || p.PrefixCacheSource != schema.StateMeasured || p.Cache.CachedTokens*2 < p.Cache.PromptTokens {
				t.Errorf("%s r%d: %s (%s) %+v, want warm measured, mostly cached", p.Point, p.Repeat, p.PrefixCache, p.PrefixCacheSource, p.Cache)
			}
		} else if p.Cache.CachedTokens*4 > p.Cache.PromptTokens {
			t.Errorf("%s r%d: %+v: distinct prompts after an erase, yet more than a quarter of the prompt tokens cached", p.Point, p.Repeat, p.Cache)
		}
	}
}

// checkMetrics: the engine's /metrics counters moved, between the
// scrapes around each point × repeat, by what its records say it
// computed, reused and generated.
func checkMetrics(t *testing.T, dir string, m *schema.Manifest, recs []*schema.Record) (compared int) {
	t.Helper()
	if m.ServerMetrics == nil {
		t.Fatal("no server metrics scraped")
	}
	type key struct {
		point  string
		repeat int
	}
	scrapes := map[key][]*servermetrics.Snapshot{}
	for _, sc := range m.ServerMetrics.Scrapes {
		if sc.When != schema.ScrapeBefore && sc.When != schema.ScrapeAfter {
			continue
		}
		b, err := os.ReadFile(filepath.Join(dir, schema.AttachmentsDir, filepath.FromSlash(sc.File)))
		if err != nil {
			t.Fatal(err)
		}
		s, err := servermetrics.Parse(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		k := key{sc.Point, sc.Repeat}
		scrapes[k] = append(scrapes[k], s)
	}
	want := map[key]map[string]float64{}
	for _, r := range recs {
		if r.Phase != schema.PhaseMeasure || r.Server == nil || r.Server.PromptN == nil {
			continue
		}
		k := key{r.Point, r.Repeat}
		if want[k] == nil {
			want[k] = map[string]float64{}
		}
		w := want[k]
		w[servermetrics.RolePromptTokens] += float64(*r.Server.PromptN)
		w[servermetrics.RolePromptTokensCached] += float64(*r.Server.CacheN)
		w[servermetrics.RoleGenerationTokens] += float64(*r.Server.PredictedN)
	}
	for k, w := range want {
		ss := scrapes[k]
		if len(ss) != 2 {
			t.Errorf("%v: %d before/after scrapes", k, len(ss))
			continue
		}
		col, err := servermetrics.Delta(servermetrics.EngineLlamaCpp, ss, servermetrics.NoLoad)
		if err != nil {
			t.Fatal(err)
		}
		for _, c := range col.Counters {
			if v, ok := w[c.Role]; ok {
				compared++
				if c.Delta != v {
					t.Errorf("%v: /metrics %s grew by %v, the records' engine counts sum to %v", k, c.Role, c.Delta, v)
				}
			}
		}
	}
	if compared != 3*len(want) {
		t.Errorf("%d counter deltas compared, want 3 for each of %d points × repeats", compared, len(want))
	}
	return compared
}

// checkReproduce publishes a forced-length run with claims and
// reproduces it against the same llama-server: the reproduction is
// accepted as a run of the original's test (the engine honours
// ignore_eos, so every ok record has the forced length; its records are
// its own, not the original's), every count claim is REPRODUCED exactly,
// and the verdict is one of the three (a tiny model on a loaded CPU may
// leave latencies INCONCLUSIVE). The original's prompts were sent before,
// so llama.cpp's host prompt cache makes the reproduction warm where the
// original was empty: a comparability limit the report must state, and
// a reason REPRODUCED is withheld.
func checkReproduce(t *testing.T, bin, url, model, work string) {
	dir := filepath.Join(work, "published")
	bench(t, bin, "capture", "--out", dir, "--endpoint", url, "--model", model, "--input-tokens", "32", "--output-tokens", "12",
		"--force-length", "--distinct-prompts", "--reset-prefix-cache", "--server-metrics-interval", "1s",
		"--seed", "7", "--concurrency", "2,4", "--repeats", "3", "--requests", "12", "--warmup-requests", "2")
	bench(t, bin, "replay", dir, "--slo", "ttft=2s,e2e=10s", "--write-claims", filepath.Join(dir, schema.ClaimsFile))
	oci := filepath.Join(work, "published.oci")
	bench(t, bin, "pack", dir, "--out", oci, "--key", filepath.Join(work, "pub.key"))
	repro := filepath.Join(work, "reproduction")
	var out, errb bytes.Buffer
	cmd := exec.Command(bin, "reproduce", oci, "--key", filepath.Join(work, "pub.pub"), "--endpoint", url, "--model", model,
		"--out", repro, "--margin", "20%", "--progress", "never", "--output", "json")
	cmd.Stdout, cmd.Stderr = &out, &errb
	err := cmd.Run()
	code := 0
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	if code != 0 && code != 3 && code != 4 {
		t.Fatalf("reproduce exit %d (want a verdict: 0, 3 or 4):\n%s", code, errb.String())
	}
	var rep struct {
		Overall  string
		Claims   []struct{ Point, Metric, Kind, Verdict string }
		Limits   []string
		Withheld []string
	}
	if err := json.Unmarshal(out.Bytes(), &rep); err != nil {
		t.Fatalf("reproduce --output json: %v\n%s", err, out.String())
	}
	verdicts := map[string]int{}
	for _, c := range rep.Claims {
		verdicts[c.Verdict]++
		if c.Verdict == "NOT REPRODUCED" {
			t.Logf("NOT REPRODUCED: %s %s", c.Point, c.Metric)
		}
		if c.Kind == "exact" && c.Verdict != "REPRODUCED" {
			t.Errorf("%s %s: %s, want the counts of the same test REPRODUCED exactly", c.Point, c.Metric, c.Verdict)
		}
	}
	for _, r := range readRecords(t, repro) {
		if r.Status == schema.StatusOK && r.OutputTokens != 12 {
			t.Errorf("reproduction %s: %d output tokens under force-length 12", r.ID, r.OutputTokens)
		}
	}
	if !slices.ContainsFunc(rep.Limits, func(l string) bool { return strings.Contains(l, "prefix_cache differs") }) {
		t.Errorf("limits %q: want the warm host prompt cache stated (prefix_cache differs)", rep.Limits)
	}
	if rep.Overall == "REPRODUCED" || !slices.ContainsFunc(rep.Withheld, func(w string) bool { return strings.Contains(w, "prefix_cache differs") }) {
		t.Errorf("overall %s, withheld %q: a warm reproduction of an empty-cache original must not be REPRODUCED, and must say why", rep.Overall, rep.Withheld)
	}
	t.Logf("reproduce exit %d, %s: %v; limits %q", code, rep.Overall, verdicts, rep.Limits)
}
