package verify_test

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/importer"
	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/simulator"
	"github.com/benchseal/benchseal/verify"
	"github.com/klauspost/compress/zstd"
)

// The tests in this file reproduce forgeries by a publisher who holds the
// signing key: capture a run against the simulator, edit its records and
// manifest as an attacker would, recompute the claims from the edited
// records, pack and sign it, and verify. Each forgery is one the bundle's
// own evidence contradicts, so verify must reject it; the honest capture
// it was made from must verify.

// forgeRun is a captured run held in memory for editing.
type forgeRun struct {
	m    *schema.Manifest
	recs []*schema.Record
	dir  string
}

// captureSim captures plan against a simulator at the given time scale
// (with its /metrics scraped when scrape is set) and reads the run back.
func captureSim(t *testing.T, plan capture.Plan, scale float64, scrape bool, mod func(*capture.Options)) *forgeRun {
	t.Helper()
	return captureFlavor(t, plan, scale, "", scrape, mod)
}

// captureFlavor is captureSim against the simulator flavor flavor ("":
// vLLM's).
func captureFlavor(t *testing.T, plan capture.Plan, scale float64, flavor string, scrape bool, mod func(*capture.Options)) *forgeRun {
	t.Helper()
	return captureServed(t, plan, scale, flavor, scrape, mod, nil)
}

// captureServed is captureFlavor with the simulator's handler wrapped by
// wrap (nil: served as it is).
func captureServed(t *testing.T, plan capture.Plan, scale float64, flavor string, scrape bool, mod func(*capture.Options), wrap func(http.Handler) http.Handler) *forgeRun {
	t.Helper()
	cfg := simulator.DefaultConfig()
	cfg.Seed = 7
	cfg.TimeScale = scale
	if flavor != "" {
		cfg.Flavor = flavor
	}
	sim, err := simulator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var h http.Handler = sim
	if wrap != nil {
		h = wrap(sim)
	}
	ts := httptest.NewServer(h)
	defer ts.Close()
	o := capture.Options{
		Endpoint:      ts.URL,
		Request:       capture.RequestOptions{Model: "benchseal-sim", API: capture.APIChat, Stream: true, ForceLength: true},
		Plan:          plan,
		OutDir:        filepath.Join(t.TempDir(), "run"),
		SkipPreflight: true,
		Simulator:     true,
		ServerMetrics: "",
	}
	if scrape {
		o.ServerMetrics = ts.URL + "/metrics"
	}
	if mod != nil {
		mod(&o)
	}
	if _, err := capture.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	return readForgeRun(t, o.OutDir)
}

func readForgeRun(t *testing.T, dir string) *forgeRun {
	t.Helper()
	m, recs := artifacttest.ReadRun(t, dir)
	return &forgeRun{m: m, dir: dir, recs: recs}
}

// write rewrites the run directory from fr (records, manifest) and
// recomputes the claims from the records, as a forger would before
// packing.
func (fr *forgeRun) write(t *testing.T) {
	t.Helper()
	for _, name := range []string{schema.RecordsFile, schema.RecordsZstdFile, schema.ClaimsFile} {
		os.Remove(filepath.Join(fr.dir, name))
	}
	f, err := os.Create(filepath.Join(fr.dir, schema.RecordsFile))
	if err != nil {
		t.Fatal(err)
	}
	rw, err := schema.NewRecordWriter(f, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range fr.recs {
		if err := rw.Write(r); err != nil {
			t.Fatal(err)
		}
	}
	if err := rw.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := schema.MarshalDocument(fr.m)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fr.dir, schema.ManifestFile), b, 0o644); err != nil {
		t.Fatal(err)
	}
	rd, err := schema.OpenRunDir(fr.dir)
	if err != nil {
		t.Fatal(err)
	}
	res, err := replay.Replay(context.Background(), rd, replay.Options{})
	if err != nil {
		t.Fatal(err)
	}
	cb, err := schema.MarshalDocument(res.Claims(nil, replay.DefaultClaimTolerance))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(fr.dir, schema.ClaimsFile), cb, 0o644); err != nil {
		t.Fatal(err)
	}
}

