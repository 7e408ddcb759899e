package reproduce

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/compare"
	"github.com/benchseal/benchseal/plan"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/reproduce/rerun"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/synth"
	"github.com/benchseal/benchseal/verify"
)

const origDigest = "sha256:1111111111111111111111111111111111111111111111111111111111111111"

// synthRun writes a deterministic synthetic run (seed, repeats) into dir;
// with claims, its replayed headline claims too; reproduces, when set, is
// written into its manifest.
func synthRun(t *testing.T, dir string, seed uint64, repeats int, claims bool, reproduces string) *schema.RunDir {
	t.Helper()
	o := synth.DefaultOptions()
	o.Seed, o.Repeats, o.Requests, o.Points, o.WorkloadItems = seed, repeats, 60*repeats, []float64{2, 8}, 50
	m, _, err := synth.WriteRun(context.Background(), dir, o, false)
	if err != nil {
		t.Fatal(err)
	}
	if reproduces != "" {
		m.Reproduces = &schema.Reproduces{RunManifest: reproduces}
		b, err := schema.MarshalDocument(m)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, schema.ManifestFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if claims {
		rd, err := schema.OpenRunDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		res, err := replay.Replay(context.Background(), rd, replay.Options{})
		if err != nil {
			t.Fatal(err)
		}
		b, err := schema.MarshalDocument(res.Claims(nil, replay.DefaultClaimTolerance))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, schema.ClaimsFile), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	rd, err := schema.OpenRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return rd
}

// anotherRun writes into dir another run of the test of the run in
// origDir, naming reproduces as its original: its own run id and start
// time, and the original's records re-timed by a monotone map whose
// slope differs per point × repeat (1 + spread/5 … 1 + spread, never 1:
// another run repeats none of the original's timings), so that every order
// and concurrency is kept while each repeat's latencies and throughput
// move by a few per cent of their own. A timeout keeps its duration (the
// timeout), ending no later than the map would end it.
func anotherRun(t *testing.T, origDir, dir string, spread float64, reproduces string) *schema.RunDir {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(origDir, schema.WorkloadFile))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, schema.WorkloadFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	b, err = os.ReadFile(filepath.Join(origDir, schema.RecordsFile))
	if err != nil {
		t.Fatal(err)
	}
	var recs []map[string]json.RawMessage
	starts := map[string]int64{}
	sc := bufio.NewScanner(strings.NewReader(string(b)))
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var r map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatal(err)
		}
		var sent int64
		json.Unmarshal(r["sent_ns"], &sent)
		cell := string(r["point"]) + "/" + string(r["repeat"])
		if s, ok := starts[cell]; !ok || sent < s {
			starts[cell] = sent
		}
		recs = append(recs, r)
	}
	var bps []int64
	for _, s := range starts {
		bps = append(bps, s)
	}
	slices.Sort(bps)
	slope := func(j int) float64 { return 1 + spread*float64((j*7)%5+1)/5 }
	at := []float64{float64(bps[0])}
	for j := 1; j < len(bps); j++ {
		at = append(at, at[j-1]+slope(j-1)*float64(bps[j]-bps[j-1]))
	}
	g := func(v int64) int64 {
		j := max(0, sortSearch(bps, v))
		return int64(at[j] + slope(j)*float64(v-bps[j]))
	}
	var last, lastNew int64
	var out strings.Builder
	for _, r := range recs {
		var sent, end int64
		json.Unmarshal(r["sent_ns"], &sent)
		json.Unmarshal(r["end_ns"], &end)
		newEnd := g(end)
		if string(r["status"]) == `"timeout"` {
			newEnd = g(sent) + end - sent
		}
		if end > last {
			last, lastNew = end, newEnd
		}
		r["end_ns"], _ = json.Marshal(newEnd)
		for _, k := range []string{"sent_ns", "scheduled_ns"} {
			if raw, ok := r[k]; ok {
				var v int64
				json.Unmarshal(raw, &v)
				r[k], _ = json.Marshal(g(v))
			}
		}
		if raw, ok := r["chunks_ns"]; ok {
			var cs []int64
			json.Unmarshal(raw, &cs)
			for i := range cs {
				cs[i] = min(g(cs[i]), newEnd)
			}
			reshape(cs)
			r["chunks_ns"], _ = json.Marshal(cs)
		}
		line, _ := json.Marshal(r)
		out.Write(append(line, '\n'))
	}
	if err := os.WriteFile(filepath.Join(dir, schema.RecordsFile), []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	od, err := schema.OpenRunDir(origDir)
	if err != nil {
		t.Fatal(err)
	}
	m := od.Manifest()
	start, err1 := time.Parse(time.RFC3339Nano, m.StartTime)
	finish, err2 := time.Parse(time.RFC3339Nano, m.FinishTime)
	if err := errors.Join(err1, err2); err != nil {
		t.Fatal(err)
	}
	m.RunID += "-again"
	m.StartTime = start.Add(time.Hour).Format(time.RFC3339Nano)
	m.FinishTime = finish.Add(time.Hour + time.Duration(lastNew-last)).Format(time.RFC3339Nano)
	m.EpochUnixNS += int64(time.Hour)
	m.Reproduces = &schema.Reproduces{RunManifest: reproduces}
	mb, err := schema.MarshalDocument(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, schema.ManifestFile), mb, 0o644); err != nil {
		t.Fatal(err)
	}
	if err := schema.ValidateRunDocuments(dir, 20); err != nil {
		t.Fatalf("another run: %v", err)
	}
	rd, err := schema.OpenRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return rd
}

