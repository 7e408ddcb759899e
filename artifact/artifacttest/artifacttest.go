package artifacttest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/schema"
)

// PublisherKeyPEM and ReviewerKeyPEM are fixed, unencrypted test keys
// (ECDSA P-256, PKCS#8). They are public.
const (
	PublisherKeyPEM = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgzv3GDKFx4315KlMo
RuOn4TZVKgIwUi5GKtoi+KUueoyhRANCAAQlO01L1HUj5D1Ak9E+Lb+XD6NxU71j
q75H0qtBjmy+fxDIZmolbpLHGrHrmoPDpdjNprAEIHm0gFxeDSxQJOOy
-----END PRIVATE KEY-----
`
	ReviewerKeyPEM = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgShTJSXP6c38e2xUi
ieEek2tjPgi6z/6xHdjGfBHKnU2hRANCAASv66Z5Yjn1hNxe6RvycfpyT+wYe/Jz
6Aqcegb0sO6jGXEteHrMb+pRfNegkDpg4JfTKooZobRU7agHy4kp+u2R
-----END PRIVATE KEY-----
`
)

// Publisher returns the fixed publisher test signer.
func Publisher(t testing.TB) *artifact.Signer { return mustSigner(t, PublisherKeyPEM) }

// Reviewer returns the fixed reviewer test signer.
func Reviewer(t testing.TB) *artifact.Signer { return mustSigner(t, ReviewerKeyPEM) }

