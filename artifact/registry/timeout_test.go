package registry_test

import (
	"bufio"
	"context"
	"errors"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchseal/benchseal/artifact/artifacttest"
	"github.com/benchseal/benchseal/artifact/registry"
)

// silentRegistry listens on loopback and runs serve on every connection
// it accepts; it returns host:port.
func silentRegistry(t *testing.T, serve func(net.Conn, <-chan struct{})) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	var wg sync.WaitGroup
	t.Cleanup(func() { close(done); ln.Close(); wg.Wait() })
	wg.Go(func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Go(func() {
				defer c.Close()
				serve(c, done)
			})
		}
	})
	return ln.Addr().String()
}

// pullOrHang pulls ref, failing the test if Pull has not returned within a
// minute (it used to wait forever).
func pullOrHang(t *testing.T, ref string, opts registry.Options) error {
	t.Helper()
	out := filepath.Join(t.TempDir(), "b.tar")
	errc := make(chan error, 1)
	go func() {
		_, err := registry.Pull(context.Background(), ref, out, opts)
		errc <- err
	}()
	select {
	case err := <-errc:
		if _, serr := os.Stat(out); !errors.Is(serr, os.ErrNotExist) {
			t.Errorf("a failed pull left %s (%v)", out, serr)
		}
		return err
	case <-time.After(time.Minute):
		t.Fatal("pull still waiting after a minute")
		return nil
	}
}

// A registry that accepts connections and never answers fails the pull
// with the response timeout, named.
func TestPullFromASilentRegistryTimesOut(t *testing.T) {
	host := silentRegistry(t, func(c net.Conn, done <-chan struct{}) { <-done })
	err := pullOrHang(t, host+"/bench/run:v1", registry.Options{PlainHTTP: true, ResponseHeaderTimeout: 100 * time.Millisecond})
	if !errors.Is(err, registry.ErrTimeout) || !strings.Contains(err.Error(), "response timeout") {
		t.Errorf("err = %v, want ErrTimeout naming the response timeout", err)
	}
	if testing.Verbose() {
		t.Log(err)
	}
}

// A registry that trickles its answer a byte at a time keeps under any
// response timeout; the overall timeout ends the pull, named.
func TestPullFromATricklingRegistryTimesOut(t *testing.T) {
	host := silentRegistry(t, func(c net.Conn, done <-chan struct{}) {
		// Answer only once the request is in: a response written before
		// it is one net/http's transport calls unsolicited and drops the
		// connection with an error of its own, not the timeout.
		if _, err := http.ReadRequest(bufio.NewReader(c)); err != nil {
			return
		}
		if _, err := c.Write([]byte("HTTP/1.1 200 OK\r\nX-Slow: ")); err != nil {
			return
		}
		for {
			select {
			case <-done:
				return
			case <-time.After(20 * time.Millisecond):
				if _, err := c.Write([]byte("a")); err != nil {
					return
				}
			}
		}
	})
	err := pullOrHang(t, host+"/bench/run:v1", registry.Options{PlainHTTP: true, ResponseHeaderTimeout: -1, Timeout: 500 * time.Millisecond})
	if !errors.Is(err, registry.ErrTimeout) || !strings.Contains(err.Error(), "overall timeout") {
		t.Errorf("err = %v, want ErrTimeout naming the overall timeout", err)
	}
}

// answerless returns a serve func for silentRegistry that reads each
// request on a connection, counts it in n, and never answers.
func answerless(n *atomic.Int64) func(net.Conn, <-chan struct{}) {
	return func(c net.Conn, done <-chan struct{}) {
		go func() { <-done; c.Close() }()
		br := bufio.NewReader(c)
		for {
			if _, err := http.ReadRequest(br); err != nil {
				return
			}
			n.Add(1)
		}
	}
}

// A request that timed out waiting for headers is not retried: push and
// pull against a silent registry send one request and fail after one
// response timeout (oras-go's default policy retried it 5 times with 6.75 s
// of backoff: 6 requests, 13 s at a 1 s timeout).
func TestATimedOutRequestIsNotRetried(t *testing.T) {
	bundle, _ := artifacttest.SignedBundle(t, filepath.Join(t.TempDir(), "b.tar"))
	for _, op := range []string{"pull", "push"} {
		t.Run(op, func(t *testing.T) {
			var n atomic.Int64
			ref := silentRegistry(t, answerless(&n)) + "/bench/run:v1"
			opts := registry.Options{PlainHTTP: true, ResponseHeaderTimeout: 200 * time.Millisecond}
			var err error
			if op == "pull" {
				err = pullOrHang(t, ref, opts)
			} else {
				_, err = registry.Push(context.Background(), bundle, ref, opts)
			}
			if !errors.Is(err, registry.ErrTimeout) || !strings.Contains(err.Error(), "within 200ms") {
				t.Errorf("err = %v, want ErrTimeout naming 200ms", err)
			}
			// The listener may read the request after the client gave up.
			for end := time.Now().Add(2 * time.Second); n.Load() == 0 && time.Now().Before(end); {
				time.Sleep(10 * time.Millisecond)
			}
			if got := n.Load(); got != 1 {
				t.Errorf("the registry received %d requests, want 1 (a timed-out request is not retried)", got)
			}
		})
	}
}
