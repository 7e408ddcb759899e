package servermetrics_test

import (
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/benchseal/benchseal/servermetrics"
	"github.com/benchseal/benchseal/simulator"
)

func scrape(t *testing.T, url string, at int64) *servermetrics.Snapshot {
	t.Helper()
	resp, err := http.Get(url + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	s, err := servermetrics.Parse(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	s.AtNS = at
	return s
}

// The simulator's /metrics, in vLLM's names, counts what it served and
// times it by its own latency model: the server column of a stream and of
// a whole response.
func TestSimulatorMetricsFollowItsLatencyModel(t *testing.T) {
	for _, stream := range []bool{true, false} {
		cfg := simulator.DefaultConfig()
		cfg.TimeScale = 0.1
		sim, err := simulator.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		ts := httptest.NewServer(sim)
		before := scrape(t, ts.URL, 0)
		const n, out = 6, 8
		body := `{"model":"benchseal-sim","prompt":"one two three four","max_tokens":8,"ignore_eos":true`
		if stream {
			body += `,"stream":true`
		}
		for range n {
			resp, err := http.Post(ts.URL+"/v1/completions", "application/json", strings.NewReader(body+"}"))
			if err != nil {
				t.Fatal(err)
			}
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 {
				t.Fatalf("status %d", resp.StatusCode)
			}
		}
		after := scrape(t, ts.URL, int64(time.Second))
		ts.Close()
		c, err := servermetrics.Delta("", []*servermetrics.Snapshot{before, after}, servermetrics.Load{ToNS: 1 << 62})
		if err != nil {
			t.Fatal(err)
		}
		if c.Engine != servermetrics.EngineVLLM {
			t.Fatalf("engine %q", c.Engine)
		}
		hist := map[string]servermetrics.HistogramDelta{}
		for _, h := range c.Histograms {
			hist[h.Role] = h
		}
		ttft := hist[servermetrics.RoleTTFT]
		// Model at scale 0.1: prefill 2 ms + 4 × 5 µs, first token 1 ms.
		if ttft.Count != n || ttft.Mean == nil || *ttft.Mean < 0.003 || *ttft.Mean > 0.5 {
			t.Errorf("stream=%v ttft count %v mean %v, want %d observations of at least 3 ms", stream, ttft.Count, deref(ttft.Mean), n)
		}
		// Every token has a deadline the server never beats: the last one is
		// due no sooner than prefill 2 ms + 8 tokens × 1 ms after arrival.
		// (Not ttft + 7 ms: deadlines are absolute, so on a loaded machine a
		// late first token is followed by the rest at once.)
		e2e := hist[servermetrics.RoleE2E]
		if e2e.Count != n || e2e.Mean == nil || *e2e.Mean < 0.010 || *e2e.Mean < *ttft.Mean {
			t.Errorf("stream=%v e2e count %v mean %v: want %d observations, each at least prefill 2 ms + 8 tokens × 1 ms and not below ttft", stream, e2e.Count, deref(e2e.Mean), n)
		}
		// TPOT is (last − first)/(8 − 1) per request, so its mean closes the
		// sum ttft + 7 × tpot = e2e (its own floor needs the first token on
		// time, which a loaded machine does not promise).
		if tpot := hist[servermetrics.RoleTPOT]; tpot.Count != n || tpot.Mean == nil || *tpot.Mean <= 0 ||
			e2e.Mean != nil && ttft.Mean != nil && math.Abs(*ttft.Mean+(out-1)*(*tpot.Mean)-*e2e.Mean) > 1e-6 {
			t.Errorf("stream=%v tpot count %v mean %v, want %d observations with ttft + 7 × tpot = e2e (%v + 7 × tpot = %v)", stream, tpot.Count, deref(tpot.Mean), n, deref(ttft.Mean), deref(e2e.Mean))
		}
		for _, d := range c.Counters {
			want := map[string]float64{servermetrics.RoleRequestSuccess: n, servermetrics.RoleGenerationTokens: n * out,
				servermetrics.RolePromptTokens: n * 4, servermetrics.RolePreemptions: 0}[d.Role]
			if d.Delta != want {
				t.Errorf("stream=%v %s Δ %v, want %v", stream, d.Role, d.Delta, want)
			}
		}
		if len(c.Absent) != 0 {
			t.Errorf("stream=%v absent %+v", stream, c.Absent)
		}
	}
}

func deref(p *float64) float64 {
	if p == nil {
		return -1
	}
	return *p
}