// pack packs the honest run directory fr.dir (before any edit) into a
// bundle and returns its path.
func (fr *forgeRun) pack(t *testing.T) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "bundle")
	if _, err := artifact.Pack(context.Background(), fr.dir, out, artifact.PackOptions{Created: artifacttest.Created}); err != nil {
		t.Fatal(err)
	}
	return out
}

// forge writes the edited run (fr.write) and checks it twice, as the two
// tools a forger meets: validate on the run directory (which pack runs
// before it packs anything) and verify on a bundle built from the honest
// one (bundle, packed by fr.pack before the edit) with the forged
// manifest, claims and record shards swapped in and signed with the
// publisher's key, as a forger with a patched pack would. It returns
// validate's error and verify's result and error.
func (fr *forgeRun) forge(t *testing.T, bundle string) (error, *verify.Result, error) {
	t.Helper()
	fr.write(t)
	verr := validateRun(fr.dir)
	rd, err := schema.OpenRunDir(fr.dir)
	if err != nil {
		t.Fatal(err)
	}
	b, err := artifact.Open(bundle)
	if err != nil {
		t.Fatal(err)
	}
	layers := b.Layers()
	honest := b.Manifest().Load.Points
	b.Close()
	for i, l := range layers {
		switch l.Kind {
		case artifact.KindManifest:
			raw, err := schema.MarshalDocument(fr.m)
			if err != nil {
				t.Fatal(err)
			}
			artifacttest.ReplaceLayer(t, bundle, i, raw, nil)
		case artifact.KindClaims:
			raw, err := schema.MarshalDocument(rd.Claims())
			if err != nil {
				t.Fatal(err)
			}
			artifacttest.ReplaceLayer(t, bundle, i, raw, nil)
		case artifact.KindWorkload:
			// The run directory's workload, edited or not.
			plain, err := os.ReadFile(filepath.Join(fr.dir, schema.WorkloadFile))
			if err != nil {
				t.Fatal(err)
			}
			zw, _ := zstd.NewWriter(nil)
			artifacttest.ReplaceLayer(t, bundle, i, zw.EncodeAll(plain, nil), map[string]string{
				artifact.AnnotationUncompressedDigest: string(artifact.DigestBytes(plain)),
				artifact.AnnotationUncompressedSize:   strconv.Itoa(len(plain)),
			})
		case artifact.KindRecords:
			// The forged run keeps the honest run's points in order,
			// perhaps renamed.
			point := fr.m.Load.Points[slices.IndexFunc(honest, func(p schema.Point) bool { return p.Name == l.Point })].Name
			var plain, packed bytes.Buffer
			pw, _ := schema.NewRecordWriter(&plain, false)
			zw, _ := schema.NewRecordWriter(&packed, true)
			for _, r := range fr.recs {
				if r.Point == point && r.Repeat == l.Repeat {
					pw.Write(r)
					zw.Write(r)
				}
			}
			if err := pw.Close(); err != nil {
				t.Fatal(err)
			}
			if err := zw.Close(); err != nil {
				t.Fatal(err)
			}
			artifacttest.ReplaceLayer(t, bundle, i, packed.Bytes(), map[string]string{
				artifact.AnnotationUncompressedDigest: string(artifact.DigestBytes(plain.Bytes())),
				artifact.AnnotationUncompressedSize:   strconv.Itoa(plain.Len()),
				artifact.AnnotationRecords:            strconv.FormatInt(pw.Count(), 10),
				artifact.AnnotationPoint:              point,
				artifact.AnnotationTitle:              strings.Replace(l.Title, "/"+l.Point+"/", "/"+point+"/", 1),
			})
		}
	}
	sig := artifacttest.SignStatementOf(t, bundle)
	v := newVerifier(t, []*artifact.PublicKey{artifacttest.Publisher(t).Public()}, verify.WithClaimChecker(replay.ClaimChecker{}))
	res, err := v.Verify(context.Background(), bundle, verify.Policy{Detached: [][]byte{sig}})
	return verr, res, err
}

