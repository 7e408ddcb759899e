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

func (s *Server) stream(ctx context.Context, w http.ResponseWriter, q *request, p *plan, chat bool, id string, tm *timing) {
	s.streamHeader(w)
	rc := http.NewResponseController(w)
	includeUsage := q.StreamOptions != nil && q.StreamOptions.IncludeUsage
	// llama.cpp ignores continuous_usage_stats: usage on the last chunk only.
	continuous := q.StreamOptions != nil && q.StreamOptions.ContinuousUsageStats && s.cfg.Flavor != FlavorLlamaCpp
	obj := "text_completion"
	if chat {
		obj = "chat.completion.chunk"
	}
	buf := make([]byte, 0, 512)
	llama := s.cfg.Flavor == FlavorLlamaCpp
	head := func() {
		buf = append(buf[:0], `data: {"id":"`...)
		buf = append(buf, id...)
		buf = append(buf, `","object":"`...)
		buf = append(buf, obj...)
		buf = append(buf, `","created":0,"model":`...)
		buf = append(buf, quote(s.cfg.Model)...)
		if llama {
			buf = append(buf, `,"system_fingerprint":"`+LlamaCppBuildInfo+`"`...)
		}
		buf = append(buf, `,"choices":[`...)
	}
	usage := func(done int) {
		if llama {
			buf = p.llamaUsage(buf, done, tm, true)
			return
		}
		buf = append(buf, `"usage":{"prompt_tokens":`...)
		buf = strconv.AppendInt(buf, int64(p.promptTokens), 10)
		buf = append(buf, `,"completion_tokens":`...)
		buf = strconv.AppendInt(buf, int64(done), 10)
		buf = append(buf, `,"total_tokens":`...)
		buf = strconv.AppendInt(buf, int64(p.promptTokens+done), 10)
		buf = append(buf, '}')
	}
	send := func() bool {
		if _, err := w.Write(buf); err != nil {
			return false
		}
		return rc.Flush() == nil
	}
	if chat {
		// Role-only first chunk, sent at once, as vLLM and OpenAI do.
		head()
		buf = append(buf, `{"index":0,"delta":{"role":"assistant","content":""},"logprobs":null,"finish_reason":null}]}`...)
		buf = append(buf, "\n\n"...)
		if !send() {
			return
		}
	}
	// Deadlines are absolute, so a timer that fires late (Go's timers wake
	// with about 1 ms resolution on Linux) delays a chunk but not the rest
	// of the stream: the model's times hold on average.
	due := time.Now().Add(s.scale(p.prefill))
	if !s.sleepUntil(ctx, w, due, true) {
		return
	}
	done := 0
	for i, k := range p.chunks {
		if i == p.failAt {
			buf = append(buf[:0], `data: {"error":{"message":"simulated engine failure","type":"InternalServerError","code":500}}`+"\n\n"...)
			send()
			return
		}
		d := time.Duration(0)
		for range k {
			d += s.tokenTime()
		}
		if p.stalls[i] {
			d += s.cfg.Stall
		}
		due = due.Add(s.scale(d))
		if !s.sleepUntil(ctx, w, due, false) {
			return
		}
		head()
		buf = append(buf, `{"index":0,`...)
		reasoning := chat && done < s.cfg.ReasoningTokens
		switch {
		case chat && reasoning:
			buf = append(buf, `"delta":{"reasoning_content":"`...)
		case chat:
			buf = append(buf, `"delta":{"content":"`...)
		default:
			buf = append(buf, `"text":"`...)
		}
		for range k {
			buf = append(buf, words[p.rng.IntN(len(words))]...)
			buf = append(buf, ' ')
		}
		done += k
		buf = append(buf, '"')
		if chat {
			buf = append(buf, '}')
		}
		buf = append(buf, `,"logprobs":null,"finish_reason":null}]`...)
		if continuous && includeUsage {
			buf = append(buf, ',')
			usage(done)
		}
		buf = append(buf, "}\n\n"...)
		if !send() {
			return
		}
		now := time.Now()
		if i == 0 {
			tm.first = now
			s.metrics.firstToken(tm)
		} else {
			tm.gaps = append(tm.gaps, now.Sub(tm.last))
		}
		tm.last = now
	}
	if p.failAt == len(p.chunks) {
		buf = append(buf[:0], `data: {"error":{"message":"simulated engine failure","type":"InternalServerError","code":500}}`+"\n\n"...)
		send()
		return
	}
	finish := "length"
	if !q.IgnoreEOS && q.MaxTokens != nil && done < *q.MaxTokens {
		finish = "stop"
	}
	head()
	if chat {
		buf = append(buf, `{"index":0,"delta":{},"logprobs":null,"finish_reason":"`...)
	} else {
		buf = append(buf, `{"index":0,"text":"","logprobs":null,"finish_reason":"`...)
	}
	buf = append(buf, finish...)
	buf = append(buf, `"}]`...)
	if continuous && includeUsage {
		buf = append(buf, ',')
		usage(done)
	}
	switch {
	case llama && !chat:
		// llama.cpp's completions stream: usage and timings always on
		// the finish chunk, no usage chunk.
		buf = append(buf, ',')
		buf = p.llamaUsage(buf, done, tm, true)
	case llama && !includeUsage:
		buf = append(buf, ',')
		buf = p.llamaUsage(buf, done, tm, false)
	}
	buf = append(buf, "}\n\n"...)
	if !send() {
		return
	}
	if includeUsage && !(llama && !chat) {
		head()
		buf = append(buf, "],"...)
		usage(done)
		buf = append(buf, "}\n\n"...)
		if !send() {
			return
		}
	}
	buf = append(buf[:0], "data: [DONE]\n\n"...)
	if send() {
		s.served.Add(1)
		tm.output = done
		s.metrics.finished(tm, finish)
		if llama {
			s.llamaFinished(tm, p.cached)
		}
	}
	if s.cfg.CloseAfterStream {
		s.closeAfter(w)
	}
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
