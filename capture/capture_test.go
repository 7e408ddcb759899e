package capture_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/simulator"
)

// fastSim is a simulator whose whole latency model runs 100× faster than
// the defaults: 0.2 ms prefill, 0.1 ms per token.
func fastSim(t testing.TB, mod func(*simulator.Config)) *httptest.Server {
	t.Helper()
	cfg := simulator.DefaultConfig()
	cfg.Seed = 7
	cfg.TimeScale = 0.01
	if mod != nil {
		mod(&cfg)
	}
	s, err := simulator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return ts
}

func baseOptions(t testing.TB, url string) capture.Options {
	return capture.Options{
		Endpoint: url,
		Request:  capture.RequestOptions{Model: "benchseal-sim", API: capture.APIChat, Stream: true, ForceLength: true},
		Plan: capture.Plan{
			Mode:         schema.ModeConcurrency,
			Points:       []schema.Point{{Concurrency: 4, Requests: 20}},
			Seed:         1,
			InputTokens:  32,
			OutputTokens: 8,
		},
		OutDir: filepath.Join(t.TempDir(), "run"),
		Probe:  true,
	}
}

type runFiles struct {
	m    *schema.Manifest
	recs []*schema.Record
}

func readRun(t testing.TB, dir string) runFiles {
	t.Helper()
	m, recs := artifacttest.ReadRun(t, dir)
	out := runFiles{m: m, recs: recs}
	checkRun(t, dir, out)
	return out
}

// checkRun checks what schema's validator checks too, so the tests hold
// before and after it lands: time order, chunk order, ok ⇒ chunks, unique
// ids, declared points, workload hash.
func checkRun(t testing.TB, dir string, rf runFiles) {
	t.Helper()
	ids := map[string]bool{}
	points := map[string]bool{}
	for _, p := range rf.m.Load.Points {
		points[p.Name] = true
	}
	for _, r := range rf.recs {
		if ids[r.ID] {
			t.Errorf("duplicate id %s", r.ID)
		}
		ids[r.ID] = true
		if !points[r.Point] {
			t.Errorf("%s: undeclared point %s", r.ID, r.Point)
		}
		if r.ScheduledNS != nil && *r.ScheduledNS > r.SentNS {
			t.Errorf("%s: scheduled %d after sent %d", r.ID, *r.ScheduledNS, r.SentNS)
		}
		prev := int64(0)
		for _, c := range r.ChunksNS {
			if c < prev {
				t.Errorf("%s: chunks out of order", r.ID)
			}
			prev = c
		}
		if r.SentNS+prev > r.EndNS {
			t.Errorf("%s: last chunk after end", r.ID)
		}
		if r.Status == schema.StatusOK && len(r.ChunksNS) == 0 {
			t.Errorf("%s: ok without chunks", r.ID)
		}
		if r.ChunkTokens != nil {
			var sum int64
			for _, v := range r.ChunkTokens {
				sum += v
			}
			if len(r.ChunkTokens) != len(r.ChunksNS) || sum != r.OutputTokens {
				t.Errorf("%s: chunk_tokens %v do not match %d chunks / %d tokens", r.ID, r.ChunkTokens, len(r.ChunksNS), r.OutputTokens)
			}
		}
		if r.Repeat >= rf.m.Load.Repeats {
			t.Errorf("%s: repeat %d ≥ %d", r.ID, r.Repeat, rf.m.Load.Repeats)
		}
	}
	b, err := os.ReadFile(filepath.Join(dir, schema.WorkloadFile))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(b)
	if hex.EncodeToString(sum[:]) != rf.m.Workload.SHA256 {
		t.Errorf("workload hash mismatch")
	}
	if err := validateRunDir(dir); err != nil {
		t.Errorf("validate: %v", err)
	}
}

func countStatus(recs []*schema.Record, phase string) map[string]int {
	m := map[string]int{}
	for _, r := range recs {
		if phase == "" || r.Phase == phase {
			m[r.Status]++
		}
	}
	return m
}