// validateRun runs validate's checks on the run directory dir, as
// benchseal validate and pack do: the run's own, then its stored scrapes
// against the manifest and the records.
func validateRun(dir string) error {
	sum, err := schema.CheckRunDir(context.Background(), dir, 50, nil)
	var ve *schema.ValidationError
	if err != nil && !errors.As(err, &ve) {
		return err
	}
	if probs := artifact.CheckRunDirServerEvidence(dir, sum); len(probs) > 0 {
		if ve == nil {
			ve = &schema.ValidationError{}
		}
		ve.Problems = append(ve.Problems, probs...)
	}
	if ve == nil {
		return nil
	}
	return ve
}

// wantRejected fails t unless validate and verify both rejected the
// forgery with a message holding want.
func wantRejected(t *testing.T, verr error, res *verify.Result, err error, want string) {
	t.Helper()
	if verr == nil || !strings.Contains(verr.Error(), want) {
		t.Errorf("validate: want a problem with %q, got %v", want, verr)
	}
	if err == nil || res == nil || res.Verified {
		t.Errorf("verify: VERIFIED the forgery (err %v)", err)
		return
	}
	if !strings.Contains(fmt.Sprintf("%+v", res), want) {
		t.Errorf("verify: rejected, but not for %q: %v", want, err)
	}
}

// wantVerified fails t unless the honest run validates and verifies.
func wantVerified(t *testing.T, fr *forgeRun) {
	t.Helper()
	if err := validateRun(fr.dir); err != nil {
		t.Fatalf("honest capture does not validate: %v", err)
	}
	out := fr.pack(t)
	s := artifacttest.Publisher(t)
	if _, err := artifact.Sign(context.Background(), out, s); err != nil {
		t.Fatal(err)
	}
	v := newVerifier(t, []*artifact.PublicKey{s.Public()}, verify.WithClaimChecker(replay.ClaimChecker{}))
	if res, err := v.Verify(context.Background(), out, verify.Policy{}); err != nil || !res.Verified {
		t.Fatalf("honest capture does not verify: %v", err)
	}
}

// relay moves the measured requests of fr (closed loop, one point) onto
// workers new workers, each sending its next request pause after its
// previous one ended, keeping every request's own latency and chunk
// offsets, and relabels the point's concurrency (and its name, ids and
// the records' point) to workers.
func (fr *forgeRun) relay(t *testing.T, workers int, pause int64) {
	t.Helper()
	p := &fr.m.Load.Points[0]
	old := p.Name
	p.Name, p.Concurrency = fmt.Sprintf("c%d", workers), workers
	slices.SortFunc(fr.recs, func(a, b *schema.Record) int { return cmp.Compare(a.SentNS, b.SentNS) })
	free := make([]int64, workers)
	for i := range free {
		free[i] = fr.recs[0].SentNS - pause
	}
	for _, r := range fr.recs {
		w := slices.Index(free, slices.Min(free))
		lat := r.EndNS - r.SentNS
		r.SentNS = free[w] + pause
		r.EndNS = r.SentNS + lat
		free[w] = r.EndNS
		r.Point = p.Name
		r.ID = p.Name + strings.TrimPrefix(r.ID, old)
	}
	slices.SortFunc(fr.recs, func(a, b *schema.Record) int { return cmp.Compare(a.ID, b.ID) })
}

// TestForgedClosedLoopRetimingIsRejected: a concurrency-4 capture re-laid
// as 16 workers, each re-sending 5 ms after its previous request ended,
// keeps every request's latency (offsets from its own sent_ns) and so
// every latency claim, at a higher throughput; the peak in flight (16)
// matches the new label. The turnaround test rejects it (median
// turnaround over schema.MaxMedianTurnaroundNS, idle over
// schema.MaxIdleShare); the capture it was made from verifies.
func TestForgedClosedLoopRetimingIsRejected(t *testing.T) {
	fr := captureSim(t, capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 4, Requests: 96}}, Seed: 1, InputTokens: 32, OutputTokens: 8}, 0.01, false, nil)
	fr.write(t)
	wantVerified(t, fr)
	bundle := fr.pack(t)
	fr.relay(t, 16, 5_000_000)
	verr, res, err := fr.forge(t, bundle)
	wantRejected(t, verr, res, err, "workers are idle")
}

