package reproduce

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/replay"
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

func verified() *verify.Result {
	return &verify.Result{Verified: true, Authenticated: true, ManifestDigest: origDigest}
}

// TestEvaluateSameRunIsReproduced: a reproduction with the original's
// very records (the same seeded synthetic run, 10 repeats) reproduces
// every claim within ±50 % (the synthetic repeats differ widely from one
// another, and the interval spans that spread), each ratio exactly 1.
func TestEvaluateSameRunIsReproduced(t *testing.T) {
	dir := t.TempDir()
	orig := synthRun(t, filepath.Join(dir, "orig"), 3, 10, true, "")
	synthRun(t, filepath.Join(dir, "repro"), 3, 10, false, origDigest)
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
		if c.Kind == KindRatio && c.Ratio != nil && *c.Ratio != 1 {
			t.Errorf("%s %s: ratio %v, want exactly 1", c.Point, c.Metric, *c.Ratio)
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
	synthRun(t, filepath.Join(dir, "repro"), 3, 1, false, origDigest)
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
	if got := transportLimit("pub.tar", inproc, "repro", http); !strings.Contains(got, "pub.tar against the in-process simulator (capture --simulate, no HTTP); repro against an HTTP endpoint") {
		t.Errorf("in-process vs HTTP: %q", got)
	}
	if got := transportLimit("pub.tar", http, "repro", inproc); !strings.Contains(got, "pub.tar against an HTTP endpoint; repro against the in-process simulator") {
		t.Errorf("HTTP vs in-process: %q", got)
	}
	if got := transportLimit("pub.tar", http, "repro", mk("--endpoint", "http://127.0.0.1:2")); got != "" {
		t.Errorf("both HTTP: %q", got)
	}
}
