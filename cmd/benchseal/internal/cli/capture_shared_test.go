package cli

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/benchseal/benchseal/simulator"
)

// TestCaptureAgainstASharedServerFails: a capture whose server answered
// another client's requests during the run (its counters rose by more
// than the run sent) says so when it ends, naming a shared server and the
// ways out, and exits 1 instead of reporting a complete run that
// validate, pack and verify then reject; the run directory is kept, and
// validate still rejects it. The same capture without the other client
// exits 0.
func TestCaptureAgainstASharedServerFails(t *testing.T) {
	for _, shared := range []bool{false, true} {
		cfg := simulator.DefaultConfig()
		cfg.TimeScale = 0.01
		cfg.Seed = 3
		sim, err := simulator.New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(sim)
		ctx, stop := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		if shared {
			// Another client of the same server, one request at a time.
			wg.Add(1)
			go func() {
				defer wg.Done()
				for ctx.Err() == nil {
					body := strings.NewReader(`{"model":"benchseal-sim","messages":[{"role":"user","content":"hello"}],"max_tokens":4}`)
					req, _ := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/v1/chat/completions", body)
					req.Header.Set("Content-Type", "application/json")
					if resp, err := http.DefaultClient.Do(req); err == nil {
						resp.Body.Close()
					}
				}
			}()
		}
		run := filepath.Join(t.TempDir(), "run")
		code, out, errOut := runArgs(t, nil, "capture", "--endpoint", srv.URL, "--model", "benchseal-sim", "--progress", "never",
			"--concurrency", "2", "--requests", "40", "--out", run)
		stop()
		wg.Wait()
		srv.Close()
		if !shared {
			if code != ExitOK || !strings.Contains(out, "(complete)") {
				t.Fatalf("dedicated server: exit %d\n%s\n%s", code, out, errOut)
			}
			continue
		}
		if code != ExitError || strings.Contains(out, "(complete)") {
			t.Fatalf("shared server: exit %d, want %d and no \"(complete)\"\n%s\n%s", code, ExitError, out, errOut)
		}
		for _, want := range []string{"is not a valid run", "shared", "re-run against a server no other client uses", "--server-metrics off", "would have counted at most"} {
			if !strings.Contains(errOut, want) {
				t.Errorf("stderr lacks %q:\n%s", want, errOut)
			}
		}
		if code, out, errOut := runArgs(t, nil, "validate", run); code != ExitRejected {
			t.Errorf("validate of the kept run: exit %d, want %d\n%s\n%s", code, ExitRejected, out, errOut)
		}
	}
}
