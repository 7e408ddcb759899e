package simulator

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Owner is the owned_by value of the simulator's model in /v1/models, and
// Header the response header it sets on every answer; clients use either to
// tell a simulated run from a real one.
const (
	Owner  = "benchseal-simulator"
	Header = "X-Benchseal-Simulator"
)

// ErrConfig is the root of configuration errors.
var ErrConfig = errors.New("invalid simulator config")

// Config is the simulator's latency model. All durations are multiplied by
// TimeScale before use. Zero fields take the defaults of DefaultConfig.
type Config struct {
	// Seed makes every per-request random choice (output length when not
	// forced, chunk sizes, stalls, error injection) a function of the seed
	// and the request's prompt.
	Seed int64
	// Model is the one model served (default "benchseal-sim"); requests for
	// another model get 404. AnyModel accepts any name.
	Model    string
	AnyModel bool
	// Version is reported by /version.
	Version string
	// TimeScale multiplies every duration (e.g. 0.01 for fast tests).
	TimeScale float64
	// Prefill time = PrefillBase + PrefillPerToken × prompt tokens.
	PrefillBase, PrefillPerToken time.Duration
	// Each output token takes DecodeBase + DecodePerRunning × (requests
	// decoding or prefilling at that moment − 1).
	DecodeBase, DecodePerRunning time.Duration
	// MaxRunning requests are served at once (a batch); up to QueueLimit
	// more wait for a slot; beyond that the answer is 429.
	MaxRunning, QueueLimit int
	// Each chunk carries 1..MaxChunkTokens tokens (uniform).
	MaxChunkTokens int
	// Before each chunk, with probability StallProb, the stream stalls for
	// Stall extra.
	StallProb float64
	Stall     time.Duration
	// ErrorRate is the fraction of streamed requests that fail mid-stream
	// with an in-band error event (HTTP status stays 200).
	ErrorRate float64
	// ReasoningTokens of each chat answer (at most all of them) are sent
	// as delta.reasoning_content before the content.
	ReasoningTokens int
	// KeepAlive, when > 0, sends ": keep-alive" comment lines at this
	// interval while a request waits in the queue or in prefill.
	KeepAlive time.Duration
	// DefaultMaxTokens applies when a request sets no max_tokens.
	DefaultMaxTokens int
	// PrefixCaching models a prefix cache: a prompt seen before since the
	// start or the last reset skips the per-token part of its prefill
	// (the whole prompt is the cached prefix).
	PrefixCaching bool
	// ColdStart is extra prefill time of the first request after the
	// server started (graph capture, compilation, allocation).
	ColdStart time.Duration
	// CacheResetPath is where POST empties the prefix cache (default
	// ResetPathVLLM; ResetPathSGLang to act as SGLang; "none" serves no
	// reset endpoint, so a reset gets 404 as from a vLLM started without
	// VLLM_SERVER_DEV_MODE=1).
	CacheResetPath string
}

// Reset endpoints the simulator can serve (POST): vLLM's and SGLang's.
const (
	ResetPathVLLM   = "/reset_prefix_cache"
	ResetPathSGLang = "/flush_cache"
)

// DefaultConfig returns the documented default latency model: 20 ms +
// 50 µs per prompt token of prefill, 10 ms + 100 µs per other running
// request per output token, 64 running, 256 queued, 1-token chunks.
func DefaultConfig() Config {
	return Config{
		Model:            "benchseal-sim",
		Version:          "0.1.0-sim",
		TimeScale:        1,
		PrefillBase:      20 * time.Millisecond,
		PrefillPerToken:  50 * time.Microsecond,
		DecodeBase:       10 * time.Millisecond,
		DecodePerRunning: 100 * time.Microsecond,
		MaxRunning:       64,
		QueueLimit:       256,
		MaxChunkTokens:   1,
		DefaultMaxTokens: 16,
	}
}

// Server is an in-process OpenAI-compatible streaming server with a
// simulated latency model. It implements http.Handler.
type Server struct {
	cfg      Config
	slots    chan struct{}
	waiting  atomic.Int64
	running  atomic.Int64
	seq      atomic.Int64
	served   atomic.Int64
	rejected atomic.Int64
	mux      *http.ServeMux
	metrics  *metrics
	// started is when New returned (process_start_time_seconds).
	started time.Time
	// cold is set until the first request's prefill has been planned.
	cold atomic.Bool
	// cache holds the prompts seen since the start or the last reset
	// (PrefixCaching), by hash.
	cacheMu sync.Mutex
	cache   map[uint64]bool
	resets  atomic.Int64
}

