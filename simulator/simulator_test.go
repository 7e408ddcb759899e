package simulator_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/benchseal/benchseal/simulator"
)

func newSim(t *testing.T, mod func(*simulator.Config)) *httptest.Server {
	t.Helper()
	cfg := simulator.DefaultConfig()
	cfg.TimeScale = 0.01
	cfg.Seed = 5
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

func post(t *testing.T, url, body string) (int, http.Header, string) {
	t.Helper()
	resp, err := http.Post(url, "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

func TestSimulatorLabelsItself(t *testing.T) {
	ts := newSim(t, nil)
	for _, p := range []string{"/v1/models", "/version"} {
		resp, err := http.Get(ts.URL + p)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.Header.Get(simulator.Header) != "1" || !strings.Contains(string(b), simulator.Owner) {
			t.Errorf("%s: header %q body %s", p, resp.Header.Get(simulator.Header), b)
		}
	}
}

func TestSameSeedAndPromptGiveTheSameStreamShape(t *testing.T) {
	body := `{"model":"benchseal-sim","prompt":"a b c","stream":true,"max_tokens":20,"stream_options":{"include_usage":true}}`
	a := newSim(t, func(c *simulator.Config) { c.MaxChunkTokens = 4 })
	b := newSim(t, func(c *simulator.Config) { c.MaxChunkTokens = 4 })
	_, _, sa := post(t, a.URL+"/v1/completions", body)
	_, _, sb := post(t, b.URL+"/v1/completions", body)
	if sa != sb {
		t.Fatalf("same seed, different streams:\n%s\n%s", sa, sb)
	}
	if !strings.Contains(sa, `"completion_tokens":`) || !strings.HasSuffix(sa, "data: [DONE]\n\n") {
		t.Fatalf("stream:\n%s", sa)
	}
}

func TestQueueLimitAnswers429(t *testing.T) {
	ts := newSim(t, func(c *simulator.Config) {
		c.TimeScale = 1
		c.MaxRunning, c.QueueLimit = 1, 1
	})
	body := `{"model":"benchseal-sim","messages":[{"role":"user","content":"hi"}],"max_tokens":5}`
	var wg sync.WaitGroup
	codes := make([]int, 6)
	for i := range codes {
		wg.Go(func() { codes[i], _, _ = post(t, ts.URL+"/v1/chat/completions", body) })
	}
	wg.Wait()
	n429 := 0
	for _, c := range codes {
		if c == http.StatusTooManyRequests {
			n429++
		}
	}
	if n429 == 0 || n429 == len(codes) {
		t.Fatalf("codes %v", codes)
	}
}

func TestUnknownModelAndBadConfig(t *testing.T) {
	ts := newSim(t, nil)
	if code, _, _ := post(t, ts.URL+"/v1/completions", `{"model":"gpt-9","prompt":"x"}`); code != http.StatusNotFound {
		t.Errorf("unknown model: %d", code)
	}
	if _, err := simulator.New(simulator.Config{TimeScale: -1}); err == nil {
		t.Error("negative time scale accepted")
	}
}

// TestErrorRateIsPerRequestAndSeeded: one prompt sent 400 times at
// ErrorRate 0.2 fails about a fifth of them (the draw was per prompt, so a
// repeated prompt failed always or never: 0 errors in 1,524 requests at
// 0.02), and the same seed fails the same request numbers.
func TestErrorRateIsPerRequestAndSeeded(t *testing.T) {
	body := `{"model":"benchseal-sim","prompt":"one prompt","stream":true,"max_tokens":4}`
	failed := func() []bool {
		ts := newSim(t, func(c *simulator.Config) { c.ErrorRate = 0.2 })
		var out []bool
		for range 400 {
			_, _, s := post(t, ts.URL+"/v1/completions", body)
			out = append(out, strings.Contains(s, `"error"`))
		}
		return out
	}
	a, b := failed(), failed()
	n := 0
	for i := range a {
		if a[i] {
			n++
		}
		if a[i] != b[i] {
			t.Fatalf("request %d: failed %v with one server, %v with another of the same seed", i+1, a[i], b[i])
		}
	}
	// 400 draws at 0.2: mean 80, standard deviation 8; 40..120 is 5 sigma.
	if n < 40 || n > 120 {
		t.Errorf("%d of 400 requests failed at ErrorRate 0.2", n)
	}
}