// TestForgedTokenCountsAreRejected: token counts inflated beyond what the
// workload item and the request parameters allow. input_tokens had no
// bound (×100 verified, total token throughput ×~60); output_tokens above
// the item's output_tokens verified after the manifest's max_tokens was
// raised to match (×16), and with a prompts file whose items carry their
// own output_tokens (no single max_tokens in the manifest) ×1000 verified
// with no edit at all.
func TestForgedTokenCountsAreRejected(t *testing.T) {
	plan := capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 2, Requests: 16}}, Seed: 1, InputTokens: 32, OutputTokens: 8}
	prompts := []capture.Item{{Prompt: "say one thing", OutputTokens: 4}, {Prompt: "say two things", OutputTokens: 6}, {Prompt: "say three things", OutputTokens: 9}}
	cases := []struct {
		name    string
		prompts []capture.Item
		edit    func(fr *forgeRun)
		want    string
	}{
		{"input ×100", nil, func(fr *forgeRun) {
			for _, r := range fr.recs {
				r.InputTokens *= 100
			}
		}, "input_tokens"},
		{"input to the prompt's bytes with the items' input_tokens deleted", nil, func(fr *forgeRun) {
			fr.dropItemInputTokens(t)
		}, "load.points[0].input_tokens"},
		{"output ×16 with max_tokens raised", nil, func(fr *forgeRun) {
			d := &fr.m.Decoding
			d.MaxTokens, d.MinTokens = 16*d.MaxTokens, 16*d.MinTokens
			fr.m.Load.Points[0].OutputTokens *= 16
			w := fr.m.Workload.OutputTokens
			w.Min, w.Max, w.Mean = 16*w.Min, 16*w.Max, 16*w.Mean
			for _, r := range fr.recs {
				r.OutputTokens *= 16
				r.ChunkTokens = nil
			}
		}, "workload item"},
		{"output ×1000 with a prompts file", prompts, func(fr *forgeRun) {
			for _, r := range fr.recs {
				r.OutputTokens *= 1000
				r.ChunkTokens = nil
			}
		}, "workload item"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			fr := captureSim(t, plan, 0.01, false, func(o *capture.Options) { o.Prompts = c.prompts })
			fr.write(t)
			wantVerified(t, fr)
			bundle := fr.pack(t)
			c.edit(fr)
			verr, res, err := fr.forge(t, bundle)
			wantRejected(t, verr, res, err, c.want)
		})
	}
}

// dropItemInputTokens deletes input_tokens from every workload item (the
// manifest's workload digest updated) and sets every ok record's
// input_tokens to its prompt's bytes plus schema.MaxTemplateTokens, the
// most a bound by the text's bytes allows.
func (fr *forgeRun) dropItemInputTokens(t *testing.T) {
	t.Helper()
	path := filepath.Join(fr.dir, schema.WorkloadFile)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	var bytesOf []int64
	for _, line := range bytes.Split(bytes.TrimSuffix(raw, []byte("\n")), []byte("\n")) {
		var it map[string]any
		if err := json.Unmarshal(line, &it); err != nil {
			t.Fatal(err)
		}
		delete(it, "input_tokens")
		bytesOf = append(bytesOf, int64(len(it["prompt"].(string))))
		b, _ := json.Marshal(it)
		out.Write(append(b, '\n'))
	}
	if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	fr.m.Workload.SHA256 = strings.TrimPrefix(string(artifact.DigestBytes(out.Bytes())), "sha256:")
	for _, r := range fr.recs {
		if r.Status == schema.StatusOK && r.Item != nil {
			r.InputTokens = bytesOf[*r.Item] + schema.MaxTemplateTokens
		}
	}
}

