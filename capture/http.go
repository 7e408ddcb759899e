// Sending one request and turning its response into a record.

package capture

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"time"

	"github.com/benchseal/benchseal/schema"
)

// NewTransport returns the transport capture's client uses: no proxy, no
// transparent compression (which would delay chunks), idle connections
// kept for maxConns streams. With http2 it also
// speaks HTTP/2 to a server that offers it during the TLS handshake
// (ALPN), multiplexing many streams over few connections; cleartext
// http:// endpoints stay HTTP/1.1, the protocol every inference server
// speaks.
func NewTransport(maxConns int, http2 bool) *http.Transport {
	tr := &http.Transport{
		Proxy:                 nil,
		DialContext:           (&net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:          0,
		MaxIdleConnsPerHost:   maxConns + 16,
		IdleConnTimeout:       90 * time.Second,
		DisableCompression:    true,
		ForceAttemptHTTP2:     http2,
		WriteBufferSize:       32 << 10,
		ReadBufferSize:        32 << 10,
		ExpectContinueTimeout: 0,
	}
	if http2 {
		tr.Protocols = new(http.Protocols)
		tr.Protocols.SetHTTP1(true)
		tr.Protocols.SetHTTP2(true)
	}
	return tr
}

var (
	errTimeout       = errors.New("request timeout")
	errPlannedCancel = errors.New("cancelled by plan")
	errRunStopped    = errors.New("run stopped")
	errDrain         = errors.New("response drained")
)

func (r *runner) newRecord(c *cell, k int) *schema.Record {
	item := int64(c.items[k%len(c.items)])
	ph := "m"
	if c.phase == schema.PhaseWarmup {
		ph = "w"
	}
	rec := &schema.Record{
		ID:       fmt.Sprintf("%s.r%d.%s%d", c.pt.Name, c.repeat, ph, k),
		Point:    c.pt.Name,
		Repeat:   c.repeat,
		Phase:    c.phase,
		Item:     &item,
		ChunksNS: []int64{},
	}
	if r.o.Shard != nil || !r.o.StartAt.IsZero() {
		s := int64(c.shard.Index)
		rec.Shard = &s
	}
	if it := &r.items[item]; c.starts != nil && it.Session != nil && it.Turn != nil {
		s, t := int64(*it.Session), int64(*it.Turn)
		rec.Session, rec.Turn = &s, &t
	}
	return rec
}

// finish ends request number j of this process in cell c (its position
// in the process's share: the request number itself when not sharded).
func (r *runner) finish(c *cell, j int, rec *schema.Record) {
	if rec.Status != schema.StatusOK {
		r.cur.bad.Add(1)
	}
	r.cur.done.Add(1)
	r.noteEnd(c, rec)
	r.keeper.noteRecord(c, rec)
	r.totalChunks.Add(int64(len(rec.ChunksNS)))
	if c.phase == schema.PhaseMeasure {
		c.stats.add(rec)
		r.prefix.add(&r.items[*rec.Item], rec)
	}
	c.order.release(j, rec, func(rec *schema.Record) { r.sink.add(rec) })
}

// do sends request k of cell c, the process's j-th, and records it. sched
// is the intended send time (open loop) or nil. It returns the record's
// end_ns, which a closed-loop worker compares with its phase's deadline.
func (r *runner) do(c *cell, k, j int, sched *int64) (endNS int64) {
	if sched == nil {
		r.inflight.Add(1)
	}
	defer r.inflight.Add(-1)
	rec := r.newRecord(c, k)
	rec.ScheduledNS = sched
	itemIdx := int(*rec.Item)
	it := &r.items[itemIdx]

	ctx, cancel := context.WithCancelCause(r.reqBase)
	defer cancel(nil)
	r.cur.sent.Add(1)
	rec.SentNS = r.now()
	c.noteSent(rec.SentNS)
	// The timeout and the planned cancellation count from the send time
	// just taken, so end_ns − sent_ns is never shorter than either. The
	// timers only stop the waiting; enforceLimits decides the status from
	// the record's own times, however late a timer or a read ran.
	lim := r.limit(c, k)
	if lim.timeout > 0 {
		t := time.AfterFunc(time.Duration(lim.timeout), func() { cancel(errTimeout) })
		defer t.Stop()
	}
	if lim.cancel > 0 {
		t := time.AfterFunc(time.Duration(lim.cancel), func() { cancel(errPlannedCancel) })
		defer t.Stop()
	}
	defer func() {
		lim.enforce(rec)
		r.counts.settle(rec, it)
		endNS = rec.EndNS
		r.finish(c, j, rec)
	}()
	resp, err := r.send(ctx, r.bodies[itemIdx], rec)
	if err != nil {
		rec.EndNS = r.now()
		rec.Status, rec.Error = failure(ctx, err)
		r.fillTokens(rec, it, nil)
		return
	}
	defer resp.Body.Close()
	if resp.ProtoMajor == 2 {
		r.http2Responses.Add(1)
	} else {
		r.http1Responses.Add(1)
	}
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
		rec.EndNS = r.now()
		rec.Status = schema.StatusError
		if resp.StatusCode == http.StatusTooManyRequests {
			rec.Status = schema.StatusRejected
		}
		rec.Error = fmt.Sprintf("server: HTTP %s: %s", resp.Status, truncate(strings.TrimSpace(string(b)), 300))
		r.fillTokens(rec, it, nil)
		return
	}
	if r.o.Request.Stream {
		r.readStream(ctx, resp.Body, rec, it)
		if rec.Status == schema.StatusOK {
			// Read the end of the HTTP response after [DONE] so the
			// connection can be reused, but never wait long for it.
			t := time.AfterFunc(250*time.Millisecond, func() { cancel(errDrain) })
			io.Copy(io.Discard, io.LimitReader(resp.Body, 1<<20))
			t.Stop()
		}
	} else {
		r.readWhole(ctx, resp.Body, rec, it)
	}
	return // endNS is set by the deferred finish
}

