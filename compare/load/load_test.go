package load_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/compare"
	"github.com/benchseal/benchseal/compare/load"
	"github.com/benchseal/benchseal/internal/progress"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/synth"
)

// synthRun writes a small synthetic run (2 concurrency points × 8
// repeats) with the given seed.
func synthRun(t testing.TB, dir string, seed uint64) string {
	t.Helper()
	o := synth.DefaultOptions()
	o.Seed, o.Requests, o.Points, o.Repeats, o.Warmup = seed, 2*8*60, []float64{4, 16}, 8, 2
	w, err := schema.CreateRun(dir, false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := synth.Generate(context.Background(), o, w); err != nil {
		w.Abort()
		t.Fatal(err)
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// derive copies the run at src to dst, scaling its whole timeline (send
// times, and chunk and end offsets from the send) by num/den and changing the
// manifest with edit: an injected difference of known size.
func derive(t testing.TB, src, dst string, num, den int64, edit func(m *schema.Manifest)) string {
	t.Helper()
	return deriveRecords(t, src, dst, num, den, edit, nil)
}

// deriveRecords is derive with editRec applied to every record before
// the scaling (nil: none).
func deriveRecords(t testing.TB, src, dst string, num, den int64, edit func(m *schema.Manifest), editRec func(rec *schema.Record)) string {
	t.Helper()
	rd, err := schema.OpenRunDir(src)
	if err != nil {
		t.Fatal(err)
	}
	w, err := schema.CreateRun(dst, false)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	m := *rd.Manifest()
	m.RunID += "-derived"
	if edit != nil {
		edit(&m)
	}
	if err := w.SetManifest(&m); err != nil {
		t.Fatal(err)
	}
	wl, err := os.Open(filepath.Join(src, "workload.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer wl.Close()
	if _, _, err := w.WriteWorkload(wl); err != nil {
		t.Fatal(err)
	}
	it, err := rd.OpenRecords()
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	for {
		rec, err := it.Next()
		if err != nil {
			break
		}
		if editRec != nil {
			editRec(rec)
		}
		for i := range rec.ChunksNS {
			rec.ChunksNS[i] = rec.ChunksNS[i] * num / den
		}
		rec.EndNS = rec.EndNS * num / den
		rec.SentNS = rec.SentNS * num / den
		if rec.ScheduledNS != nil {
			v := *rec.ScheduledNS * num / den
			rec.ScheduledNS = &v
		}
		if err := w.WriteRecord(rec); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	return dst
}

func inputs(t testing.TB, opts load.Options, paths ...string) []*compare.Input {
	t.Helper()
	var out []*compare.Input
	for _, p := range paths {
		in, err := load.Input(context.Background(), p, opts)
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, in)
	}
	return out
}

func find(t *testing.T, r *compare.Result, load, metric string) compare.Comparison {
	t.Helper()
	for _, c := range r.Comparisons {
		if c.Load == load && c.Metric.Path == metric {
			return c
		}
	}
	t.Fatalf("no comparison of %s at %s", metric, load)
	return compare.Comparison{}
}

// A known injected difference (the whole timeline 50 % slower) is found
// significant at every matched point, in the right direction and size.
//
// The synthetic server hangs a few requests until the 30 s request
// timeout; a hung request holds the elapsed window open, so in a 3 s
// repeat it, not the injected slowdown, would decide the rates. The
// base run turns each hang into an error at its last chunk (or send).
func TestCompareDetectsInjectedSlowdown(t *testing.T) {
	dir := t.TempDir()
	a := deriveRecords(t, synthRun(t, filepath.Join(dir, "synth"), 1), filepath.Join(dir, "a"), 1, 1, nil, func(rec *schema.Record) {
		if rec.Status == schema.StatusTimeout {
			rec.Status, rec.EndNS = schema.StatusError, rec.SentNS
			if k := len(rec.ChunksNS); k > 0 {
				rec.EndNS += rec.ChunksNS[k-1]
			}
		}
	})
	b := derive(t, a, filepath.Join(dir, "b"), 3, 2, nil)
	res, err := compare.Compare(inputs(t, load.Options{}, a, b), compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if res.Guard.Verdict == compare.Refused || len(res.Guard.Limits) != 1 {
		t.Fatalf("guard %s: %v %v", res.Guard.Verdict, res.Guard.Refusals, res.Guard.Limits)
	}
	if len(res.Loads) != 2 || res.Tests == 0 {
		t.Fatalf("loads %v tests %d", res.Loads, res.Tests)
	}
	for _, l := range res.Loads {
		for _, m := range []string{"ttft_ns.p50", "e2e_ns.p50", "tpot_ns.p50"} {
			c := find(t, res, l, m)
			if !c.Significant || c.Better || c.P > 0.01 {
				t.Errorf("%s %s: significant %v better %v p %v", l, m, c.Significant, c.Better, c.P)
			}
			ch, _ := c.Change.Float64()
			if ch < 0.4999 || ch > 0.5001 {
				t.Errorf("%s %s: change %v, want +50 %%", l, m, ch)
			}
		}
	}
	// Throughput falls by exactly a third.
	if c := find(t, res, "concurrency 16", "request_throughput"); !c.Significant || c.Better {
		t.Errorf("throughput: %+v", c)
	} else if ch, _ := c.Change.Float64(); ch < -0.33334 || ch > -0.33333 {
		t.Errorf("throughput change %v, want -33.33 %%", ch)
	}
	// Holm over every test keeps the latency differences significant.
	res, _ = compare.Compare(inputs(t, load.Options{}, a, b), compare.Options{Correction: compare.CorrectionHolm})
	if c := find(t, res, "concurrency 4", "ttft_ns.p50"); !c.Significant || c.PAdjusted < c.P {
		t.Errorf("holm: %+v", c)
	}
	// The faster configuration wins max-goodput, with a margin.
	d, err := compare.Decide(inputs(t, load.Options{}, b, a), compare.DecideOptions{Objective: compare.MaxGoodput})
	if err != nil {
		t.Fatal(err)
	}
	if d.Verdict != compare.Winner || d.Winner != 1 || d.Margin.IsNull() {
		t.Errorf("decide: %s winner %d margin %v: %s", d.Verdict, d.Winner, d.Margin, d.Answer)
	}
}

// Two runs of the same seed are the same: every test says "~", and
// decide names no winner.
func TestCompareSameSeedIsNotSignificant(t *testing.T) {
	dir := t.TempDir()
	a := synthRun(t, filepath.Join(dir, "a"), 7)
	b := synthRun(t, filepath.Join(dir, "b"), 7)
	// Two runs, not one given twice (compare refuses a run_id shared).
	twoRuns := func() []*compare.Input {
		ins := inputs(t, load.Options{}, a, b)
		ins[1].Manifest.RunID += "-b"
		return ins
	}
	res, err := compare.Compare(twoRuns(), compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range res.Comparisons {
		if c.Significant {
			t.Errorf("%s %s significant (p %v)", c.Load, c.Metric.Path, c.P)
		}
	}
	d, err := compare.Decide(twoRuns(), compare.DecideOptions{Objective: compare.MaxGoodput})
	if err != nil {
		t.Fatal(err)
	}
	if d.Verdict != compare.NoSignificantWinner || d.Winner != -1 || !strings.Contains(d.Answer, "the medians of") {
		t.Errorf("decide: %s %d: %s", d.Verdict, d.Winner, d.Answer)
	}
	// Every load meets the SLO: capacity is not bounded by the test, so
	// neither bound decides, and the answer says why.
	d, err = compare.Decide(twoRuns(), compare.DecideOptions{Objective: compare.MaxCapacity})
	if err != nil {
		t.Fatal(err)
	}
	if d.Verdict != compare.NoDecision || !strings.Contains(d.Answer, "neither bound decides") || !strings.Contains(d.Answer, "never crossed") {
		t.Errorf("decide capacity: %s: %s %q", d.Verdict, d.Answer, d.Limits)
	}
}

// Different workloads are refused with the reason, unless allowed, and
// the acceptance is part of the result.
func TestCompareRefusesDifferentWorkload(t *testing.T) {
	dir := t.TempDir()
	a := synthRun(t, filepath.Join(dir, "a"), 1)
	b := synthRun(t, filepath.Join(dir, "b"), 2)
	ins := inputs(t, load.Options{}, a, b)
	res, _ := compare.Compare(ins, compare.Options{})
	if res.Guard.Verdict != compare.Refused || len(res.Comparisons) != 0 || !strings.Contains(strings.Join(res.Guard.Refusals, ";"), "--allow-different-workload") {
		t.Fatalf("guard %s %v, %d comparisons", res.Guard.Verdict, res.Guard.Refusals, len(res.Comparisons))
	}
	d, _ := compare.Decide(ins, compare.DecideOptions{Objective: compare.MaxGoodput})
	if d.Verdict != compare.NoDecision || d.Winner != -1 {
		t.Errorf("decide on refused inputs: %s", d.Answer)
	}
	res, _ = compare.Compare(ins, compare.Options{Guard: compare.GuardOptions{Allow: []string{compare.CheckWorkload}}})
	if res.Guard.Verdict != compare.WithDifferences || !res.Guard.Check(compare.CheckWorkload).Allowed || len(res.Comparisons) == 0 {
		t.Errorf("allowed: %s %v", res.Guard.Verdict, res.Guard.Allowed)
	}
}

// A quantized run whose quality gate failed is refused; one without any
// gate is not even a valid run.
func TestCompareRefusesQuantizedWithoutPassingGate(t *testing.T) {
	dir := t.TempDir()
	a := synthRun(t, filepath.Join(dir, "a"), 1)
	failed := derive(t, a, filepath.Join(dir, "fp8"), 1, 1, func(m *schema.Manifest) {
		m.Model.Precision = "fp8"
		m.QualityGate = &schema.QualityGate{Check: "lm-eval", Dataset: "gsm8k", Metric: "exact_match", Threshold: 0.8, Result: 0.5, Passed: false}
	})
	res, _ := compare.Compare(inputs(t, load.Options{}, a, failed), compare.Options{Guard: compare.GuardOptions{Allow: []string{compare.CheckWorkload}}})
	if res.Guard.Verdict != compare.Refused || !strings.Contains(strings.Join(res.Guard.Refusals, ";"), "quality gate failed") {
		t.Errorf("failed gate: %s %v", res.Guard.Verdict, res.Guard.Refusals)
	}
	// Without a gate the manifest is invalid: rejected before comparing.
	b, _ := os.ReadFile(filepath.Join(failed, "manifest.json"))
	s := strings.Replace(string(b), `"quality_gate"`, `"x_gate"`, 1)
	nogate := filepath.Join(dir, "nogate")
	os.CopyFS(nogate, os.DirFS(failed))
	os.WriteFile(filepath.Join(nogate, "manifest.json"), []byte(s), 0o644)
	if _, err := load.Input(context.Background(), nogate, load.Options{}); !errors.Is(err, load.ErrRejected) {
		t.Errorf("quantized without a gate: %v", err)
	}
}

// A bundle is read through the verifier: verified by the pinned key, or
// refused without one, or labelled unsigned.
func TestLoadBundleVerification(t *testing.T) {
	dir := t.TempDir()
	p, pub := artifacttest.SignedBundle(t, filepath.Join(dir, "b.tar"))
	in, err := load.Input(context.Background(), p, load.Options{Keys: []*artifact.PublicKey{pub}})
	if err != nil {
		t.Fatal(err)
	}
	if in.Verification.Status != compare.Verified || len(in.Verification.Keys) != 1 || in.Verification.Keys[0] != pub.Fingerprint() || !strings.HasPrefix(in.Verification.BundleDigest, "sha256:") {
		t.Errorf("verification %+v", in.Verification)
	}
	if _, err := load.Input(context.Background(), p, load.Options{}); err == nil {
		t.Error("a bundle without a key was accepted")
	}
	in, err = load.Input(context.Background(), p, load.Options{AllowUnsignedUnsafe: true})
	if err != nil || in.Verification.Status != compare.Unsigned {
		t.Errorf("unsigned: %v %+v", err, in)
	}
	other := artifacttest.Reviewer(t).Public()
	if _, err := load.Input(context.Background(), p, load.Options{Keys: []*artifact.PublicKey{other}}); !errors.Is(err, load.ErrRejected) {
		t.Errorf("wrong key: %v", err)
	}
	// With several keys (one per publisher) the bundle verifies under the
	// one that signed it, which is recorded.
	in, err = load.Input(context.Background(), p, load.Options{Keys: []*artifact.PublicKey{other, pub}})
	if err != nil || in.Verification.Status != compare.Verified || in.Verification.Keys[0] != pub.Fingerprint() {
		t.Errorf("two keys: %v %+v", err, in)
	}
}

// BenchmarkCompareSynthetic measures loading (validate + replay) and
// comparing two small synthetic runs; the 1,000,000-request figures are
// scripts/bench.d/compare.sh.
func BenchmarkCompareSynthetic(b *testing.B) {
	dir := b.TempDir()
	a := synthRun(b, filepath.Join(dir, "a"), 1)
	c := derive(b, a, filepath.Join(dir, "c"), 3, 2, nil)
	for b.Loop() {
		ins := inputs(b, load.Options{}, a, c)
		if _, err := compare.Compare(ins, compare.Options{Correction: compare.CorrectionHolm}); err != nil {
			b.Fatal(err)
		}
	}
}

// A verified bundle is replayed once: the claims recompute's replay,
// made under the options compare asks for, is the input's result (no
// second "replay: read records" phase), and it is the replay compare
// made before; options the recompute did not use (an SLO) still replay.
func TestLoadBundleReplaysOnce(t *testing.T) {
	dir := t.TempDir()
	p, pub := artifacttest.SignedBundle(t, filepath.Join(dir, "b.tar"))
	for _, c := range []struct {
		name    string
		opts    replay.Options
		replays int
	}{
		{"claims' options", replay.Options{}, 0},
		{"another SLO", replay.Options{SLO: &replay.SLOSpec{E2ENS: new(int64(5e9)), OneToken: schema.OneTokenPass, Source: "flag"}}, 1},
	} {
		var mu sync.Mutex
		replays := 0
		ctx := progress.With(context.Background(), func(u progress.Update) {
			if strings.HasSuffix(u.Phase, "replay: read records") && u.Done == 0 {
				mu.Lock()
				replays++
				mu.Unlock()
			}
		})
		in, err := load.Input(ctx, p, load.Options{Keys: []*artifact.PublicKey{pub}, Replay: c.opts})
		if err != nil {
			t.Fatal(err)
		}
		if replays != c.replays {
			t.Errorf("%s: %d replays after verify, want %d", c.name, replays, c.replays)
		}
		b, err := artifact.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		want, err := replay.Replay(context.Background(), b, c.opts)
		b.Close()
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(in.Result, want) {
			t.Errorf("%s: the input's result differs from a replay of the bundle", c.name)
		}
	}
}