// TestQuantizedRunNamedByItsFormatNeedsAQualityGate: a quantized model
// named by its format rather than its bits escaped the quality gate (and
// then won decide against a bf16 run); only fp32, fp16 and bf16 go
// without one.
func TestQuantizedRunNamedByItsFormatNeedsAQualityGate(t *testing.T) {
	for _, p := range []string{"compressed-tensors", "float8_e4m3fn", "bitsandbytes"} {
		t.Run(p, func(t *testing.T) {
			fr := captureSim(t, capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 2, Requests: 8}}, Seed: 1, InputTokens: 32, OutputTokens: 8}, 0.01, false, nil)
			fr.write(t)
			bundle := fr.pack(t)
			fr.m.Model.Precision = p
			fr.m.Unknown = slices.DeleteFunc(fr.m.Unknown, func(u string) bool { return u == "model.precision" })
			verr, res, err := fr.forge(t, bundle)
			wantRejected(t, verr, res, err, "quality_gate")
		})
	}
}

// TestOneFailureDoesNotAdmitTwiceTheConcurrency: a c4 capture with one
// request turned into an error, relabelled c8: the peak in flight (4) was
// half of 8, which a cell with failures was allowed, so one error
// admitted exactly twice the real concurrency. The cell is too small for
// the turnaround test (12 requests, 8 workers); it is captured at time
// scale 1 so that its sends span more than schema.LateWorkerNS.
func TestOneFailureDoesNotAdmitTwiceTheConcurrency(t *testing.T) {
	fr := captureSim(t, capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 4, Requests: 12}}, Seed: 1, InputTokens: 32, OutputTokens: 64}, 1, false, nil)
	fr.write(t)
	bundle := fr.pack(t)
	p := &fr.m.Load.Points[0]
	old := p.Name
	p.Name, p.Concurrency = "c8", 8
	for i, r := range fr.recs {
		r.Point, r.ID = p.Name, p.Name+strings.TrimPrefix(r.ID, old)
		if i == len(fr.recs)-1 {
			r.Status, r.Error = schema.StatusError, "server: 500"
		}
	}
	verr, res, err := fr.forge(t, bundle)
	wantRejected(t, verr, res, err, "failed request(s)")
}

// TestImportedWindowShorterThanTheOfferedLoadIsRejected: a vLLM result at
// 1 req/s whose stored duration was cut so that its rates read 45 req/s.
// Made from the real LambdaLabs fixture (testdata/fixtures/vllm) with its
// request_rate set to 1, since no public vLLM result at a finite rate is
// in testdata: 10 requests at 1 req/s spread over 9 s on average; the
// fixture's own 5.37 s is an honest Poisson draw, 0.22 s is not.
func TestImportedWindowShorterThanTheOfferedLoadIsRejected(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "testdata", "fixtures", "vllm", "lambdalabs_llama3_8b_h100_prompt10.json"))
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		duration float64
		want     string
	}{{0, ""}, {0.222, "provenance.windows"}} {
		var doc map[string]any
		if err := json.Unmarshal(raw, &doc); err != nil {
			t.Fatal(err)
		}
		doc["request_rate"] = 1.0
		if c.duration > 0 {
			doc["duration"] = c.duration
		}
		b, _ := json.Marshal(doc)
		dest := filepath.Join(t.TempDir(), "run")
		_, err := importer.Import(context.Background(), "vllm", []ingest.File{{Name: "vllm.json", Data: b}}, dest, importer.Options{})
		switch {
		case c.want == "" && err != nil:
			t.Errorf("honest window: %v", err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("duration %g s: want a %s problem, got %v", c.duration, c.want, err)
		}
		if c.want == "" && err == nil {
			// The same run with its stored window edited after the import.
			artifacttest.EditRunManifest(t, dest, func(m map[string]any) {
				w := m["provenance"].(map[string]any)["windows"].([]any)[0].(map[string]any)
				w["window_ns"] = 222_000_000
			})
			if err := schema.ValidateRunDocuments(dest, 50); err == nil || !strings.Contains(err.Error(), "provenance.windows") {
				t.Errorf("edited window: want a provenance.windows problem, got %v", err)
			}
		}
	}
}