// reshape moves the chunk offsets cs (of a record whose first chunk and
// end another run's re-timing already moved) as another run's would: the
// gaps between chunks in the reverse order, so that the first and the
// last chunk, and which gaps the record has, stay. Another run's gaps
// differ gap by gap; scaling them all by one factor would leave their
// shares of the record's time (rerun.CheckNotACopy's shapes) the
// original's.
func reshape(cs []int64) {
	if len(cs) < 3 {
		return
	}
	l := len(cs) - 1
	orig := slices.Clone(cs)
	for k := range cs {
		cs[k] = orig[0] + orig[l] - orig[l-k]
	}
}

// sortSearch is the index of the last breakpoint at or before v (-1: none).
func sortSearch(bps []int64, v int64) int {
	i, found := slices.BinarySearch(bps, v)
	if found {
		return i
	}
	return i - 1
}

func verified() *verify.Result {
	return &verify.Result{Verified: true, Authenticated: true, ManifestDigest: origDigest}
}

// TestEvaluateAnotherRunOfTheTestIsReproduced: another run of the
// original's test (10 repeats; its own run id, start and records, each
// repeat a few per cent slower or faster) reproduces every claim within
// ±50 % (the synthetic repeats differ widely from one another, and the
// interval spans that spread), each ratio within the repeats' 4 %.
func TestEvaluateAnotherRunOfTheTestIsReproduced(t *testing.T) {
	dir := t.TempDir()
	orig := synthRun(t, filepath.Join(dir, "orig"), 3, 10, true, "")
	anotherRun(t, filepath.Join(dir, "orig"), filepath.Join(dir, "repro"), 0.04, origDigest)
	rep, err := Evaluate(context.Background(), Original{Name: "orig", Bundle: orig, Verification: verified()}, filepath.Join(dir, "repro"), Options{Margin: 0.5})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range rep.Claims {
		if c.Verdict != Reproduced {
			t.Logf("%s %s %v %v %s %s", c.Point, c.Metric, c.Original, c.Reproduced, c.Verdict, c.Reason)
		}
	}
	if rep.Overall != Reproduced || rep.Counts.NotReproduced+rep.Counts.Inconclusive != 0 || len(rep.Claims) == 0 {
		t.Fatalf("overall %s, counts %+v", rep.Overall, rep.Counts)
	}
	if rep.Margin != 0.5 || rep.Alpha != DefaultAlpha || rep.Repeats.Original != 10 || rep.Repeats.Reproduction != 10 || !strings.HasPrefix(rep.ReproductionManifestDigest, "sha256:") {
		t.Errorf("report header %+v", rep)
	}
	for _, c := range rep.Claims {
		if c.Kind == KindRatio && c.Ratio != nil && (*c.Ratio < 1/1.045 || *c.Ratio > 1.045) {
			t.Errorf("%s %s: ratio %v, want within the re-timing's ±4 %%", c.Point, c.Metric, *c.Ratio)
		}
		if len(c.Original) != 10 || len(c.Reproduced) != 10 {
			t.Errorf("%s %s: %d and %d repeats", c.Point, c.Metric, len(c.Original), len(c.Reproduced))
		}
	}
}

