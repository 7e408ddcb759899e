package capture_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/simulator"
)

// TestConnectionsAreReused checks that HTTP/1.1 keep-alive works: 60
// requests from 4 closed-loop workers open about 4 connections, not 60,
// streamed or not.
func TestConnectionsAreReused(t *testing.T) {
	for _, stream := range []bool{true, false} {
		t.Run(fmt.Sprint("stream=", stream), func(t *testing.T) {
			cfg := simulator.DefaultConfig()
			cfg.TimeScale = 0.01
			s, err := simulator.New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			var conns atomic.Int64
			ts := httptest.NewUnstartedServer(s)
			ts.Config.ConnState = func(_ net.Conn, st http.ConnState) {
				if st == http.StateNew {
					conns.Add(1)
				}
			}
			ts.Start()
			defer ts.Close()
			o := baseOptions(t, ts.URL)
			o.Probe = false
			o.Request.Stream = stream
			o.Plan.Points = []schema.Point{{Concurrency: 4, Requests: 60}}
			res, err := capture.Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			if res.Records != 60 || res.Cells[0].ByStatus[schema.StatusOK] != 60 {
				t.Fatalf("records %d, by status %v", res.Records, res.Cells[0].ByStatus)
			}
			// A worker may dial while its previous connection is still
			// being returned to the pool; a few extra are fine.
			if n := conns.Load(); n > 8 {
				t.Errorf("%d connections for 60 requests from 4 workers: keep-alive is not working", n)
			}
		})
	}
}

// TestChunkTimeIsArrivalNotParse checks, end to end through HTTP, that a
// chunk's time is when its bytes arrived: a first chunk sent 40 ms after
// the headers is timed at about 40 ms after the send, and a second one
// sent 60 ms later about 60 ms after the first, while the last chunk, the
// usage and [DONE] arrive together. (TestChunkTimeIsTheReadThatCompletedIt
// checks the clock is read per read, never while parsing.)
func TestChunkTimeIsArrivalNotParse(t *testing.T) {
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fl := w.(http.Flusher)
		fl.Flush()
		time.Sleep(40 * time.Millisecond)
		fmt.Fprint(w, `data: {"choices":[{"delta":{"content":"a"}}]}`+"\n\n")
		fl.Flush()
		time.Sleep(60 * time.Millisecond)
		fmt.Fprint(w, `data: {"choices":[{"delta":{"content":"b"}}]}`+"\n\n"+
			`data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}`+"\n\ndata: [DONE]\n\n")
	}))
	defer ts.Close()
	o := baseOptions(t, ts.URL)
	o.Probe = false
	o.Plan.Points = []schema.Point{{Concurrency: 1, Requests: 1}}
	if _, err := capture.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	rf := readRun(t, o.OutDir)
	r := rf.recs[0]
	if r.Status != schema.StatusOK || len(r.ChunksNS) != 2 || r.OutputTokens != 2 {
		t.Fatalf("%+v", r)
	}
	first, gap := time.Duration(r.ChunksNS[0]), time.Duration(r.ChunksNS[1]-r.ChunksNS[0])
	if first < 40*time.Millisecond || first > 70*time.Millisecond {
		t.Errorf("first chunk at %v, want ≈ 40ms", first)
	}
	if gap < 60*time.Millisecond || gap > 90*time.Millisecond {
		t.Errorf("gap %v, want ≈ 60ms", gap)
	}
}

// TestHTTP2WhereOffered checks that with HTTP2 the client speaks HTTP/2 to
// a TLS server offering it, records the same streams, and says so in the
// manifest; without it, the same server is spoken to in HTTP/1.1.
func TestHTTP2WhereOffered(t *testing.T) {
	cfg := simulator.DefaultConfig()
	cfg.TimeScale = 0.01
	s, err := simulator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var h1, h2 atomic.Int64
	ts := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.ProtoMajor == 2 {
			h2.Add(1)
		} else {
			h1.Add(1)
		}
		s.ServeHTTP(w, r)
	}))
	ts.EnableHTTP2 = true
	ts.StartTLS()
	defer ts.Close()
	for _, want2 := range []bool{true, false} {
		h1.Store(0)
		h2.Store(0)
		tr := capture.NewTransport(8, want2)
		tr.TLSClientConfig = ts.Client().Transport.(*http.Transport).TLSClientConfig.Clone()
		o := baseOptions(t, ts.URL)
		o.Probe = false
		o.SkipPreflight = true // the server counts the run's requests only
		o.HTTP2 = want2
		o.HTTPClient = &http.Client{Transport: tr}
		o.Plan.Points = []schema.Point{{Concurrency: 4, Requests: 20}}
		res, err := capture.Run(context.Background(), o)
		if err != nil {
			t.Fatal(err)
		}
		tr.CloseIdleConnections()
		if res.Cells[0].ByStatus[schema.StatusOK] != 20 || res.Chunks != 20*8 {
			t.Fatalf("http2=%v: by status %v, %d chunks", want2, res.Cells[0].ByStatus, res.Chunks)
		}
		if want2 && (h2.Load() != 20 || h1.Load() != 0) {
			t.Errorf("http2: server saw %d HTTP/2 and %d HTTP/1 requests", h2.Load(), h1.Load())
		}
		if !want2 && (h1.Load() != 20 || h2.Load() != 0) {
			t.Errorf("http1: server saw %d HTTP/2 and %d HTTP/1 requests", h2.Load(), h1.Load())
		}
		note := readRun(t, o.OutDir).m.Notes["http"]
		if want2 != strings.Contains(note, "20 responses over HTTP/2, 0 over HTTP/1.x") {
			t.Errorf("http2=%v: note %q", want2, note)
		}
	}
}