// TestIncompleteRunClaimsOnCellsItCannotShowCompleteAreUnverified: an
// incomplete run without load.generator, its slowest request dropped
// (one: the engine's count of finished requests at the first point
// allows the preflight probe from elsewhere, and two dropped are refused
// by it): every claim recomputed from the records left and was MATCHED. A claim on a point × repeat the records
// cannot show complete is UNVERIFIED; a point holding its declared count
// stays MATCHED (the run is scraped, so the scrapes place its points).
func TestIncompleteRunClaimsOnCellsItCannotShowCompleteAreUnverified(t *testing.T) {
	fr := captureSim(t, capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 4, Requests: 100}, {Concurrency: 2, Requests: 20}}, Seed: 1, InputTokens: 32, OutputTokens: 8}, 0.01, true, nil)
	fr.write(t)
	bundle := fr.pack(t)
	fr.m.Load.Generator = ""
	fr.m.Incomplete, fr.m.IncompleteReason = true, "the client was stopped"
	c4 := fr.m.Load.Points[0].Name
	var kept, slow []*schema.Record
	for _, r := range fr.recs {
		if r.Point == c4 {
			slow = append(slow, r)
		} else {
			kept = append(kept, r)
		}
	}
	slices.SortFunc(slow, func(a, b *schema.Record) int { return cmp.Compare(a.EndNS-a.SentNS, b.EndNS-b.SentNS) })
	fr.recs = append(slow[:len(slow)-1], kept...)
	slices.SortFunc(fr.recs, func(a, b *schema.Record) int { return cmp.Compare(a.ID, b.ID) })
	verr, res, err := fr.forge(t, bundle)
	if verr != nil || err != nil {
		t.Fatalf("validate %v, verify %v", verr, err)
	}
	byPoint := map[string]map[string]int{}
	for _, c := range res.Claims {
		if byPoint[c.Point] == nil {
			byPoint[c.Point] = map[string]int{}
		}
		byPoint[c.Point][c.Outcome]++
	}
	if n := byPoint[c4][schema.ClaimMatched]; n > 0 || byPoint[c4][schema.ClaimNotRecomputable] == 0 {
		t.Errorf("claims on %s, cut short: %v, want every one not recomputable", c4, byPoint[c4])
	}
	other := fr.m.Load.Points[1].Name
	if n := byPoint[other][schema.ClaimNotRecomputable]; n > 0 || byPoint[other][schema.ClaimMatched] == 0 {
		t.Errorf("claims on %s, complete: %v, want matched", other, byPoint[other])
	}
}

// TestForgedColdCacheIsRejected: a run whose engine reported most of each
// prompt served from its prefix cache (llama.cpp's simulator, the same
// prompts in every point × repeat) relabelled as run with an empty or a
// disabled cache, as the publisher's word, is rejected: the records'
// cached tokens contradict it.
func TestForgedColdCacheIsRejected(t *testing.T) {
	plan := capture.Plan{Mode: schema.ModeConcurrency, Points: []schema.Point{{Concurrency: 1, Requests: 6}, {Concurrency: 2, Requests: 6}}, Repeats: 1, Seed: 1, InputTokens: 32, OutputTokens: 8}
	for _, tc := range []struct {
		name, state, want string
	}{
		{"declared empty", schema.PrefixCacheEmpty, "empty (declared), but the engine's reports say warm"},
		{"declared disabled", schema.PrefixCacheDisabled, "disabled (declared), but the engine reported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fr := captureFlavor(t, plan, 0.01, simulator.FlavorLlamaCpp, false, nil)
			wantVerified(t, fr)
			ss := fr.m.ServerState
			if ss == nil || len(ss.Points) != 2 || ss.Points[1].PrefixCache != schema.PrefixCacheWarm || ss.Points[1].PrefixCacheSource != schema.StateMeasured {
				t.Fatalf("fixture: server_state %+v, want the second point measured warm", ss)
			}
			bundle := fr.pack(t)
			fr.m.Engine.PrefixCache = tc.state
			for i := range ss.Points {
				ss.Points[i].PrefixCache, ss.Points[i].PrefixCacheSource = tc.state, schema.StateDeclared
			}
			verr, res, err := fr.forge(t, bundle)
			wantRejected(t, verr, res, err, tc.want)
		})
	}
}
