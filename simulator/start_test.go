package simulator_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/benchseal/benchseal/simulator"
)

// TestStartServesOnLoopbackUntilStopped: Start serves on 127.0.0.1, keeps
// serving after its context is cancelled, and stop shuts it down.
func TestStartServesOnLoopbackUntilStopped(t *testing.T) {
	ctx, cancel := context.WithCancel(context.Background())
	cfg := simulator.DefaultConfig()
	cfg.TimeScale = 0.01
	url, stop, err := simulator.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(url, "http://127.0.0.1:") {
		t.Errorf("endpoint %q, want http://127.0.0.1:PORT", url)
	}
	cancel()
	resp, err := http.Get(url + "/health")
	if err != nil {
		t.Fatalf("after the context ended: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get(simulator.Header) != "1" {
		t.Errorf("health: %d, header %q", resp.StatusCode, resp.Header.Get(simulator.Header))
	}
	stop()
	c := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	if resp, err := c.Get(url + "/health"); err == nil {
		resp.Body.Close()
		t.Error("still serving after stop")
	}
}

func TestStartRefusesABadConfig(t *testing.T) {
	cfg := simulator.DefaultConfig()
	cfg.MaxChunkTokens = -1
	if _, stop, err := simulator.Start(context.Background(), cfg); !errors.Is(err, simulator.ErrConfig) || stop != nil {
		t.Fatalf("err %v, want ErrConfig and no stop", err)
	}
}
