package simulator

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/benchseal/benchseal/internal/errcond"
)

// Owner is the owned_by value of the simulator's model in /v1/models, and
// Header the response header it sets on every answer; clients use either to
// tell a simulated run from a real one.
const (
	Owner  = "benchseal-simulator"
	Header = "X-Benchseal-Simulator"
)

// Server is an in-process OpenAI-compatible streaming server with a
// simulated latency model. It implements http.Handler.
type Server struct {
	cfg     Config
	slots   chan struct{}
	waiting atomic.Int64
	running atomic.Int64
	seq     atomic.Int64
	// planned counts the requests planned so far: the n-th request's
	// error draw comes from a stream of the seed and n (plan).
	planned  atomic.Uint64
	served   atomic.Int64
	rejected atomic.Int64
	mux      *http.ServeMux
	metrics  *metrics
	// gpus are the simulated accelerators (nil when Config.GPUs is 0).
	gpus *gpus
	// jitter draws the StepJitter factors, under jitterMu: requests
	// decode at once.
	jitterMu sync.Mutex
	jitter   *rand.Rand
	// started is when New returned (process_start_time_seconds).
	started time.Time
	// cold is set until the first request's prefill has been planned.
	cold atomic.Bool
	// cache holds the prompts seen since the start or the last reset
	// (PrefixCaching), by hash.
	cacheMu sync.Mutex
	cache   map[uint64]bool
	resets  atomic.Int64
	// lcache is the llama.cpp flavor's slot cache, vocab its tokenizer's
	// ids (FlavorLlamaCpp only).
	lcache  *slotCache
	vocabMu sync.Mutex
	vocab   map[string]int
}

// fillDefaults sets the fields of cfg left zero that have a default.
func fillDefaults(cfg *Config) {
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
}

// checkShares checks the config's probabilities and shares: a stall
// probability and an error rate in [0, 1], a step jitter in [0, 1).
func checkShares(cfg Config) []error {
	var errs []error
	if !(cfg.StallProb >= 0 && cfg.StallProb <= 1) || !(cfg.ErrorRate >= 0 && cfg.ErrorRate <= 1) {
		errs = append(errs, errors.New("stall probability and error rate must be in 0..1"))
	}
	if !(cfg.StepJitter >= 0 && cfg.StepJitter < 1) {
		errs = append(errs, errors.New("step jitter must be in [0, 1)"))
	}
	return errs
}

// New checks cfg, fills defaults and returns a server.
func New(cfg Config) (*Server, error) {
	fillDefaults(&cfg)
	var errs []error
	if err := CheckTimeScale(cfg.TimeScale); err != nil {
		errs = append(errs, err)
	}
	if cfg.Flavor == "" {
		cfg.Flavor = FlavorVLLM
	}
	if cfg.Flavor != FlavorVLLM && cfg.Flavor != FlavorLlamaCpp {
		errs = append(errs, fmt.Errorf("flavor %q is none of %s, %s", cfg.Flavor, FlavorVLLM, FlavorLlamaCpp))
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
	errs = append(errs, checkShares(cfg)...)
	if cfg.GPUs < 0 || cfg.GPUs > MaxGPUs {
		errs = append(errs, fmt.Errorf("gpus %d out of range 0..%d", cfg.GPUs, MaxGPUs))
	}
	if cfg.DefaultMaxTokens < 1 || cfg.ReasoningTokens < 0 {
		errs = append(errs, errors.New("default max tokens must be ≥ 1 and reasoning tokens ≥ 0"))
	}
	if len(errs) > 0 {
		return nil, errcond.Errorf(ErrConfig, "invalid simulator config: %w", errors.Join(errs...))
	}
	s := &Server{cfg: cfg, slots: make(chan struct{}, cfg.MaxRunning), mux: http.NewServeMux(), metrics: newMetrics(),
		started: time.Now(), cache: map[uint64]bool{}, jitter: rand.New(rand.NewPCG(uint64(cfg.JitterSeed), jitterStream))}
	s.cold.Store(true)
	s.mux.HandleFunc("GET /metrics", s.serveMetrics)
	if cfg.GPUs > 0 {
		s.gpus = newGPUs(cfg.GPUs, s.started)
		s.mux.HandleFunc("GET "+GPUMetricsPath, s.serveGPUMetrics)
	}
	if cfg.Flavor == FlavorLlamaCpp {
		s.lcache, s.vocab = newSlotCache(cfg.MaxRunning), map[string]int{}
		s.lcache.noHost = cfg.NoHostCache
		s.mux.HandleFunc("GET /props", s.props)
		s.mux.HandleFunc("POST /slots/{id}", s.slotAction)
		if !cfg.NoTokenize {
			s.mux.HandleFunc("POST /tokenize", s.tokenize)
			s.mux.HandleFunc("POST /apply-template", s.applyTemplate)
		}
	} else if cfg.CacheResetPath != "none" {
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
	if s.cfg.Flavor == FlavorLlamaCpp {
		h.Set("Server", LlamaCppServerHeader)
		h.Set("Keep-Alive", "timeout=5, max=100")
		return
	}
	h.Set("Server", Owner)
}

// Resets returns how many times the prefix cache was reset.
func (s *Server) Resets() int64 { return s.resets.Load() }