// limits are the client-side deadlines of one request, in nanoseconds
// after its sent_ns (0: none): the run's request timeout and, for a
// request picked for planned cancellation, the cancellation delay.
type limits struct{ timeout, cancel int64 }

func (r *runner) limit(c *cell, k int) limits {
	var l limits
	if to := int64(r.o.Plan.RequestTimeout); to > 0 {
		l.timeout = to
	}
	if c.cancelAt != nil && k < len(c.cancelAt) && c.cancelAt[k] {
		l.cancel = max(int64(r.o.Plan.Cancel.After), 1)
	}
	return l
}

// enforce makes rec's status agree with its own timestamps. A request
// whose end_ns − sent_ns exceeds the earlier of its limits ends with that
// limit's status (timeout or cancelled), whatever it read: on a starved
// client the timer goroutine and the reader can both run late, so bytes
// that arrived after the limit may be read (and all stamped at one late
// read) before the cancellation takes effect. Chunks stamped after the
// limit are dropped, since the client had given up on them, and
// output_tokens counts the chunks kept. end_ns stays the time the client
// actually stopped. Rejected records (never sent) are left alone.
func (l limits) enforce(rec *schema.Record) {
	at, status, msg := int64(0), "", ""
	if l.timeout > 0 {
		at, status, msg = l.timeout, schema.StatusTimeout, "client: request timeout"
	}
	if l.cancel > 0 && (at == 0 || l.cancel < at) {
		at, status, msg = l.cancel, schema.StatusCancelled, "client: cancelled by plan"
	}
	if at == 0 || rec.Status == schema.StatusRejected || rec.EndNS-rec.SentNS <= at {
		return
	}
	kept := len(rec.ChunksNS)
	for kept > 0 && rec.ChunksNS[kept-1] > at {
		kept--
	}
	if kept < len(rec.ChunksNS) || rec.Status != status {
		rec.ChunksNS = rec.ChunksNS[:kept]
		rec.ChunkTokens = nil
		rec.OutputTokens = int64(kept)
	}
	if rec.Status != status {
		rec.Error = fmt.Sprintf("%s (the client saw the response end only %s after send, past the %s limit; chunks read after it dropped)",
			msg, time.Duration(rec.EndNS-rec.SentNS).Round(time.Microsecond), time.Duration(at))
		rec.Status = status
	}
}

