package cli

import (
	"bufio"
	"net"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchseal/benchseal/artifact/artifacttest"
)

// TestPushPullUsage checks the exit codes of push and pull that need no
// registry (the round trip is scripts/registry.sh and the
// artifact/registry tests).
func TestPushPullUsage(t *testing.T) {
	dir := t.TempDir()
	p, _ := artifacttest.SignedBundle(t, filepath.Join(dir, "b.tar"))
	cases := []struct {
		name string
		env  map[string]string
		args []string
		code int
		err  string
	}{
		{"push without tag", nil, []string{"push", p, "127.0.0.1:1/bench/run", "--plain-http"}, ExitUsage, "needs a :tag"},
		{"push bad reference", nil, []string{"push", p, "not a ref", "--plain-http"}, ExitUsage, "invalid registry reference"},
		{"push missing bundle", nil, []string{"push", filepath.Join(dir, "nope"), "127.0.0.1:1/bench/run:v1"}, ExitError, "no such file"},
		{"push one argument", nil, []string{"push", p}, ExitUsage, ""},
		{"pull without --out", nil, []string{"pull", "127.0.0.1:1/bench/run:v1"}, ExitUsage, ""},
		{"pull without password", nil, []string{"pull", "127.0.0.1:1/bench/run:v1", "--out", filepath.Join(dir, "x"), "--username", "me"}, ExitUsage, "BENCHSEAL_REGISTRY_PASSWORD"},
		{"pull negative timeout", nil, []string{"pull", "127.0.0.1:1/bench/run:v1", "--out", filepath.Join(dir, "x"), "--timeout=-1s", "--response-timeout", "0"}, ExitUsage, "--timeout must not be negative"},
		{"push negative response timeout", nil, []string{"push", p, "127.0.0.1:1/bench/run:v1", "--response-timeout=-1s"}, ExitUsage, "--response-timeout must not be negative"},
		{"merge --pull negative timeout", nil, []string{"merge", "--pull", "127.0.0.1:1/bench/run:v1", "--shards", "1", "--allow-unsigned", "--out", filepath.Join(dir, "m"), "--timeout=-1s"}, ExitUsage, "--timeout must not be negative"},
		{"pull unreachable", map[string]string{"BENCHSEAL_REGISTRY_PASSWORD": "pw"}, []string{"pull", "127.0.0.1:1/bench/run:v1", "--out", filepath.Join(dir, "x"), "--username", "me", "--plain-http"}, ExitError, "resolve"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			code, out, errOut := runArgs(t, c.env, c.args...)
			if code != c.code || !strings.Contains(errOut, c.err) {
				t.Fatalf("exit %d, want %d with %q\nstdout:\n%s\nstderr:\n%s", code, c.code, c.err, out, errOut)
			}
		})
	}
}

// pull and merge --pull from a registry that accepts and never answers
// fail with the timeout named, through the flags that set it.
func TestPullTimeoutFlags(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var conns []net.Conn
	var mu sync.Mutex
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c) // held open, never answered
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	host, dir := ln.Addr().String(), t.TempDir()
	for _, args := range [][]string{
		{"pull", host + "/bench/run:v1", "--out", filepath.Join(dir, "x"), "--plain-http", "--timeout", "300ms"},
		{"merge", "--pull", host + "/bench/run:v1", "--shards", "1", "--allow-unsigned", "--out", filepath.Join(dir, "m"), "--plain-http", "--timeout", "300ms"},
	} {
		code, out, errOut := runArgs(t, nil, args...)
		if code != ExitError || !strings.Contains(errOut, "overall timeout") {
			t.Errorf("%s: exit %d, want %d naming the overall timeout\nstdout:\n%s\nstderr:\n%s", args[0], code, ExitError, out, errOut)
		}
	}
}

// pull --response-timeout 1s from a registry that reads requests and never
// answers sends one request and fails after about 1 s naming it (it sent 6
// and took 13 s: each timed-out request was retried).
func TestPullResponseTimeoutIsOneWait(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var requests atomic.Int64
	var wg sync.WaitGroup
	t.Cleanup(func() { ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				br := bufio.NewReader(c)
				for {
					if _, err := http.ReadRequest(br); err != nil {
						return // the client gave up and closed
					}
					requests.Add(1)
				}
			})
		}
	})
	start := time.Now()
	code, out, errOut := runArgs(t, nil, "pull", ln.Addr().String()+"/bench/run:v1", "--out", filepath.Join(t.TempDir(), "x"), "--plain-http", "--response-timeout", "1s")
	took := time.Since(start)
	if code != ExitError || !strings.Contains(errOut, "within 1s") {
		t.Errorf("exit %d, want %d naming the 1s response timeout\nstdout:\n%s\nstderr:\n%s", code, ExitError, out, errOut)
	}
	for end := time.Now().Add(2 * time.Second); requests.Load() == 0 && time.Now().Before(end); {
		time.Sleep(10 * time.Millisecond) // the listener may read after the client gave up
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("the registry received %d requests, want 1", n)
	}
	// Loose: the machine may be loaded; 6 tries took 13 s.
	if took > 6*time.Second {
		t.Errorf("pull took %s, want about 1s", took)
	}
}