func mustSigner(t testing.TB, p string) *artifact.Signer {
	t.Helper()
	s, err := artifact.LoadPrivateKey([]byte(p), nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// RunOptions shape the run WriteRun makes.
type RunOptions struct {
	// Points and Repeats default to 2 and 2; Requests (measured requests
	// per point and repeat) to 5; Warmup (per point and repeat) to 1.
	Points, Repeats, Requests, Warmup int
	// NoClaims leaves claims.json out; NoExtras leaves the workload and
	// the attachment out.
	NoClaims, NoExtras bool
	// Claims are the claims each point makes (default: counts.ok, the
	// point's Requests).
	Claims []schema.Claim
	// PlainRecords writes records.jsonl instead of records.jsonl.zst.
	PlainRecords bool
	// Generator makes the run follow schema.GeneratorBenchsealV1 (as a
	// capture, or a run under a pre-registered plan, does).
	Generator bool
}

// Manifest returns the manifest WriteRun writes.
func Manifest(o RunOptions) *schema.Manifest {
	o = o.defaults()
	seed := int64(7)
	m := &schema.Manifest{
		Schema:      schema.ManifestSchemaV1,
		RunID:       "test-run-1",
		Title:       "artifacttest run",
		StartTime:   "2026-01-01T00:00:00Z",
		FinishTime:  "2026-01-01T00:10:00Z",
		EpochUnixNS: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC).UnixNano(),
		Evidence:    schema.EvidenceSynthetic,
		Client:      schema.Client{Name: "artifacttest", Version: "1", Boundary: schema.BoundaryClientStreaming, Seed: &seed, TokenCounts: "server-usage"},
		Hardware:    schema.Hardware{Accelerator: "none", AcceleratorCount: schema.Count(1)},
		Engine:      schema.Engine{Name: "synthetic", Version: "1", PrefixCache: schema.CacheDisabled},
		Model:       schema.Model{Name: "test-model", Precision: "bf16"},
		Decoding:    schema.Decoding{Streaming: true, MaxTokens: 16},
		Load:        schema.Load{Mode: schema.ModeConcurrency, Repeats: o.Repeats, Warmup: schema.Warmup{Requests: o.Warmup}},
		Unknown:     []string{},
	}
	for p := 0; p < o.Points; p++ {
		m.Load.Points = append(m.Load.Points, schema.Point{Name: fmt.Sprintf("c%d", p+1), Concurrency: p + 1, Requests: o.Requests})
	}
	if o.Generator {
		m.Load.Generator = schema.GeneratorBenchsealV1
	}
	m.Unknown = append(m.Unknown, schema.MissingMustState(m)...)
	return m
}

func (o RunOptions) defaults() RunOptions {
	if o.Points == 0 {
		o.Points = 2
	}
	if o.Repeats == 0 {
		o.Repeats = 2
	}
	if o.Requests == 0 {
		o.Requests = 5
	}
	if o.Warmup == 0 {
		o.Warmup = 1
	}
	return o
}

// WriteRun writes a small valid run directory at dir (which must not
// exist) and returns dir. Records of different points are interleaved in
// the file, as a real client writes them.
func WriteRun(t testing.TB, dir string, o RunOptions) string {
	t.Helper()
	o = o.defaults()
	m := Manifest(o)
	w, err := schema.CreateRun(dir, !o.PlainRecords)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Abort()
	var clock int64 = 1_000_000
	n := 0
	for r := 0; r < o.Repeats; r++ {
		for i := 0; i < o.Warmup+o.Requests; i++ {
			for _, p := range m.Load.Points {
				phase := schema.PhaseMeasure
				if i < o.Warmup {
					phase = schema.PhaseWarmup
				}
				n++
				sent := clock
				clock += 10_000_000
				id := fmt.Sprintf("r%06d", n)
				if o.Generator {
					sent = generatedSent(o, m, r, p, i)
					id = fmt.Sprintf("%s.r%d.m%d", p.Name, r, i-o.Warmup)
					if phase == schema.PhaseWarmup {
						id = fmt.Sprintf("%s.r%d.w%d", p.Name, r, i)
					}
				}
				end := sent + 9_000_000
				if o.Generator {
					// Measured on a live clock, no two requests of a
					// capture last the same nanoseconds (a repeat equal
					// to another is a copy).
					end += int64(1 + r*10_000 + p.Concurrency*100 + i)
				}
				rec := &schema.Record{
					ID: id, Point: p.Name, Repeat: r, Phase: phase,
					SentNS: sent, EndNS: end,
					ChunksNS:    []int64{1_000_000, 3_000_000, 5_000_000, 9_000_000},
					InputTokens: 32, OutputTokens: 4, Status: schema.StatusOK,
				}
				if err := w.WriteRecord(rec); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if !o.NoExtras {
		sum, items, err := w.WriteWorkload(strings.NewReader("{\"prompt\":\"hello\"}\n{\"prompt\":\"world\"}\n"))
		if err != nil {
			t.Fatal(err)
		}
		m.Workload.SHA256, m.Workload.Items = sum, items
		if _, _, err := w.AddAttachment("notes/readme.txt", strings.NewReader("attachment bytes\n")); err != nil {
			t.Fatal(err)
		}
	}
	m.Unknown = []string{}
	m.Unknown = append(m.Unknown, schema.MissingMustState(m)...)
	if err := w.SetManifest(m); err != nil {
		t.Fatal(err)
	}
	if !o.NoClaims {
		c := &schema.Claims{Schema: schema.ClaimsSchemaV1, Definitions: "benchseal", DefinitionsVersion: schema.CurrentDefinitionsVersion("benchseal"), Tolerance: 1e-9}
		for _, p := range m.Load.Points {
			ms := o.Claims
			if ms == nil {
				ms = []schema.Claim{{Metric: "counts.ok", Value: float64(o.Requests)}}
			}
			c.Points = append(c.Points, schema.PointClaim{Point: p.Name, Metrics: slices.Clone(ms)})
		}
		if err := w.SetClaims(c); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(); err != nil {
		t.Fatal(err)
	}
	return dir
}

// generatedSent returns the send time of request i (warmup first) of point
// p, repeat r, of a run under schema.GeneratorBenchsealV1, laid out as
// capture runs it: phases one after another (repeat by repeat, point by
// point, warmup before measure), each 10 ms wave of a phase sending
// concurrency requests at once (every request lasts 9 ms).
func generatedSent(o RunOptions, m *schema.Manifest, r int, p schema.Point, i int) int64 {
	const wave = 10_000_000
	waves := func(n int) int64 { return int64((n + p.Concurrency - 1) / p.Concurrency) }
	var phases int64 // waves of the phases before this point's
	for _, q := range m.Load.Points {
		if q.Name == p.Name {
			break
		}
		phases += int64((o.Warmup+q.Concurrency-1)/q.Concurrency + (o.Requests+q.Concurrency-1)/q.Concurrency)
	}
	var perRepeat int64
	for _, q := range m.Load.Points {
		perRepeat += int64((o.Warmup+q.Concurrency-1)/q.Concurrency + (o.Requests+q.Concurrency-1)/q.Concurrency)
	}
	t := 1_000_000 + (int64(r)*perRepeat+phases)*wave
	k := i
	if i >= o.Warmup {
		t += waves(o.Warmup) * wave
		k = i - o.Warmup
	}
	return t + int64(k/p.Concurrency)*wave + int64(k%p.Concurrency)*1000
}

// Created is the fixed creation time used by PackRun.
var Created = time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)

// PackRun writes a run (WriteRun) into a temporary folder and packs it at
// out (a directory, or a tar when out ends in ".tar"), with Created as the
// creation time. It returns out.
func PackRun(t testing.TB, out string, o RunOptions) string {
	t.Helper()
	run := WriteRun(t, filepath.Join(t.TempDir(), "run"), o)
	if _, err := artifact.Pack(context.Background(), run, out, artifact.PackOptions{Created: Created}); err != nil {
		t.Fatal(err)
	}
	return out
}

// SignedBundle packs a default run at out and signs it with the publisher
// key. It returns out and the publisher's public key.
func SignedBundle(t testing.TB, out string) (string, *artifact.PublicKey) {
	t.Helper()
	return SignedBundleOf(t, out, RunOptions{})
}

// SignedBundleOf packs the run o at out and signs it with the publisher
// key. It returns out and the publisher's public key.
func SignedBundleOf(t testing.TB, out string, o RunOptions) (string, *artifact.PublicKey) {
	t.Helper()
	PackRun(t, out, o)
	s := Publisher(t)
	if _, err := artifact.Sign(context.Background(), out, s); err != nil {
		t.Fatal(err)
	}
	return out, s.Public()
}

// ReadRun returns the manifest and every record of the run directory dir,
// failing t on any error: the one reader of a whole run for tests that
// edit or cross-check its records.
func ReadRun(t testing.TB, dir string) (*schema.Manifest, []*schema.Record) {
	t.Helper()
	rd, err := schema.OpenRunDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	it, err := rd.OpenRecords()
	if err != nil {
		t.Fatal(err)
	}
	defer it.Close()
	var recs []*schema.Record
	for {
		r, err := it.Next()
		if errors.Is(err, io.EOF) {
			return rd.Manifest(), recs
		}
		if err != nil {
			t.Fatal(err)
		}
		recs = append(recs, r)
	}
}

// PackReproduction packs at out a reproduction of the bundle whose run
// manifest digest is of, and returns out: the run o (WriteRun, records
// written plainly) as another run would record it, its own run id and
// start, reproduces.run_manifest of, and every duration and chunk time
// 10 % longer, every other chunk a quarter of its gap later still (so
// that it repeats none of the original's timings nor their shape); edit,
// when not nil, changes the manifest and records last.
func PackReproduction(t testing.TB, out string, o RunOptions, of string, edit func(*schema.Manifest, []*schema.Record)) string {
	t.Helper()
	o.PlainRecords = true
	dir := WriteRun(t, filepath.Join(t.TempDir(), "repro"), o)
	m, recs := ReadRun(t, dir)
	m.RunID, m.StartTime, m.Reproduces = m.RunID+"-repro", "2026-01-01T00:00:01Z", &schema.Reproduces{RunManifest: of}
	for _, r := range recs {
		r.EndNS = r.SentNS + (r.EndNS-r.SentNS)*11/10
		prev := int64(0)
		for i, c := range r.ChunksNS {
			// Every other chunk a quarter of its gap later as well: another
			// run's gaps differ gap by gap, while one factor on them all
			// keeps the original's shape (rerun.CheckNotACopy).
			r.ChunksNS[i] = min(c*11/10+int64(i%2)*(c-prev)/4, r.EndNS-r.SentNS)
			prev = c
		}
	}
	if edit != nil {
		edit(m, recs)
	}
	mb, err := schema.MarshalDocument(m)
	if err != nil {
		t.Fatal(err)
	}
	var rb []byte
	for _, r := range recs {
		b, err := json.Marshal(r)
		if err != nil {
			t.Fatal(err)
		}
		rb = append(append(rb, b...), '\n')
	}
	for name, b := range map[string][]byte{schema.ManifestFile: mb, schema.RecordsFile: rb} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := artifact.Pack(context.Background(), dir, out, artifact.PackOptions{Created: Created}); err != nil {
		t.Fatal(err)
	}
	return out
}
