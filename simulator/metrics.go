// The simulator's Prometheus /metrics, in vLLM's names and bucket layout.

package simulator

import (
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/benchseal/benchseal/internal/digits"
)

// Bucket edges (seconds) of vLLM's histograms (vllm/v1/metrics/buckets.py
// defaults): request-phase latencies, time to first token, and per-token
// times.
var (
	requestLatencyBuckets = []float64{0.3, 0.5, 0.8, 1, 1.5, 2, 2.5, 5, 10, 15, 20, 30, 40, 50, 60, 120, 240, 480, 960, 1920, 7680}
	ttftBuckets           = []float64{0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80, 160, 640, 2560}
	tokenTimeBuckets      = []float64{0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1, 2.5, 5, 7.5, 10, 20, 40, 80}
)

type histogram struct {
	name, help string
	bounds     []float64
	counts     []uint64 // per bucket, not cumulative; the last is +Inf
	sum        float64
	n          uint64
}

func newHistogram(name, help string, bounds []float64) *histogram {
	return &histogram{name: name, help: help, bounds: bounds, counts: make([]uint64, len(bounds)+1)}
}

func (h *histogram) observe(v float64) {
	i := 0
	for i < len(h.bounds) && v > h.bounds[i] {
		i++
	}
	h.counts[i]++
	h.sum += v
	h.n++
}

// metrics holds what the simulator reports about itself, measured on
// its own clock as vLLM measures: from the request's arrival in the
// handler (after the body is read) to the first content token written,
// the finish, and the phases between.
type metrics struct {
	mu                             sync.Mutex
	ttft, e2e, queue, prefill, dec *histogram
	tpot, itl                      *histogram
	promptTokens, generationTokens uint64
	success                        map[string]uint64 // by finished_reason
	llama                          llamaMetrics
}

func newMetrics() *metrics {
	return &metrics{
		ttft:    newHistogram("vllm:time_to_first_token_seconds", "Histogram of time to first token in seconds.", ttftBuckets),
		e2e:     newHistogram("vllm:e2e_request_latency_seconds", "Histogram of e2e request latency in seconds.", requestLatencyBuckets),
		queue:   newHistogram("vllm:request_queue_time_seconds", "Histogram of time spent in WAITING phase for request.", requestLatencyBuckets),
		prefill: newHistogram("vllm:request_prefill_time_seconds", "Histogram of time spent in PREFILL phase for request.", requestLatencyBuckets),
		dec:     newHistogram("vllm:request_decode_time_seconds", "Histogram of time spent in DECODE phase for request.", requestLatencyBuckets),
		tpot:    newHistogram("vllm:request_time_per_output_token_seconds", "Histogram of time_per_output_token_seconds per request.", tokenTimeBuckets),
		itl:     newHistogram("vllm:inter_token_latency_seconds", "Histogram of inter-token latency in seconds.", tokenTimeBuckets),
		success: map[string]uint64{"stop": 0, "length": 0, "abort": 0},
	}
}

// timing is one request's server-side times.
type timing struct {
	arrival, scheduled, first, last time.Time
	gaps                            []time.Duration // between content chunks
	prompt, output                  int
}

func (m *metrics) finished(t *timing, reason string) {
	sec := func(d time.Duration) float64 { return d.Seconds() }
	m.mu.Lock()
	defer m.mu.Unlock()
	m.queue.observe(sec(t.scheduled.Sub(t.arrival)))
	m.prefill.observe(sec(t.first.Sub(t.scheduled)))
	m.dec.observe(sec(t.last.Sub(t.first)))
	m.e2e.observe(sec(t.last.Sub(t.arrival)))
	if t.output > 1 {
		m.tpot.observe(sec(t.last.Sub(t.first)) / float64(t.output-1))
	}
	for _, g := range t.gaps {
		m.itl.observe(sec(g))
	}
	m.promptTokens += uint64(t.prompt)
	m.generationTokens += uint64(t.output)
	m.success[reason]++
}

func (m *metrics) firstToken(t *timing) {
	m.mu.Lock()
	m.ttft.observe(t.first.Sub(t.arrival).Seconds())
	m.mu.Unlock()
}

func fmtFloat(v float64) string { return digits.Shortest(v) }

func (s *Server) writeMetrics(w io.Writer) {
	m := s.metrics
	lbl := `model_name=` + quote(s.cfg.Model)
	fmt.Fprintf(w, "# HELP vllm:num_requests_running Number of requests in model execution batches.\n# TYPE vllm:num_requests_running gauge\nvllm:num_requests_running{%s} %d\n", lbl, s.running.Load())
	fmt.Fprintf(w, "# HELP vllm:num_requests_waiting Number of requests waiting to be processed.\n# TYPE vllm:num_requests_waiting gauge\nvllm:num_requests_waiting{%s} %d\n", lbl, s.waiting.Load())
	fmt.Fprintf(w, "# HELP vllm:kv_cache_usage_perc KV-cache usage. 1 means 100 percent usage.\n# TYPE vllm:kv_cache_usage_perc gauge\nvllm:kv_cache_usage_perc{%s} %s\n", lbl, fmtFloat(float64(s.running.Load())/float64(s.cfg.MaxRunning)))
	fmt.Fprintf(w, "# HELP process_start_time_seconds Start time of the process since unix epoch in seconds.\n# TYPE process_start_time_seconds gauge\nprocess_start_time_seconds %s\n",
		fmtFloat(float64(s.started.UnixNano())/1e9))
	m.mu.Lock()
	defer m.mu.Unlock()
	fmt.Fprintf(w, "# HELP vllm:num_preemptions_total Cumulative number of preemption from the engine.\n# TYPE vllm:num_preemptions_total counter\nvllm:num_preemptions_total{%s} 0\n", lbl)
	fmt.Fprintf(w, "# HELP vllm:prompt_tokens_total Number of prefill tokens processed.\n# TYPE vllm:prompt_tokens_total counter\nvllm:prompt_tokens_total{%s} %d\n", lbl, m.promptTokens)
	fmt.Fprintf(w, "# HELP vllm:generation_tokens_total Number of generation tokens processed.\n# TYPE vllm:generation_tokens_total counter\nvllm:generation_tokens_total{%s} %d\n", lbl, m.generationTokens)
	fmt.Fprint(w, "# HELP vllm:request_success_total Count of successfully processed requests.\n# TYPE vllm:request_success_total counter\n")
	for _, r := range []string{"abort", "length", "stop"} {
		fmt.Fprintf(w, "vllm:request_success_total{finished_reason=%q,%s} %d\n", r, lbl, m.success[r])
	}
	for _, h := range []*histogram{m.ttft, m.itl, m.tpot, m.e2e, m.queue, m.prefill, m.dec} {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s histogram\n", h.name, h.help, h.name)
		var cum uint64
		for i, b := range h.bounds {
			cum += h.counts[i]
			fmt.Fprintf(w, "%s_bucket{%s,le=%q} %d\n", h.name, lbl, fmtFloat(b), cum)
		}
		fmt.Fprintf(w, "%s_bucket{%s,le=\"+Inf\"} %d\n%s_sum{%s} %s\n%s_count{%s} %d\n", h.name, lbl, h.n, h.name, lbl, fmtFloat(h.sum), h.name, lbl, h.n)
	}
}

func (s *Server) serveMetrics(w http.ResponseWriter, r *http.Request) {
	s.mark(w)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	if s.cfg.Flavor == FlavorLlamaCpp {
		s.writeLlamaMetrics(w)
		return
	}
	s.writeMetrics(w)
}
