package capture_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/simulator"
)

func stateSim(t *testing.T, resetPath string) (*simulator.Server, *httptest.Server) {
	t.Helper()
	cfg := simulator.DefaultConfig()
	cfg.Seed = 7
	cfg.TimeScale = 0.01
	cfg.PrefixCaching = true
	cfg.CacheResetPath = resetPath
	s, err := simulator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ts := httptest.NewServer(s)
	t.Cleanup(ts.Close)
	return s, ts
}

func stateOptions(t *testing.T, url string) capture.Options {
	o := baseOptions(t, url)
	o.Plan.Points = []schema.Point{{Concurrency: 2, Requests: 6}}
	o.Plan.Repeats = 2
	o.Plan.Warmup = schema.Warmup{Requests: 2}
	o.ServerMetrics = capture.ServerMetricsAuto
	o.ResetPrefixCache = true
	return o
}

func TestResetPrefixCacheBeforeEveryPointIsRecorded(t *testing.T) {
	for _, tc := range []struct {
		name string
		path string // the simulator's reset endpoint
		// calls wanted per point × repeat, as "path status" lists
		want  [][]string
		state string
	}{
		{"vLLM endpoint answers", simulator.ResetPathVLLM,
			[][]string{{"/reset_prefix_cache 200"}, {"/reset_prefix_cache 200"}}, schema.PrefixCacheEmpty},
		{"SGLang endpoint answers after vLLM's 404, and is tried first after that", simulator.ResetPathSGLang,
			[][]string{{"/reset_prefix_cache 404", "/flush_cache 200"}, {"/flush_cache 200"}}, schema.PrefixCacheEmpty},
		{"no endpoint: recorded as failed, the cache state unknown, the run goes on", "none",
			[][]string{{"/reset_prefix_cache 404", "/flush_cache 404"}, {"/reset_prefix_cache 404", "/flush_cache 404"}}, schema.PrefixCacheUnknown},
	} {
		t.Run(tc.name, func(t *testing.T) {
			sim, ts := stateSim(t, tc.path)
			o := stateOptions(t, ts.URL)
			if _, err := capture.Run(context.Background(), o); err != nil {
				t.Fatal(err)
			}
			rf := readRun(t, o.OutDir) // validates the run too
			ss := rf.m.ServerState
			if ss == nil || len(ss.Points) != 2 {
				t.Fatalf("server_state %+v, want one entry per point × repeat", ss)
			}
			for i, p := range ss.Points {
				if p.Repeat != i || p.Reset == nil {
					t.Fatalf("entry %d: %+v", i, p)
				}
				var got []string
				for _, c := range p.Reset.Calls {
					got = append(got, c.Path+" "+strconv.Itoa(c.Status))
				}
				if strings.Join(got, ",") != strings.Join(tc.want[i], ",") {
					t.Errorf("repeat %d calls %v, want %v", i, got, tc.want[i])
				}
				if p.PrefixCache != tc.state || p.Reset.OK != (tc.state == schema.PrefixCacheEmpty) {
					t.Errorf("repeat %d state %q ok %v, want %q", i, p.PrefixCache, p.Reset.OK, tc.state)
				}
				if (p.PrefixCacheSource == schema.StateReset) != (tc.state == schema.PrefixCacheEmpty) {
					t.Errorf("repeat %d source %q", i, p.PrefixCacheSource)
				}
				if p.WarmupNS == nil || *p.WarmupNS <= 0 {
					t.Errorf("repeat %d warmup_ns %v, want the warmup's measured duration", i, p.WarmupNS)
				}
				// The reset came before the point's first request.
				for _, r := range rf.recs {
					if r.Repeat == i && r.SentNS < p.Reset.DoneNS {
						t.Errorf("record %s sent at %d, before the reset ended at %d", r.ID, r.SentNS, p.Reset.DoneNS)
					}
				}
			}
			if n := countStatus(rf.recs, schema.PhaseMeasure)[schema.StatusOK]; n != 12 {
				t.Errorf("%d measured ok, want 12: a failed reset must not stop the run", n)
			}
			wantResets := int64(2)
			if tc.path == "none" {
				wantResets = 0
			}
			if got := sim.Resets(); got != wantResets {
				t.Errorf("simulator saw %d resets, want %d", got, wantResets)
			}
			// The simulator served its first requests on a fresh start:
			// measured from the scrape before any request, kept byte for byte.
			f := ss.Fresh
			if f == nil || f.Source != schema.StateMeasured || !f.Fresh || *f.RequestsBefore != 0 || f.UptimeNS == nil {
				t.Fatalf("fresh %+v, want measured fresh", f)
			}
			b, err := os.ReadFile(filepath.Join(o.OutDir, schema.AttachmentsDir, filepath.FromSlash(f.Scrape)))
			if err != nil {
				t.Fatal(err)
			}
			if h := sha256.Sum256(b); hex.EncodeToString(h[:]) != f.SHA256 {
				t.Error("fresh scrape digest differs from the manifest")
			}
		})
	}
}

func TestServerFreshDeclaredOrMeasured(t *testing.T) {
	t.Run("a server that served before contradicts --server-fresh: nothing is written", func(t *testing.T) {
		_, ts := stateSim(t, simulator.ResetPathVLLM)
		o := stateOptions(t, ts.URL)
		o.ServerFresh = true
		warm := o
		warm.ServerFresh, warm.OutDir = false, filepath.Join(t.TempDir(), "first")
		if _, err := capture.Run(context.Background(), warm); err != nil {
			t.Fatal(err)
		}
		_, err := capture.Run(context.Background(), o)
		if !errors.Is(err, capture.ErrNotFresh) || !strings.Contains(err.Error(), "--server-fresh") {
			t.Fatalf("err %v, want the contradicted declaration", err)
		}
		if _, err := os.Stat(o.OutDir); !os.IsNotExist(err) {
			t.Errorf("run directory written: %v", err)
		}
		// Without the declaration the same server is measured not fresh.
		o.ServerFresh, o.OutDir = false, filepath.Join(t.TempDir(), "second")
		if _, err := capture.Run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		if f := readRun(t, o.OutDir).m.ServerState.Fresh; f == nil || f.Fresh || f.Source != schema.StateMeasured || *f.RequestsBefore == 0 {
			t.Errorf("fresh %+v, want measured not fresh", f)
		}
	})
	t.Run("without server metrics the declaration is recorded as declared", func(t *testing.T) {
		_, ts := stateSim(t, simulator.ResetPathVLLM)
		o := stateOptions(t, ts.URL)
		o.ServerMetrics, o.ServerFresh, o.ResetPrefixCache = "", true, false
		if _, err := capture.Run(context.Background(), o); err != nil {
			t.Fatal(err)
		}
		ss := readRun(t, o.OutDir).m.ServerState
		if f := ss.Fresh; f == nil || !f.Fresh || f.Source != schema.StateDeclared || f.Scrape != "" {
			t.Errorf("fresh %+v, want declared", f)
		}
		for _, p := range ss.Points {
			if p.PrefixCache != schema.PrefixCacheUnknown || p.Reset != nil {
				t.Errorf("point state %+v, want unknown without a reset", p)
			}
		}
	})
}