func failure(ctx context.Context, err error) (status, msg string) {
	switch cause := context.Cause(ctx); {
	case errors.Is(cause, errTimeout):
		return schema.StatusTimeout, "client: request timeout"
	case errors.Is(cause, errPlannedCancel):
		return schema.StatusCancelled, "client: cancelled by plan"
	case errors.Is(cause, errRunStopped):
		return schema.StatusCancelled, "client: run stopped (interrupted, grace period over)"
	}
	return schema.StatusError, "client: " + err.Error()
}

func (r *runner) readStream(ctx context.Context, body io.Reader, rec *schema.Record, it *Item) {
	sr := ssePool.Get().(*SSEReader)
	sr.Reset(body, r.now)
	defer func() {
		sr.Reset(nil, nil)
		ssePool.Put(sr)
	}()
	hint := 0
	if it.OutputTokens > 0 {
		hint = min(it.OutputTokens, 4096)
	}
	sres := ReadStream(sr, hint)
	rec.ChunksNS = sres.Chunks
	for i := range rec.ChunksNS {
		rec.ChunksNS[i] -= rec.SentNS
	}
	switch {
	case sres.Err != "":
		rec.Status, rec.Error = schema.StatusError, sres.Err
	case sres.ReadErr != nil:
		rec.Status, rec.Error = failure(ctx, sres.ReadErr)
	case !sres.Done && !sres.Finished:
		rec.Status, rec.Error = schema.StatusError, "stream ended before [DONE] or a finish_reason"
	case len(rec.ChunksNS) == 0:
		rec.Status, rec.Error = schema.StatusError, "no content in the response"
	default:
		rec.Status = schema.StatusOK
	}
	rec.EndNS = sres.End
	if rec.EndNS == 0 {
		rec.EndNS = r.now()
	}
	if n := len(rec.ChunksNS); n > 0 {
		rec.EndNS = max(rec.EndNS, rec.SentNS+rec.ChunksNS[n-1])
	}
	rec.EndNS = max(rec.EndNS, rec.SentNS)
	r.fillTokens(rec, it, sres.Usage)
	rec.Server = serverReport(sres.Usage, sres.Timings)
	if r.o.Request.PerChunkUsage && rec.Status == schema.StatusOK {
		rec.ChunkTokens = sres.chunkTokens()
		r.okStreams.Add(1)
		if rec.ChunkTokens != nil {
			r.perChunk.Add(1)
		}
	}
}

func (r *runner) readWhole(ctx context.Context, body io.Reader, rec *schema.Record, it *Item) {
	b, err := io.ReadAll(io.LimitReader(body, MaxEventSize))
	rec.EndNS = r.now()
	if err != nil {
		rec.Status, rec.Error = failure(ctx, err)
		r.fillTokens(rec, it, nil)
		return
	}
	ch := ParseChunk(&Event{Data: b, At: rec.EndNS})
	switch {
	case ch.Err != "":
		rec.Status, rec.Error = schema.StatusError, ch.Err
	case !ch.Content:
		rec.Status, rec.Error = schema.StatusError, "no content in the response"
	default:
		rec.Status = schema.StatusOK
		rec.ChunksNS = append(rec.ChunksNS, rec.EndNS-rec.SentNS)
	}
	r.fillTokens(rec, it, ch.Usage)
	rec.Server = serverReport(ch.Usage, ch.Timings)
}

