package simulator

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"time"
)

func (s *Server) streamHeader(w http.ResponseWriter) {
	h := w.Header()
	if h.Get("Content-Type") != "" {
		return
	}
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	http.NewResponseController(w).Flush()
}

var words = strings.Fields(`the a of and to in is it that for on with as was at by an be this from or which
one all were we when your can said there use each how up out many then them these so some her would make
like him into time has look two more write go see number no way could people my than first water been call`)

// stream answers q as server-sent events: the role chunk of a chat
// stream, the plan's token chunks at their times, then the finish and
// usage chunks and [DONE]; each phase is an eventStream method, so the
// event shapes read one at a time.
func (s *Server) stream(ctx context.Context, w http.ResponseWriter, q *request, p *plan, chat bool, id string, tm *timing) {
	s.streamHeader(w)
	e := s.newEventStream(w, q, p, chat, id, tm)
	if chat && !e.roleChunk() {
		return
	}
	// Deadlines are absolute, so a timer that fires late (Go's timers wake
	// with about 1 ms resolution on Linux) delays a chunk but not the rest
	// of the stream: the model's times hold on average.
	due := time.Now().Add(s.scale(p.prefill))
	if !s.sleepUntil(ctx, w, due, true) {
		return
	}
	done, ok := e.tokenChunks(ctx, due)
	if !ok {
		return
	}
	if p.failAt == len(p.chunks) {
		e.sendFailure()
		return
	}
	finish := "length"
	if !q.IgnoreEOS && q.MaxTokens != nil && done < *q.MaxTokens {
		finish = "stop"
	}
	if !e.finishChunks(done, finish) {
		return
	}
	e.buf = append(e.buf[:0], "data: [DONE]\n\n"...)
	if e.send() {
		s.served.Add(1)
		tm.output = done
		s.metrics.finished(tm, finish)
		if e.llama {
			s.llamaFinished(tm, p.cached)
		}
	}
	if s.cfg.CloseAfterStream {
		s.closeAfter(w)
	}
}

// eventStream is one streamed answer's state: its server-sent events are
// built in buf, one at a time, by the phases of Server.stream (role chunk,
// token chunks, finish and usage chunks), which share the chunk header
// and usage object written here.
type eventStream struct {
	s                        *Server
	w                        http.ResponseWriter
	rc                       *http.ResponseController
	p                        *plan
	tm                       *timing
	id, obj                  string
	buf                      []byte
	chat, llama              bool
	includeUsage, continuous bool
}

// newEventStream reads from q which usage the client asked for and
// whether the answer is a chat or completions stream.
func (s *Server) newEventStream(w http.ResponseWriter, q *request, p *plan, chat bool, id string, tm *timing) *eventStream {
	e := &eventStream{
		s: s, w: w, rc: http.NewResponseController(w), p: p, tm: tm, id: id, obj: "text_completion",
		buf: make([]byte, 0, 512), chat: chat, llama: s.cfg.Flavor == FlavorLlamaCpp,
		includeUsage: q.StreamOptions != nil && q.StreamOptions.IncludeUsage,
		// llama.cpp ignores continuous_usage_stats: usage on the last chunk only.
		continuous: q.StreamOptions != nil && q.StreamOptions.ContinuousUsageStats && s.cfg.Flavor != FlavorLlamaCpp,
	}
	if chat {
		e.obj = "chat.completion.chunk"
	}
	return e
}

// head starts an event in buf: "data: " and the chunk object up to its
// choices array.
func (e *eventStream) head() {
	e.buf = append(e.buf[:0], `data: {"id":"`...)
	e.buf = append(e.buf, e.id...)
	e.buf = append(e.buf, `","object":"`...)
	e.buf = append(e.buf, e.obj...)
	e.buf = append(e.buf, `","created":0,"model":`...)
	e.buf = append(e.buf, quote(e.s.cfg.Model)...)
	if e.llama {
		e.buf = append(e.buf, `,"system_fingerprint":"`+LlamaCppBuildInfo+`"`...)
	}
	e.buf = append(e.buf, `,"choices":[`...)
}

// usage appends the usage object after done completion tokens, in the
// flavor's shape.
func (e *eventStream) usage(done int) {
	if e.llama {
		e.buf = e.p.llamaUsage(e.buf, done, e.tm, true)
		return
	}
	e.buf = append(e.buf, `"usage":{"prompt_tokens":`...)
	e.buf = strconv.AppendInt(e.buf, int64(e.p.promptTokens), 10)
	e.buf = append(e.buf, `,"completion_tokens":`...)
	e.buf = strconv.AppendInt(e.buf, int64(done), 10)
	e.buf = append(e.buf, `,"total_tokens":`...)
	e.buf = strconv.AppendInt(e.buf, int64(e.p.promptTokens+done), 10)
	e.buf = append(e.buf, '}')
}

// send writes and flushes the event in buf; false: the client is gone.
func (e *eventStream) send() bool {
	if _, err := e.w.Write(e.buf); err != nil {
		return false
	}
	return e.rc.Flush() == nil
}