func TestConcurrencyRunAgainstSimulatorIsCompleteAndSynthetic(t *testing.T) {
	ts := fastSim(t, nil)
	o := baseOptions(t, ts.URL)
	o.Plan.Points = []schema.Point{{Concurrency: 1, Requests: 6}, {Concurrency: 4, Requests: 20}}
	o.Plan.Warmup = schema.Warmup{Requests: 3}
	o.Plan.Repeats = 2
	var prog []capture.Progress
	o.Progress = func(p capture.Progress) { prog = append(prog, p) }
	o.ProgressInterval = 5 * time.Millisecond
	res, err := capture.Run(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	rf := readRun(t, o.OutDir)
	if rf.m.Incomplete || rf.m.Evidence != schema.EvidenceSynthetic || rf.m.Client.Boundary != schema.BoundaryClientStreaming {
		t.Errorf("manifest: incomplete=%v evidence=%s boundary=%s", rf.m.Incomplete, rf.m.Evidence, rf.m.Client.Boundary)
	}
	if rf.m.Client.TokenCounts != "server-usage" {
		t.Errorf("token counts %q", rf.m.Client.TokenCounts)
	}
	if got, want := len(rf.recs), 2*(6+20+3+3); got != want {
		t.Fatalf("records %d, want %d", got, want)
	}
	if c := countStatus(rf.recs, ""); c[schema.StatusOK] != len(rf.recs) {
		t.Fatalf("statuses %v", c)
	}
	if c := countStatus(rf.recs, schema.PhaseWarmup); c[schema.StatusOK] != 12 {
		t.Errorf("warmup records %v", c)
	}
	for _, r := range rf.recs {
		if r.OutputTokens != 8 || len(r.ChunksNS) != 8 || r.InputTokens != 32 || r.ScheduledNS != nil {
			t.Fatalf("record %+v", r)
		}
	}
	if len(res.Cells) != 4 || res.Cells[1].Point != "c4" || res.Cells[1].ByStatus[schema.StatusOK] != 20 {
		t.Errorf("cells %+v", res.Cells)
	}
	if len(prog) == 0 || !prog[len(prog)-1].Final {
		t.Errorf("progress not reported")
	}
	if rf.m.Engine.Server["/v1/models"] == "" || !strings.Contains(rf.m.Engine.Server["/version"], "simulator") {
		t.Errorf("server answers %v", rf.m.Engine.Server)
	}
}

func TestRunRefusesNonEmptyDirectory(t *testing.T) {
	ts := fastSim(t, nil)
	o := baseOptions(t, ts.URL)
	os.MkdirAll(o.OutDir, 0o755)
	os.WriteFile(filepath.Join(o.OutDir, "x"), nil, 0o644)
	if _, err := capture.Run(context.Background(), o); !errors.Is(err, capture.ErrNotEmpty) {
		t.Fatalf("err = %v", err)
	}
}

var _ = bytes.NewReader

func TestSettingsMakingAnInvalidManifestAreRefusedBeforeAnyRequest(t *testing.T) {
	ts := fastSim(t, nil)
	o := baseOptions(t, ts.URL)
	// A TPOT limit without saying how one-token answers count is invalid.
	o.Sets = []string{"slo.tpot=25ms"}
	_, err := capture.Run(context.Background(), o)
	if err == nil || !strings.Contains(err.Error(), "slo.one_token") {
		t.Fatalf("Run: err = %v, want a problem naming slo.one_token", err)
	}
	if _, statErr := os.Stat(o.OutDir); !os.IsNotExist(statErr) {
		t.Errorf("output directory was created: %v", statErr)
	}
}

// TestStoppedWhileWaitingForStartLeavesNothing: a capture stopped while it
// waits for --start-at (a pod deleted before the common start) writes
// nothing to its run directory, so a re-run at the same directory works.
func TestStoppedWhileWaitingForStartLeavesNothing(t *testing.T) {
	ts := fastSim(t, nil)
	o := baseOptions(t, ts.URL)
	o.StartAt = time.Now().Add(time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	// The clock is read just before the wait: stop the capture there.
	o.ReadClock = func(context.Context) *schema.Clock { cancel(); return nil }
	if _, err := capture.Run(ctx, o); !errors.Is(err, context.Canceled) {
		t.Fatalf("capture stopped during the wait: err = %v", err)
	}
	if ents, err := os.ReadDir(o.OutDir); err == nil && len(ents) > 0 {
		t.Fatalf("the run directory holds %s after a stop before the start", ents[0].Name())
	}
	o.StartAt = time.Time{}
	o.ReadClock = nil
	if _, err := capture.Run(context.Background(), o); err != nil {
		t.Fatalf("re-run at the same directory: %v", err)
	}
	checkRun(t, o.OutDir, readRun(t, o.OutDir))
}
