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
// chunk's time is when its bytes arrived: never before the server wrote
// them, and for the first chunk before the server wrote the second one 60
// ms later (which, with the usage and [DONE], ends the stream). A time
// taken when the stream had been read or parsed would fail the second
// check. (TestChunkTimeIsTheReadThatCompletedIt checks the clock is read
// per read, never while parsing.) The bounds hold on a loaded machine.
func TestChunkTimeIsArrivalNotParse(t *testing.T) {
	var wrote [2]atomic.Int64 // wall ns before each chunk was written
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		fl := w.(http.Flusher)
		fl.Flush()
		time.Sleep(40 * time.Millisecond)
		wrote[0].Store(time.Now().UnixNano())
		fmt.Fprint(w, `data: {"choices":[{"delta":{"content":"a"}}]}`+"\n\n")
		fl.Flush()
		time.Sleep(60 * time.Millisecond)
		wrote[1].Store(time.Now().UnixNano())
		fmt.Fprint(w, `data: {"choices":[{"delta":{"content":"b"}}]}`+"\n\n"+
			`data: {"choices":[],"usage":{"prompt_tokens":3,"completion_tokens":2}}`+"\n\ndata: [DONE]\n\n")
	}))
	defer ts.Close()
	o := baseOptions(t, ts.URL)
	o.Probe = false
	o.SkipPreflight = true
	o.Plan.Points = []schema.Point{{Concurrency: 1, Requests: 1}}
	if _, err := capture.Run(context.Background(), o); err != nil {
		t.Fatal(err)
	}
	rf := readRun(t, o.OutDir)
	r := rf.recs[0]
	if r.Status != schema.StatusOK || len(r.ChunksNS) != 2 || r.OutputTokens != 2 {
		t.Fatalf("%+v", r)
	}
	// The run's clock is monotonic from epoch_unix_ns; the wall clock is
	// assumed not to jump during the test.
	at := func(i int) int64 { return rf.m.EpochUnixNS + r.SentNS + r.ChunksNS[i] }
	if at(0) < wrote[0].Load() || at(1) < wrote[1].Load() {
		t.Errorf("a chunk is timed before the server wrote it: %d < %d or %d < %d", at(0), wrote[0].Load(), at(1), wrote[1].Load())
	}
	if at(0) >= wrote[1].Load() {
		t.Errorf("first chunk timed %v after the second was written: not at its arrival", time.Duration(at(0)-wrote[1].Load()))
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