// serverReport copies what the engine said about the request beyond
// usage's counts: its cached prompt tokens and llama.cpp's timers (ms
// become ns, rounded; a negative or non-finite value is left out). Nil
// when it said none of it.
func serverReport(u *Usage, t *Timings) *schema.ServerReport {
	var sr schema.ServerReport
	some := false
	count := func(dst **int64, v *int64) {
		if v != nil && *v >= 0 {
			n := *v
			*dst, some = &n, true
		}
	}
	ns := func(dst **int64, ms *float64) {
		if ms == nil || !(*ms >= 0) || *ms > math.MaxInt64/1e6 {
			return
		}
		n := int64(math.Round(*ms * 1e6))
		*dst, some = &n, true
	}
	if u != nil && u.HasCached {
		count(&sr.CachedTokens, &u.CachedTokens)
	}
	if t != nil {
		count(&sr.PromptN, t.PromptN)
		count(&sr.CacheN, t.CacheN)
		count(&sr.PredictedN, t.PredictedN)
		ns(&sr.PromptNS, t.PromptMS)
		ns(&sr.PredictedNS, t.PredictedMS)
	}
	if !some {
		return nil
	}
	return &sr
}

// send posts one request body. A request sent on a reused keep-alive
// connection that the server had closed, with no byte of an answer read,
// never reached the server (llama.cpp's server closes the connection
// after each stream although it answered keep-alive): it is sent once
// more on a fresh connection, its sent_ns taken again and rec.Retries
// counting it, and from then on every request of the run gets a fresh
// connection. Any other failure is the request's. The transport's own
// silent resend of a request it could not write at all (a second
// connection for one request) is counted in rec.Retries too.
func (r *runner) send(ctx context.Context, body []byte, rec *schema.Record) (*http.Response, error) {
	for {
		var reused, answered bool
		conns := 0
		trace := &httptrace.ClientTrace{
			GotConn: func(i httptrace.GotConnInfo) {
				conns++
				reused = i.Reused
			},
			GotFirstResponseByte: func() { answered = true },
		}
		req, err := http.NewRequestWithContext(httptrace.WithClientTrace(ctx, trace), http.MethodPost, r.url, bytes.NewReader(body))
		if err != nil {
			panic(err) // the URL was checked in Run
		}
		req.Header.Set("Content-Type", "application/json")
		if r.o.Request.Stream {
			req.Header.Set("Accept", "text/event-stream")
		}
		if r.o.APIKey != "" {
			req.Header.Set("Authorization", "Bearer "+r.o.APIKey)
		}
		client := r.client
		if r.serverCloses.Load() {
			client = r.fresh
		}
		resp, err := client.Do(req)
		if conns > 1 {
			rec.Retries += int64(conns - 1)
		}
		if err == nil || !reused || answered || ctx.Err() != nil || rec.Retries >= maxResends {
			return resp, err
		}
		r.serverCloses.Store(true)
		r.resent.Add(1)
		rec.Retries++
		rec.SentNS = r.now()
	}
}

// maxResends bounds the resends of one request on a fresh connection.
const maxResends = 1

func (r *runner) fillTokens(rec *schema.Record, it *Item, usage *Usage) {
	r.counts.learn(rec, usage)
	if usage != nil {
		rec.OutputTokens = usage.CompletionTokens
		if rec.Status == schema.StatusOK && rec.OutputTokens == 0 {
			rec.OutputTokens = int64(len(rec.ChunksNS))
			r.usageMissing.Store(true)
		}
		return
	}
	rec.OutputTokens = int64(len(rec.ChunksNS))
	if rec.Status == schema.StatusOK {
		r.usageMissing.Store(true)
	}
}

// approxTokens estimates a prompt's tokens as its whitespace-separated
// words, for an ok answer without usage to a prompt no answer counted.
func approxTokens(it *Item) int {
	if it.Prompt != "" {
		return len(strings.Fields(it.Prompt))
	}
	n := 0
	for _, m := range it.Messages {
		n += len(strings.Fields(m.Content))
	}
	return n
}