// sendFailure sends the simulated engine failure's error event.
func (e *eventStream) sendFailure() {
	e.buf = append(e.buf[:0], `data: {"error":{"message":"simulated engine failure","type":"InternalServerError","code":500}}`+"\n\n"...)
	e.send()
}

// roleChunk sends the role-only first chunk of a chat stream, at once,
// as vLLM and OpenAI do; false: the client is gone.
func (e *eventStream) roleChunk() bool {
	e.head()
	e.buf = append(e.buf, `{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`...)
	e.buf = append(e.buf, "\n\n"...)
	return e.send()
}

// tokenChunks sends the plan's token chunks, each at its absolute due
// time after due, and records their timing. It returns the tokens sent,
// and false when the stream ended early (a failure before a chunk, a
// cancelled context or a gone client).
func (e *eventStream) tokenChunks(ctx context.Context, due time.Time) (int, bool) {
	s, p, tm := e.s, e.p, e.tm
	done := 0
	for i, k := range p.chunks {
		if i == p.failAt {
			e.sendFailure()
			return done, false
		}
		d := time.Duration(0)
		for range k {
			d += s.tokenTime()
		}
		if p.stalls[i] {
			d += s.cfg.Stall
		}
		due = due.Add(s.scale(d))
		if !s.sleepUntil(ctx, e.w, due, false) {
			return done, false
		}
		e.tokenChunk(k, done)
		done += k
		if e.continuous && e.includeUsage {
			e.buf = append(e.buf, ',')
			e.usage(done)
		}
		e.buf = append(e.buf, "}\n\n"...)
		// The token is timed as it is handed to the connection, before the
		// write, as vLLM stamps its first token before streaming it: a time
		// taken after the write may be later than the client's receipt of
		// the chunk (the server descheduled after a loopback write), which
		// would put the engine's ttft above the client's, which no engine's
		// can be (artifact.checkLatencyFloors holds the records to it).
		now := time.Now()
		if !e.send() {
			return done, false
		}
		if i == 0 {
			tm.first = now
			s.metrics.firstToken(tm)
		} else {
			tm.gaps = append(tm.gaps, now.Sub(tm.last))
		}
		tm.last = now
	}
	return done, true
}

// tokenChunk builds in buf a chunk of k random words, after done tokens
// (a chat stream's first ReasoningTokens are reasoning content), up to
// the end of its choices array.
func (e *eventStream) tokenChunk(k, done int) {
	e.head()
	e.buf = append(e.buf, `{"index":0,`...)
	reasoning := e.chat && done < e.s.cfg.ReasoningTokens
	switch {
	case e.chat && reasoning:
		e.buf = append(e.buf, `"delta":{"reasoning_content":"`...)
	case e.chat:
		e.buf = append(e.buf, `"delta":{"content":"`...)
	default:
		e.buf = append(e.buf, `"text":"`...)
	}
	for range k {
		e.buf = append(e.buf, words[e.p.rng.IntN(len(words))]...)
		e.buf = append(e.buf, ' ')
	}
	e.buf = append(e.buf, '"')
	if e.chat {
		e.buf = append(e.buf, '}')
	}
	e.buf = append(e.buf, `,"logprobs":null,"finish_reason":null}]`...)
}

// finishChunks sends the chunk with the finish reason (with usage where
// the client or the flavor puts it there) and then the usage chunk when
// the client asked for one; false: the client is gone.
func (e *eventStream) finishChunks(done int, finish string) bool {
	e.head()
	if e.chat {
		e.buf = append(e.buf, `{"index":0,"delta":{},"logprobs":null,"finish_reason":"`...)
	} else {
		e.buf = append(e.buf, `{"index":0,"text":"","logprobs":null,"finish_reason":"`...)
	}
	e.buf = append(e.buf, finish...)
	e.buf = append(e.buf, `"}]`...)
	if e.continuous && e.includeUsage {
		e.buf = append(e.buf, ',')
		e.usage(done)
	}
	switch {
	case e.llama && !e.chat:
		// llama.cpp's completions stream: usage and timings always on
		// the finish chunk, no usage chunk.
		e.buf = append(e.buf, ',')
		e.buf = e.p.llamaUsage(e.buf, done, e.tm, true)
	case e.llama && !e.includeUsage:
		e.buf = append(e.buf, ',')
		e.buf = e.p.llamaUsage(e.buf, done, e.tm, false)
	}
	e.buf = append(e.buf, "}\n\n"...)
	if !e.send() {
		return false
	}
	if e.includeUsage && !(e.llama && !e.chat) {
		e.head()
		e.buf = append(e.buf, "],"...)
		e.usage(done)
		e.buf = append(e.buf, "}\n\n"...)
		if !e.send() {
			return false
		}
	}
	return true
}

// closeAfter ends the chunked answer and closes its connection a moment
// later, as llama.cpp's server does after a stream (its answer said
// keep-alive): a request the client sent on the connection meanwhile is
// never read.
func (s *Server) closeAfter(w http.ResponseWriter) {
	conn, bw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	bw.WriteString("0\r\n\r\n")
	bw.Flush()
	time.AfterFunc(closeAfterStreamDelay, func() { conn.Close() })
}