// CheckTimeScale accepts a time scale in (0, 1000]. New treats a zero
// Config.TimeScale as 1; a command that takes the scale as a flag checks the
// value given with CheckTimeScale first, so that 0 is refused, not ignored.
func CheckTimeScale(v float64) error {
	if !(v > 0 && v <= 1000) {
		return fmt.Errorf("time scale %v out of range (0, 1000]", v)
	}
	return nil
}

// New checks cfg, fills defaults and returns a server.
func New(cfg Config) (*Server, error) {
	d := DefaultConfig()
	if cfg.Model == "" {
		cfg.Model = d.Model
	}
	if cfg.Version == "" {
		cfg.Version = d.Version
	}
	if cfg.TimeScale == 0 {
		cfg.TimeScale = 1
	}
	if cfg.MaxRunning == 0 {
		cfg.MaxRunning = d.MaxRunning
	}
	if cfg.MaxChunkTokens == 0 {
		cfg.MaxChunkTokens = 1
	}
	if cfg.DefaultMaxTokens == 0 {
		cfg.DefaultMaxTokens = d.DefaultMaxTokens
	}
	var errs []error
	if err := CheckTimeScale(cfg.TimeScale); err != nil {
		errs = append(errs, err)
	}
	if cfg.CacheResetPath == "" {
		cfg.CacheResetPath = ResetPathVLLM
	}
	if cfg.CacheResetPath != ResetPathVLLM && cfg.CacheResetPath != ResetPathSGLang && cfg.CacheResetPath != "none" {
		errs = append(errs, fmt.Errorf("cache reset path %q is none of %s, %s, none", cfg.CacheResetPath, ResetPathVLLM, ResetPathSGLang))
	}
	for name, v := range map[string]time.Duration{"cold start": cfg.ColdStart, "prefill base": cfg.PrefillBase, "prefill per token": cfg.PrefillPerToken,
		"decode base": cfg.DecodeBase, "decode per running": cfg.DecodePerRunning, "stall": cfg.Stall, "keep-alive": cfg.KeepAlive} {
		if v < 0 {
			errs = append(errs, fmt.Errorf("%s must not be negative", name))
		}
	}
	if cfg.MaxRunning < 1 || cfg.MaxRunning > 1_000_000 || cfg.QueueLimit < 0 {
		errs = append(errs, fmt.Errorf("max running %d / queue limit %d out of range", cfg.MaxRunning, cfg.QueueLimit))
	}
	if cfg.MaxChunkTokens < 1 || cfg.MaxChunkTokens > 1024 {
		errs = append(errs, fmt.Errorf("max chunk tokens %d out of range 1..1024", cfg.MaxChunkTokens))
	}
	if !(cfg.StallProb >= 0 && cfg.StallProb <= 1) || !(cfg.ErrorRate >= 0 && cfg.ErrorRate <= 1) {
		errs = append(errs, errors.New("stall probability and error rate must be in 0..1"))
	}
	if cfg.DefaultMaxTokens < 1 || cfg.ReasoningTokens < 0 {
		errs = append(errs, errors.New("default max tokens must be ≥ 1 and reasoning tokens ≥ 0"))
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %w", ErrConfig, errors.Join(errs...))
	}
	s := &Server{cfg: cfg, slots: make(chan struct{}, cfg.MaxRunning), mux: http.NewServeMux(), metrics: newMetrics(),
		started: time.Now(), cache: map[uint64]bool{}}
	s.cold.Store(true)
	s.mux.HandleFunc("GET /metrics", s.serveMetrics)
	if cfg.CacheResetPath != "none" {
		s.mux.HandleFunc("POST "+cfg.CacheResetPath, s.resetCache)
	}
	s.mux.HandleFunc("POST /v1/chat/completions", func(w http.ResponseWriter, r *http.Request) { s.complete(w, r, true) })
	s.mux.HandleFunc("POST /v1/completions", func(w http.ResponseWriter, r *http.Request) { s.complete(w, r, false) })
	s.mux.HandleFunc("GET /v1/models", s.models)
	s.mux.HandleFunc("GET /version", s.version)
	s.mux.HandleFunc("GET /health", func(w http.ResponseWriter, r *http.Request) { s.mark(w); w.WriteHeader(http.StatusOK) })
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		s.mark(w)
		writeError(w, http.StatusNotFound, "NotFoundError", "no such endpoint: "+r.Method+" "+r.URL.Path)
	})
	return s, nil
}

// Config returns the effective configuration.
func (s *Server) Config() Config { return s.cfg }

// Stats returns how many completion requests were served to the end and
// how many were answered 429.
func (s *Server) Stats() (served, rejected int64) { return s.served.Load(), s.rejected.Load() }

// ServeHTTP serves the OpenAI-compatible API.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

