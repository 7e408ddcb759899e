package simulator

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"
)

// resetCache empties the prefix cache, as vLLM's POST
// /reset_prefix_cache and SGLang's POST /flush_cache do.
func (s *Server) resetCache(w http.ResponseWriter, r *http.Request) {
	s.mark(w)
	s.cacheMu.Lock()
	clear(s.cache)
	s.cacheMu.Unlock()
	s.resets.Add(1)
	w.WriteHeader(http.StatusOK)
}

func (s *Server) models(w http.ResponseWriter, r *http.Request) {
	s.mark(w)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"object":"list","data":[{"id":%s,"object":"model","created":0,"owned_by":%q}]}`+"\n", quote(s.cfg.Model), Owner)
}

func (s *Server) version(w http.ResponseWriter, r *http.Request) {
	s.mark(w)
	w.Header().Set("Content-Type", "application/json")
	fmt.Fprintf(w, `{"version":%s,"name":%q,"simulator":true}`+"\n", quote(s.cfg.Version), Owner)
}

func writeError(w http.ResponseWriter, code int, typ, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	fmt.Fprintf(w, `{"error":{"message":%s,"type":%q,"code":%d}}`+"\n", quote(msg), typ, code)
}

func quote(s string) string {
	b, _ := json.Marshal(s)
	return string(b)
}

func (s *Server) complete(w http.ResponseWriter, r *http.Request, chat bool) {
	s.mark(w)
	var q request
	if err := json.NewDecoder(io.LimitReader(r.Body, 64<<20)).Decode(&q); err != nil {
		writeError(w, http.StatusBadRequest, "BadRequestError", "invalid JSON body: "+err.Error())
		return
	}
	if !s.cfg.AnyModel && q.Model != s.cfg.Model {
		writeError(w, http.StatusNotFound, "NotFoundError", fmt.Sprintf("The model `%s` does not exist.", q.Model))
		return
	}
	if chat && len(q.Messages) == 0 {
		writeError(w, http.StatusBadRequest, "BadRequestError", "messages must not be empty")
		return
	}
	if !chat && q.Prompt == nil {
		writeError(w, http.StatusBadRequest, "BadRequestError", "prompt is required")
		return
	}
	p := s.plan(&q, chat)
	tm := &timing{arrival: time.Now(), prompt: p.promptTokens}
	ctx := r.Context()
	id := "cmpl-sim-" + strconv.FormatInt(s.seq.Add(1), 10)

	// Admission: a free slot, else a queue place, else 429.
	select {
	case s.slots <- struct{}{}:
	default:
		if s.waiting.Add(1) > int64(s.cfg.QueueLimit) {
			s.waiting.Add(-1)
			s.rejected.Add(1)
			writeError(w, http.StatusTooManyRequests, "TooManyRequests", "simulator queue is full")
			return
		}
		if q.Stream {
			s.streamHeader(w)
		}
		ok := s.wait(ctx, w, q.Stream, func(done <-chan struct{}) bool {
			select {
			case s.slots <- struct{}{}:
				return true
			case <-done:
				return false
			}
		})
		s.waiting.Add(-1)
		if !ok {
			return
		}
	}
	s.gpus.change(1)
	s.running.Add(1)
	defer func() {
		s.gpus.change(-1)
		s.running.Add(-1)
		<-s.slots
	}()
	tm.scheduled = time.Now()
	if q.Stream {
		s.stream(ctx, w, &q, p, chat, id, tm)
	} else {
		s.whole(ctx, w, p, chat, id, tm)
	}
}