// TestEvaluateOneRepeatIsInconclusive: one repeat a side gives no
// interval, so every measured claim is inconclusive with the repeats
// needed, whatever the values.
func TestEvaluateOneRepeatIsInconclusive(t *testing.T) {
	dir := t.TempDir()
	orig := synthRun(t, filepath.Join(dir, "orig"), 3, 1, true, "")
	anotherRun(t, filepath.Join(dir, "orig"), filepath.Join(dir, "repro"), 0.04, origDigest)
	rep, err := Evaluate(context.Background(), Original{Name: "orig", Bundle: orig, Verification: verified()}, filepath.Join(dir, "repro"), Options{Margin: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Overall != Inconclusive {
		t.Fatalf("overall %s, want INCONCLUSIVE", rep.Overall)
	}
	ratios := 0
	for _, c := range rep.Claims {
		if c.Kind != KindRatio || allZero(c.Original) {
			continue
		}
		ratios++
		if c.Verdict != Inconclusive || c.RepeatsNeeded < 2 {
			t.Errorf("%s %s: %s, %d repeats needed", c.Point, c.Metric, c.Verdict, c.RepeatsNeeded)
		}
	}
	if ratios == 0 {
		t.Fatal("no measured claim")
	}
}

// TestEvaluateRefuses: nothing is decided for an unverified original, an
// original without claims, a reproduction that names another original or
// none, an invalid reproduction, or an option out of range.
func TestEvaluateRefuses(t *testing.T) {
	dir := t.TempDir()
	orig := synthRun(t, filepath.Join(dir, "orig"), 3, 3, true, "")
	bare := synthRun(t, filepath.Join(dir, "bare"), 3, 3, false, "")
	synthRun(t, filepath.Join(dir, "repro"), 3, 3, false, origDigest)
	synthRun(t, filepath.Join(dir, "other"), 3, 3, false, "sha256:"+strings.Repeat("2", 64))
	broken := filepath.Join(dir, "broken")
	synthRun(t, broken, 3, 3, false, origDigest)
	os.WriteFile(filepath.Join(broken, schema.RecordsFile), []byte("{\n"), 0o644)
	// An interrupted reproduction (benchseal reproduce killed): the
	// manifest marks it INCOMPLETE, which a valid run may be.
	cut := synthRun(t, filepath.Join(dir, "cut"), 3, 3, false, origDigest)
	cm := cut.Manifest()
	cm.Incomplete, cm.IncompleteReason = true, "interrupted (SIGINT)"
	if b, err := schema.MarshalDocument(cm); err != nil {
		t.Fatal(err)
	} else if err := os.WriteFile(filepath.Join(dir, "cut", schema.ManifestFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	ok := Original{Name: "orig", Bundle: orig, Verification: verified()}
	for _, c := range []struct {
		name  string
		orig  Original
		dir   string
		opts  Options
		is    error
		words string
	}{
		{"unverified", Original{Name: "orig", Bundle: orig, Verification: &verify.Result{ManifestDigest: origDigest}}, "repro", Options{}, ErrNotVerified, "did not verify"},
		{"no claims", Original{Name: "bare", Bundle: bare, Verification: verified()}, "repro", Options{}, ErrNoClaims, "makes no claims"},
		{"names none", ok, "bare", Options{}, ErrNotAReproduction, "names no original (reproduces.run_manifest)"},
		{"names another", ok, "other", Options{}, ErrNotAReproduction, "reproduces.run_manifest is sha256:2222"},
		{"invalid", ok, "broken", Options{}, ErrNotAReproduction, "not valid"},
		{"incomplete", ok, "cut", Options{}, ErrNotAReproduction, "the run is INCOMPLETE (interrupted (SIGINT)): an interrupted run is not a re-run of the test"},
		{"margin", ok, "repro", Options{Margin: 1.5}, ErrBadOption, "margin 1.5"},
		{"alpha", ok, "repro", Options{Alpha: 0.5}, ErrBadOption, "alpha 0.5"},
		{"missing", ok, "nosuchdir", Options{}, nil, "no such file or directory"},
	} {
		t.Run(c.name, func(t *testing.T) {
			_, err := Evaluate(context.Background(), c.orig, filepath.Join(dir, c.dir), c.opts)
			if c.is == nil {
				if err == nil || errors.Is(err, ErrNotAReproduction) || !strings.Contains(err.Error(), c.words) {
					t.Fatalf("error %v, want a plain error saying %q", err, c.words)
				}
				return
			}
			if !errors.Is(err, c.is) || !strings.Contains(err.Error(), c.words) {
				t.Fatalf("error %v, want %v saying %q", err, c.is, c.words)
			}
		})
	}
}

// TestDecideExactAndGrouping: counts and flags are equal, apart or
// overlapping; the claims of a metric's repeats and of its summary make
// one verdict.
func TestDecideExactAndGrouping(t *testing.T) {
	for _, c := range []struct {
		o, r []float64
		want Verdict
	}{
		{[]float64{12, 12, 12}, []float64{12, 12}, Reproduced},
		{[]float64{12, 12}, []float64{11, 10}, NotReproduced},
		{[]float64{0}, []float64{1}, NotReproduced},
		{[]float64{10, 12}, []float64{12, 11}, Reproduced},
		{[]float64{10, 12}, []float64{12, 13}, Inconclusive},
	} {
		if v, _ := decideExact(c.o, c.r); v != c.want {
			t.Errorf("%v vs %v: %s, want %s", c.o, c.r, v, c.want)
		}
	}
	r0, r1 := 0, 1
	cl := &schema.Claims{Points: []schema.PointClaim{
		{Point: "c1", Repeat: &r0, Metrics: []schema.Claim{{Metric: "ttft_ns.p50", Value: 10}, {Metric: "counts.ok", Value: 4}}},
		{Point: "c1", Repeat: &r1, Metrics: []schema.Claim{{Metric: "ttft_ns.p50", Value: 30}}},
		{Point: "c1", Metrics: []schema.Claim{{Metric: "summary.ttft_ns.p50.median", Value: 20}}},
		{Point: "c2", Repeat: &r0, Metrics: []schema.Claim{{Metric: "ttft_ns.p50", Value: 5}}},
	}}
	gs := groupClaims(cl)
	if len(gs) != 3 || gs[0].metric != "ttft_ns.p50" || len(gs[0].paths) != 2 || gs[0].point1 == nil || *gs[0].point1 != 20 || len(gs[0].perRepeat) != 2 {
		t.Fatalf("groups %+v", gs[0])
	}
	if gs[1].metric != "counts.ok" || !schema.ExactMetric(gs[1].metric) || schema.ExactMetric(gs[0].metric) || gs[2].point != "c2" {
		t.Errorf("groups %+v %+v", gs[1], gs[2])
	}
}

// TestReproductionRepeatsAdvice: the advice of an inconclusive ratio
// counts the reproduction's repeats with the original's as they are, and
// says when only the publisher can decide; it never asks for the repeats
// the reproduction already ran.
func TestReproductionRepeatsAdvice(t *testing.T) {
	for _, c := range []struct {
		name      string
		o, r      []float64
		alpha     float64
		reason    string
		need      int
		words     string
		wordsGone string
	}{
		{"2 original repeats", []float64{100, 100}, []float64{105, 105}, 0.05, "2 + 2 repeats cannot give a 90 % interval (the widest covers 66.7 %)", 5, "2 + 2 repeats cannot give", ""},
		{"original too spread", []float64{50, 150}, []float64{100, 100, 100, 100, 100, 100}, 0.05, "even 50 repeats per side would not decide at the observed spread", 51,
			"with the original's 2 repeats, even 50 reproduction repeats would not decide at the observed spread: the publisher must provide more repeats", "per side"},
		{"no interval with the original's", []float64{100}, []float64{100}, 0.001, "1 + 1 repeats cannot give a 99.8 % interval (the widest covers 0 %)", 0,
			"the original's 1 repeats cannot give a 99.8 % interval with any number of reproduction repeats up to 50: the publisher must provide more repeats", ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			n, why, err := reproductionRepeats(c.o, c.r, c.reason, Options{Margin: 0.1, Alpha: c.alpha})
			switch {
			case err != nil:
				t.Fatal(err)
			case n != c.need:
				t.Errorf("%d repeats needed, want %d", n, c.need)
			case n != 0 && n <= len(c.r):
				t.Errorf("%d repeats needed, but %d were run", n, len(c.r))
			case !strings.Contains(why, c.words) || (c.wordsGone != "" && strings.Contains(why, c.wordsGone)):
				t.Errorf("reason %q, want %q", why, c.words)
			}
		})
	}
}

// TestTransportLimit: an original captured against the in-process
// simulator and a reproduction over HTTP (or the other way round) is a
// stated limit; two captures of the same kind are not.
func TestTransportLimit(t *testing.T) {
	mk := func(args ...string) *schema.Manifest {
		m := &schema.Manifest{Evidence: schema.EvidenceSelfRun}
		m.Client.Name, m.Client.CommandLine = schema.CaptureClientName, append([]string{"benchseal", "capture"}, args...)
		return m
	}
	inproc, http := mk("--simulate", "--out", "o"), mk("--endpoint", "http://127.0.0.1:1", "--out", "r")
	if got := transportLimit("pub.tar", inproc, "repro", http); !strings.Contains(got, "pub.tar against the in-process simulator (capture --simulate: HTTP over 127.0.0.1 to a server in the client's own process); repro against an HTTP endpoint served by another process") {
		t.Errorf("in-process vs HTTP: %q", got)
	}
	if got := transportLimit("pub.tar", http, "repro", inproc); !strings.Contains(got, "pub.tar against an HTTP endpoint served by another process; repro against the in-process simulator (capture --simulate: HTTP") {
		t.Errorf("HTTP vs in-process: %q", got)
	}
	if got := transportLimit("pub.tar", http, "repro", mk("--endpoint", "http://127.0.0.1:2")); got != "" {
		t.Errorf("both HTTP: %q", got)
	}
}

// TestEvaluateRefusesAnotherTestOrTheOriginalsRun: a run directory that
// names the original but ran another test (each field of the test in
// turn), or that is the original's own run (its run id, start time or
// records), is no reproduction: Evaluate refuses it naming the field.
func TestEvaluateRefusesAnotherTestOrTheOriginalsRun(t *testing.T) {
	dir := t.TempDir()
	origDir := filepath.Join(dir, "orig")
	orig := synthRun(t, origDir, 3, 3, true, "")
	om := orig.Manifest()
	ok := Original{Name: "orig", Bundle: orig, Verification: verified()}
	f := func(v float64) *float64 { return &v }
	seed := int64(99)
	registered := &plan.Plan{Schema: plan.SchemaV1, Title: "pre-registered", Load: plan.Load{Repeats: 3}, SLO: om.SLO}
	pd, err := registered.Digest()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name  string
		edit  func(m *schema.Manifest, dir string)
		orig  Original
		words string
	}{
		{"the original's run id", func(m *schema.Manifest, _ string) { m.RunID = om.RunID }, ok, `run_id "synth-concurrency-seed3-180" is the original's: a reproduction is another run`},
		{"the original's start", func(m *schema.Manifest, _ string) { m.StartTime = om.StartTime }, ok, "start_time " + om.StartTime + " is the original's"},
		{"the original's records", func(_ *schema.Manifest, d string) {
			copyFile(t, filepath.Join(origDir, schema.RecordsFile), filepath.Join(d, schema.RecordsFile))
		}, ok, "ok records repeat the original's timings to 10 µs"},
		{"mode", func(m *schema.Manifest, _ string) { m.Load.Mode = schema.ModeRate }, ok, `load.mode: concurrency in the original's test, rate in this run`},
		{"points", func(m *schema.Manifest, _ string) { m.Load.Points = m.Load.Points[:1] }, ok, "load.points: 2 point(s) in the original's test, 1 point(s) in this run"},
		{"concurrency", func(m *schema.Manifest, _ string) { m.Load.Points[0].Concurrency = 4 }, ok, "load.points[0].concurrency: 2 in the original's test, 4 in this run"},
		{"requests", func(m *schema.Manifest, _ string) { m.Load.Points[1].Requests = 31 }, ok, "load.points[1].requests: 30 in the original's test, 31 in this run"},
		{"duration", func(m *schema.Manifest, _ string) { m.Load.Points[1].Duration = schema.Duration(time.Minute) }, ok, "load.points[1].duration: 0s in the original's test, 1m0s in this run"},
		{"arrival", func(m *schema.Manifest, _ string) { m.Load.Points[0].Arrival = "poisson" }, ok, `load.points[0].arrival: none in the original's test, "poisson" in this run`},
		{"warmup", func(m *schema.Manifest, _ string) { m.Load.Warmup.Requests = 0 }, ok, "load.warmup.requests: 8 in the original's test, 0 in this run"},
		{"seed", func(m *schema.Manifest, _ string) { m.Client.Seed = &seed }, ok, "client.seed: 3 in the original's test, 99 in this run"},
		{"timeout", func(m *schema.Manifest, _ string) { m.Load.RequestTimeout = schema.Duration(time.Minute) }, ok, "load.request_timeout: 30s in the original's test, 1m0s in this run"},
		{"api", func(m *schema.Manifest, _ string) { m.Decoding.Endpoint = "/v1/chat/completions" }, ok, `decoding.endpoint: "completions" in the original's test, "chat" in this run`},
		{"max_tokens", func(m *schema.Manifest, _ string) { m.Decoding.MaxTokens = 256 }, ok, "decoding.max_tokens: 512 in the original's test, 256 in this run"},
		{"temperature", func(m *schema.Manifest, _ string) { m.Decoding.Temperature = f(1) }, ok, "decoding.temperature: 0 in the original's test, 1 in this run"},
		{"stream", func(m *schema.Manifest, _ string) { m.Decoding.Streaming = false }, ok, "decoding.streaming: true in the original's test, false in this run"},
		{"force-length", func(m *schema.Manifest, _ string) { m.Decoding.IgnoreEOS = true }, ok, "(force-length): false in the original's test, true in this run"},
		{"slo", func(m *schema.Manifest, _ string) { m.SLO.TTFT = schema.Duration(time.Second) }, ok, "slo: ttft 500ms, e2e 10s, tpot 60ms, one_token \"pass\" in the original's test, ttft 1s"},
		{"workload", func(m *schema.Manifest, d string) { m.Workload.SHA256 = editWorkload(t, d) }, ok, "workload.jsonl: item 0 differs from the original's"},
		{"plan", func(*schema.Manifest, string) {}, Original{Name: "orig", Bundle: orig, Verification: withPlan(registered)},
			"plan: the original executed pre-registered plan " + pd + ", this run none"},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
			rd := anotherRun(t, origDir, d, 0.04, origDigest)
			m := rd.Manifest()
			c.edit(m, d)
			b, err := schema.MarshalDocument(m)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(d, schema.ManifestFile), b, 0o644); err != nil {
				t.Fatal(err)
			}
			rd, err = schema.OpenRunDir(d)
			if err != nil {
				t.Fatal(err)
			}
			// The checks themselves, whatever validation would also say
			// of an edited manifest.
			err = errors.Join(rerun.CheckAnotherRun(c.orig.Bundle, rd), checkRanTest(sourceOf(c.orig), rd))
			if err == nil || !strings.Contains(err.Error(), c.words) {
				t.Fatalf("error %v, want %q", err, c.words)
			}
			// Evaluate refuses it, as not valid or by the check.
			if _, err := Evaluate(context.Background(), c.orig, d, Options{Margin: 0.5}); !errors.Is(err, ErrNotAReproduction) {
				t.Fatalf("Evaluate: %v, want ErrNotAReproduction", err)
			}
		})
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	b, err := os.ReadFile(from)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(to, b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// editWorkload changes the first item's prompt of d's workload.jsonl and
// returns the file's new sha256 (hex).
func editWorkload(t *testing.T, d string) string {
	t.Helper()
	p := filepath.Join(d, schema.WorkloadFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	first, rest, _ := strings.Cut(string(b), "\n")
	var it map[string]any
	if err := json.Unmarshal([]byte(first), &it); err != nil {
		t.Fatal(err)
	}
	it["prompt"] = "another prompt"
	nb, _ := json.Marshal(it)
	out := string(nb) + "\n" + rest
	if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
		t.Fatal(err)
	}
	s := sha256.Sum256([]byte(out))
	return hex.EncodeToString(s[:])
}

// withPlan is a verification that found the run executed p.
func withPlan(p *plan.Plan) *verify.Result {
	vr := verified()
	vr.Plan = &verify.PlanResult{Plan: p, SignedBy: "sha256:publisher"}
	return vr
}

// TestEvaluateWithholdsReproducedOnAnotherSetup: another run of the test
// that reproduces every claim is still not REPRODUCED overall on another
// model or revision, with measured evidence against a synthetic original,
// with fewer repeats, or when the claims are only counts; each is said in
// Withheld. Another machine is allowed and stated as a limit.
func TestEvaluateWithholdsReproducedOnAnotherSetup(t *testing.T) {
	dir := t.TempDir()
	origDir := filepath.Join(dir, "orig")
	orig := synthRun(t, origDir, 3, 10, true, "")
	// The same run claiming only its counts.
	countsDir := filepath.Join(dir, "counts")
	synthRun(t, countsDir, 3, 10, true, "")
	cl := orig.Claims()
	only := *cl
	only.Points = nil
	for _, pc := range cl.Points {
		pc.Metrics = slices.DeleteFunc(slices.Clone(pc.Metrics), func(c schema.Claim) bool { return !strings.HasPrefix(c.Metric, "counts.") })
		if len(pc.Metrics) > 0 {
			only.Points = append(only.Points, pc)
		}
	}
	b, err := schema.MarshalDocument(&only)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(countsDir, schema.ClaimsFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	countsOnly, err := schema.OpenRunDir(countsDir)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		name     string
		orig     *schema.RunDir
		edit     func(m *schema.Manifest, d string)
		want     Verdict
		withheld string
		limit    string
	}{
		{"the same setup", orig, nil, Reproduced, "", ""},
		{"another machine", orig, func(m *schema.Manifest, _ string) { m.Hardware.Accelerator = "NVIDIA H100 80GB" }, Reproduced, "", "hardware differs"},
		{"another model", orig, func(m *schema.Manifest, _ string) { m.Model.Name = "other/decoder-70b" }, Inconclusive,
			"model differs (orig: synthetic/decoder-7b; ", "model differs"},
		{"another revision", orig, func(m *schema.Manifest, _ string) { m.Model.Revision = "synthetic-v2" }, Inconclusive, "model_revision differs", ""},
		{"measured against synthetic", orig, func(m *schema.Manifest, _ string) { m.Evidence = schema.EvidenceIndependent }, Inconclusive,
			"the original is synthetic (benchseal's simulator or synthetic evidence) and the reproduction measured on an inference server", ""},
		{"fewer repeats", orig, func(m *schema.Manifest, d string) { m.Load.Repeats = 6; keepRepeats(t, d, 6) }, Inconclusive,
			"the reproduction ran 6 repeats, fewer than the original's 10", ""},
		{"counts only", countsOnly, nil, Inconclusive, OnlyCountsAndFlagsText, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			d := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "-"))
			rd := anotherRun(t, origDir, d, 0.04, origDigest)
			if c.edit != nil {
				m := rd.Manifest()
				c.edit(m, d)
				b, err := schema.MarshalDocument(m)
				if err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(filepath.Join(d, schema.ManifestFile), b, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			rep, err := Evaluate(context.Background(), Original{Name: "orig", Bundle: c.orig, Verification: verified()}, d, Options{Margin: 0.5})
			if err != nil {
				t.Fatal(err)
			}
			// (Fewer repeats decide fewer claims: some may stay
			// inconclusive.)
			if rep.Counts.NotReproduced+rep.Counts.Inconclusive != 0 && c.name != "fewer repeats" {
				t.Fatalf("counts %+v: every claim should reproduce", rep.Counts)
			}
			w := strings.Join(rep.Withheld, "\n")
			if rep.Overall != c.want || (c.withheld == "") != (w == "") || !strings.Contains(w, c.withheld) {
				t.Fatalf("overall %s withheld %q, want %s withheld %q", rep.Overall, w, c.want, c.withheld)
			}
			if l := strings.Join(rep.Limits, "\n"); c.limit != "" && !strings.Contains(l, c.limit) {
				t.Errorf("limits %q lack %q", l, c.limit)
			}
		})
	}
}

// OnlyCountsAndFlagsText is the reason a counts-only reproduction is
// withheld (verdict.OnlyCountsAndFlags).
const OnlyCountsAndFlagsText = "only counts and flags were tested: any server that answers reproduces them"

// keepRepeats drops from d's records every repeat from n on.
func keepRepeats(t *testing.T, d string, n int) {
	t.Helper()
	p := filepath.Join(d, schema.RecordsFile)
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	var out strings.Builder
	for _, line := range strings.SplitAfter(string(b), "\n") {
		var r struct{ Repeat int }
		if line == "" || json.Unmarshal([]byte(line), &r) != nil || r.Repeat >= n {
			continue
		}
		out.WriteString(line)
	}
	if err := os.WriteFile(p, []byte(out.String()), 0o644); err != nil {
		t.Fatal(err)
	}
}

// writeManifest writes m as dir's manifest.json.
func writeManifest(t *testing.T, dir string, m *schema.Manifest) {
	t.Helper()
	b, err := schema.MarshalDocument(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, schema.ManifestFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestEvaluateRefusesShortOutputsOfAForcedLength: the original's test
// forces the output length (decoding.ignore_eos) and a reproduction
// stating the same test has ok records shorter than their workload
// item's max_tokens (the synthetic server stops at end of sequence): it
// did not run the test, and Evaluate says which record fell short, by
// how much and how many did. Without the force on either side the same
// records reproduce.
func TestEvaluateRefusesShortOutputsOfAForcedLength(t *testing.T) {
	dir := t.TempDir()
	origDir, reproDir := filepath.Join(dir, "orig"), filepath.Join(dir, "repro")
	orig := synthRun(t, origDir, 3, 3, true, "")
	rd := anotherRun(t, origDir, reproDir, 0.04, origDigest)
	ok := Original{Name: "orig", Bundle: orig, Verification: verified()}
	if _, err := Evaluate(context.Background(), ok, reproDir, Options{Margin: 0.5}); err != nil {
		t.Fatalf("not forced: %v", err)
	}
	om, rm := orig.Manifest(), rd.Manifest()
	om.Decoding.IgnoreEOS, rm.Decoding.IgnoreEOS = true, true
	writeManifest(t, origDir, om)
	writeManifest(t, reproDir, rm)
	orig, err := schema.OpenRunDir(origDir)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Evaluate(context.Background(), Original{Name: "orig", Bundle: orig, Verification: verified()}, reproDir, Options{Margin: 0.5})
	if !errors.Is(err, ErrNotAReproduction) {
		t.Fatalf("Evaluate: %v, want ErrNotAReproduction", err)
	}
	for _, w := range []string{"the test forces the output length (decoding.ignore_eos/min_tokens), but record ", " output tokens, its forced length is ", " ok records are shorter than forced"} {
		if !strings.Contains(err.Error(), w) {
			t.Errorf("error %v, want %q", err, w)
		}
	}
	t.Log(err)
}

// TestMaxItemsIsCaptures: rerun reads as many workload items as capture
// writes at most.
func TestMaxItemsIsCaptures(t *testing.T) {
	if rerun.MaxItems != capture.MaxWorkloadItems {
		t.Fatalf("rerun.MaxItems %d, capture.MaxWorkloadItems %d", rerun.MaxItems, capture.MaxWorkloadItems)
	}
}

// TestSetupWithheldReproductionWithoutServerScrapes: an original that
// stores server scrapes and a reproduction over HTTP that stores none is
// withheld as less evidenced; with scrapes, captured in process, or
// against an original without scrapes, it is not.
func TestSetupWithheldReproductionWithoutServerScrapes(t *testing.T) {
	scraped := &schema.ServerMetrics{URL: "http://127.0.0.1:8000/metrics", Scrapes: []schema.Scrape{{Point: "c2", When: "before", File: "server-metrics/000001.prom"}}}
	manifest := func(sm *schema.ServerMetrics, inProcess bool) *schema.Manifest {
		m := &schema.Manifest{ServerMetrics: sm}
		m.Load.Repeats = 3
		m.Client.Name = schema.CaptureClientName
		m.Client.CommandLine = []string{"benchseal", "capture", "--endpoint", "http://127.0.0.1:8000"}
		if inProcess {
			m.Client.CommandLine = []string{"benchseal", "capture", "--simulate"}
		}
		return m
	}
	const words = "stores no server scrapes (manifest.server_metrics) where the original stores 1: it is less evidenced than the original"
	for _, c := range []struct {
		name     string
		om, rm   *schema.Manifest
		withheld bool
	}{
		{"scrapes dropped over HTTP", manifest(scraped, false), manifest(nil, false), true},
		{"an empty scrape list over HTTP", manifest(scraped, false), manifest(&schema.ServerMetrics{}, false), true},
		{"scrapes kept", manifest(scraped, false), manifest(scraped, false), false},
		{"in process", manifest(scraped, false), manifest(nil, true), false},
		{"original without scrapes", manifest(nil, false), manifest(nil, false), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := strings.Join(setupWithheld(c.om, c.rm, &compare.Guard{}), "\n")
			if strings.Contains(w, words) != c.withheld {
				t.Fatalf("withheld %q, want it withheld: %v", w, c.withheld)
			}
		})
	}
}

// TestSetupWithheldReproductionOnAWarmServer: a reproduction whose server
// had served 57 requests before it and whose prefix cache no reset
// emptied is withheld when the original's server was fresh (or its cache
// empty), saying what it had served; a confirmed reset, a fresh server, or
// an original as warm as it is not withheld.
func TestSetupWithheldReproductionOnAWarmServer(t *testing.T) {
	n, p := 57.0, 1824.0
	state := func(fresh bool, cache, source string) *schema.ServerState {
		ss := &schema.ServerState{Fresh: &schema.FreshStart{Fresh: fresh, Source: schema.StateMeasured}}
		if !fresh {
			ss.Fresh.RequestsBefore, ss.Fresh.PromptTokensBefore = &n, &p
		}
		for r := range 2 {
			ss.Points = append(ss.Points, schema.PointState{Point: "c2", Repeat: r, PrefixCache: cache, PrefixCacheSource: source})
		}
		return ss
	}
	manifest := func(ss *schema.ServerState) *schema.Manifest {
		m := &schema.Manifest{ServerState: ss}
		m.Load.Repeats = 2
		return m
	}
	const words = "the reproduction's server was not fresh (server_state.fresh, measured: 57 requests and 1824 prompt tokens served before it) and no confirmed reset emptied its prefix cache at 2 of 2 point(s)"
	for _, c := range []struct {
		name     string
		om, rm   *schema.ServerState
		withheld bool
	}{
		{"warm, cache unknown, fresh original", state(true, schema.PrefixCacheUnknown, ""), state(false, schema.PrefixCacheUnknown, ""), true},
		{"warm, cache unknown, original's cache reset", state(false, schema.PrefixCacheEmpty, schema.StateReset), state(false, schema.PrefixCacheUnknown, ""), true},
		{"warm, cache reset", state(true, schema.PrefixCacheUnknown, ""), state(false, schema.PrefixCacheEmpty, schema.StateReset), false},
		{"warm, no cache", state(true, schema.PrefixCacheUnknown, ""), state(false, schema.PrefixCacheDisabled, schema.StateDeclared), false},
		{"fresh", state(true, schema.PrefixCacheUnknown, ""), state(true, schema.PrefixCacheUnknown, ""), false},
		{"original as warm", state(false, schema.PrefixCacheUnknown, ""), state(false, schema.PrefixCacheUnknown, ""), false},
		{"original states nothing", nil, state(false, schema.PrefixCacheUnknown, ""), false},
	} {
		t.Run(c.name, func(t *testing.T) {
			w := strings.Join(setupWithheld(manifest(c.om), manifest(c.rm), &compare.Guard{}), "\n")
			if strings.Contains(w, words) != c.withheld {
				t.Fatalf("withheld %q, want it withheld: %v", w, c.withheld)
			}
		})
	}
}