// Serve serves on ln until ctx ends, then shuts down, giving open streams
// a second to finish.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{Handler: s, ReadHeaderTimeout: 10 * time.Second, BaseContext: func(net.Listener) context.Context { return ctx }}
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	sctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	hs.Shutdown(sctx)
	hs.Close()
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func (s *Server) scale(d time.Duration) time.Duration {
	return time.Duration(float64(d) * s.cfg.TimeScale)
}

func (s *Server) mark(w http.ResponseWriter) {
	h := w.Header()
	h.Set(Header, "1")
	h.Set("Server", Owner)
}

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

// Resets returns how many times the prefix cache was reset.
func (s *Server) Resets() int64 { return s.resets.Load() }

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

type request struct {
	Model    string `json:"model"`
	Prompt   any    `json:"prompt"`
	Messages []struct {
		Role    string `json:"role"`
		Content any    `json:"content"`
	} `json:"messages"`
	Stream        bool `json:"stream"`
	StreamOptions *struct {
		IncludeUsage         bool `json:"include_usage"`
		ContinuousUsageStats bool `json:"continuous_usage_stats"`
	} `json:"stream_options"`
	MaxTokens           *int `json:"max_tokens"`
	MaxCompletionTokens *int `json:"max_completion_tokens"`
	MinTokens           int  `json:"min_tokens"`
	IgnoreEOS           bool `json:"ignore_eos"`
}

// promptText flattens a prompt or the messages' text.
func (q *request) promptText() string {
	var b strings.Builder
	add := func(v any) {
		switch t := v.(type) {
		case string:
			b.WriteString(t)
			b.WriteByte('\n')
		case []any:
			for _, e := range t {
				if m, ok := e.(map[string]any); ok {
					if s, ok := m["text"].(string); ok {
						b.WriteString(s)
						b.WriteByte('\n')
					}
				} else if s, ok := e.(string); ok {
					b.WriteString(s)
					b.WriteByte('\n')
				}
			}
		}
	}
	add(q.Prompt)
	for _, m := range q.Messages {
		add(m.Content)
	}
	return b.String()
}

// plan is what the simulator decides for one request, up front.
type plan struct {
	promptTokens int
	outputTokens int
	chunks       []int         // tokens per chunk
	stalls       []bool        // stall before chunk i
	failAt       int           // chunk index of an in-band error, or -1
	prefill      time.Duration // unscaled
	rng          *rand.Rand    // for the generated words
}

