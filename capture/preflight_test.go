package capture_test

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/simulator"
)

// Against a dead port, a model the server does not serve, a refused key or
// a failing first request, capture stops before the run with the server's
// message and writes nothing at the output path.
func TestPreflightFailureStopsBeforeWriting(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	ln.Close()

	sim := fastSim(t, nil)
	refuse := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":{"message":"invalid api key"}}`))
	}))
	t.Cleanup(refuse.Close)
	noList := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method == http.MethodGet {
			http.NotFound(w, r)
			return
		}
		w.WriteHeader(http.StatusBadRequest)
		w.Write([]byte(`{"object":"error","message":"max_tokens is too large"}`))
	}))
	t.Cleanup(noList.Close)

	cases := map[string]struct {
		url, model string
		want       []string
	}{
		"dead port":        {dead, "benchseal-sim", []string{"does not answer", "connection refused"}},
		"model not served": {sim.URL, "llama-70b", []string{`model "llama-70b" is not served`, "it serves: benchseal-sim"}},
		"key refused":      {refuse.URL, "m", []string{"HTTP 401", "invalid api key", "--api-key-env"}},
		"probe fails":      {noList.URL, "m", []string{"probe request", "HTTP 400", "max_tokens is too large"}},
	}
	for name, tc := range cases {
		t.Run(name, func(t *testing.T) {
			o := baseOptions(t, tc.url)
			o.Request.Model = tc.model
			res, err := capture.Run(context.Background(), o)
			if !errors.Is(err, capture.ErrPreflight) || res != nil {
				t.Fatalf("Run: %v (result %v), want ErrPreflight", err, res)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not say %q", err, w)
				}
			}
			if _, err := os.Lstat(o.OutDir); !errors.Is(err, os.ErrNotExist) {
				t.Errorf("output path written: %v", err)
			}
		})
	}
}

// When a phase's failures pass MaxErrorRate the run stops, is kept marked
// incomplete and valid, and Run says why; failures are reported as they
// happen and counted by reason. Below the threshold the run completes.
func TestTooManyFailuresStopTheRun(t *testing.T) {
	for _, tc := range []struct {
		errorRate float64
		stop      bool
	}{{1, true}, {0.05, false}} {
		ts := fastSim(t, func(c *simulator.Config) { c.ErrorRate = tc.errorRate })
		o := baseOptions(t, ts.URL)
		o.SkipPreflight = true
		o.Plan.Points = []schema.Point{{Concurrency: 2, Requests: 200}, {Concurrency: 3, Requests: 50}}
		o.MaxErrorRate = 0.5
		var seen []capture.Failure
		o.OnFailure = func(f capture.Failure) { seen = append(seen, f) }
		res, err := capture.Run(context.Background(), o)
		if !tc.stop {
			if err != nil || res.Stopped {
				t.Fatalf("error rate %v: %v, stopped %v", tc.errorRate, err, res.Stopped)
			}
			continue
		}
		if !errors.Is(err, capture.ErrTooManyFailures) || !strings.Contains(err.Error(), "more than --max-error-rate 50%") {
			t.Fatalf("Run: %v, want ErrTooManyFailures", err)
		}
		if !res.Stopped || !res.Manifest.Incomplete || !strings.HasPrefix(res.Manifest.IncompleteReason, "stopped after") {
			t.Fatalf("stopped %v, manifest incomplete %v %q", res.Stopped, res.Manifest.Incomplete, res.Manifest.IncompleteReason)
		}
		if res.Records >= 250 || len(seen) == 0 || len(res.Failures) == 0 || !strings.Contains(res.Failures[0].Kind, "simulated engine failure") {
			t.Fatalf("records %d, %d failures reported, counts %+v", res.Records, len(seen), res.Failures)
		}
		if err := validateRunDir(o.OutDir); err != nil {
			t.Fatalf("the kept run: %v", err)
		}
	}
}