func (s *Server) plan(q *request, chat bool) *plan {
	text := q.promptText()
	h := fnv.New64a()
	io.WriteString(h, text)
	rng := rand.New(rand.NewPCG(uint64(s.cfg.Seed), h.Sum64()))
	p := &plan{promptTokens: len(strings.Fields(text)), failAt: -1, rng: rng}
	maxT := s.cfg.DefaultMaxTokens
	if q.MaxTokens != nil {
		maxT = *q.MaxTokens
	} else if q.MaxCompletionTokens != nil {
		maxT = *q.MaxCompletionTokens
	}
	maxT = max(1, maxT)
	if q.IgnoreEOS || q.MinTokens >= maxT {
		p.outputTokens = maxT
	} else {
		lo := max(1, q.MinTokens)
		p.outputTokens = lo + rng.IntN(maxT-lo+1)
	}
	for left := p.outputTokens; left > 0; {
		k := min(left, 1+rng.IntN(s.cfg.MaxChunkTokens))
		p.chunks = append(p.chunks, k)
		p.stalls = append(p.stalls, s.cfg.StallProb > 0 && rng.Float64() < s.cfg.StallProb)
		left -= k
	}
	if s.cfg.ErrorRate > 0 && rng.Float64() < s.cfg.ErrorRate {
		p.failAt = rng.IntN(len(p.chunks) + 1)
	}
	p.prefill = s.cfg.PrefillBase + time.Duration(p.promptTokens)*s.cfg.PrefillPerToken
	if s.cfg.PrefixCaching {
		key := h.Sum64()
		s.cacheMu.Lock()
		if s.cache[key] {
			p.prefill = s.cfg.PrefillBase
		}
		s.cache[key] = true
		s.cacheMu.Unlock()
	}
	if s.cold.Swap(false) {
		p.prefill += s.cfg.ColdStart
	}
	return p
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
	s.running.Add(1)
	defer func() {
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

// wait runs acquire, sending keep-alive comments meanwhile when streaming.
func (s *Server) wait(ctx context.Context, w http.ResponseWriter, stream bool, acquire func(<-chan struct{}) bool) bool {
	if !stream || s.cfg.KeepAlive <= 0 {
		return acquire(ctx.Done())
	}
	got := make(chan bool, 1)
	stop := make(chan struct{})
	go func() { got <- acquire(stop) }()
	t := time.NewTicker(s.scale(s.cfg.KeepAlive))
	defer t.Stop()
	for {
		select {
		case ok := <-got:
			return ok
		case <-t.C:
			io.WriteString(w, ": keep-alive\n\n")
			http.NewResponseController(w).Flush()
		case <-ctx.Done():
			close(stop)
			if <-got {
				<-s.slots
			}
			return false
		}
	}
}

// sleep waits d (scaled) or until ctx ends, sending keep-alives when asked.
func (s *Server) sleep(ctx context.Context, w http.ResponseWriter, d time.Duration, keepAlive bool) bool {
	return s.sleepUntil(ctx, w, time.Now().Add(s.scale(d)), keepAlive)
}

// sleepUntil waits until t or until ctx ends, sending keep-alives when
// asked.
func (s *Server) sleepUntil(ctx context.Context, w http.ResponseWriter, t0 time.Time, keepAlive bool) bool {
	d := time.Until(t0)
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	var tick <-chan time.Time
	if keepAlive && s.cfg.KeepAlive > 0 {
		tk := time.NewTicker(s.scale(s.cfg.KeepAlive))
		defer tk.Stop()
		tick = tk.C
	}
	for {
		select {
		case <-t.C:
			return true
		case <-tick:
			io.WriteString(w, ": keep-alive\n\n")
			http.NewResponseController(w).Flush()
		case <-ctx.Done():
			return false
		}
	}
}

func (s *Server) tokenTime() time.Duration {
	others := max(0, s.running.Load()-1)
	return s.cfg.DecodeBase + time.Duration(others)*s.cfg.DecodePerRunning
}

var words = strings.Fields(`the a of and to in is it that for on with as was at by an be this from or which
one all were we when your can said there use each how up out many then them these so some her would make
like him into time has look two more write go see number no way could people my than first water been call`)

func (s *Server) stream(ctx context.Context, w http.ResponseWriter, q *request, p *plan, chat bool, id string, tm *timing) {
	s.streamHeader(w)
	rc := http.NewResponseController(w)
	includeUsage := q.StreamOptions != nil && q.StreamOptions.IncludeUsage
	continuous := q.StreamOptions != nil && q.StreamOptions.ContinuousUsageStats
	obj := "text_completion"
	if chat {
		obj = "chat.completion.chunk"
	}
	buf := make([]byte, 0, 512)
	head := func() {
		buf = append(buf[:0], `data: {"id":"`...)
		buf = append(buf, id...)
		buf = append(buf, `","object":"`...)
		buf = append(buf, obj...)
		buf = append(buf, `","created":0,"model":`...)
		buf = append(buf, quote(s.cfg.Model)...)
		buf = append(buf, `,"choices":[`...)
	}
	usage := func(done int) {
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
	buf = append(buf, "}\n\n"...)
	if !send() {
		return
	}
	if includeUsage {
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
	}
}

func (s *Server) whole(ctx context.Context, w http.ResponseWriter, p *plan, chat bool, id string, tm *timing) {
	// The engine generates the tokens as it would for a stream; only the
	// client sees them at once. Its first token is timed for the metrics.
	first := p.prefill
	for range p.chunks[0] {
		first += s.tokenTime()
	}
	if !s.sleep(ctx, w, first, false) {
		return
	}
	tm.first = time.Now()
	s.metrics.firstToken(tm)
	d := time.Duration(0)
	for _, k := range p.chunks[1:] {
		for range k {
			d += s.tokenTime()
		}
	}
	if !s.sleep(ctx, w, d, false) {
		return
	}
	tm.last = time.Now()
	var text strings.Builder
	for range p.outputTokens {
		text.WriteString(words[p.rng.IntN(len(words))])
		text.WriteByte(' ')
	}
	type usage struct {
		PromptTokens     int `json:"prompt_tokens"`
		CompletionTokens int `json:"completion_tokens"`
		TotalTokens      int `json:"total_tokens"`
	}
	u := usage{p.promptTokens, p.outputTokens, p.promptTokens + p.outputTokens}
	var body any
	if chat {
		body = map[string]any{"id": id, "object": "chat.completion", "created": 0, "model": s.cfg.Model,
			"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": text.String()}, "finish_reason": "length"}},
			"usage":   u}
	} else {
		body = map[string]any{"id": id, "object": "text_completion", "created": 0, "model": s.cfg.Model,
			"choices": []any{map[string]any{"index": 0, "text": text.String(), "finish_reason": "length"}},
			"usage":   u}
	}
	w.Header().Set("Content-Type", "application/json")
	if json.NewEncoder(w).Encode(body) == nil {
		s.served.Add(1)
		tm.output = p.outputTokens
		s.metrics.finished(tm, "length")
	}
}
