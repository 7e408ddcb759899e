package simulator

import (
	"context"
	"io"
	"net/http"
	"time"
)

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
	d := s.cfg.DecodeBase + time.Duration(others)*s.cfg.DecodePerRunning
	if j := s.cfg.StepJitter; j > 0 {
		s.jitterMu.Lock()
		u := s.jitter.Float64()
		s.jitterMu.Unlock()
		// Products made explicit: no fused multiply-add, the same times on every architecture.
		v := float64(2*u) - 1
		d = time.Duration(float64(d) * (1 + float64(j*v)))
	}
	return d
}

// jitterStream is the PCG stream of the StepJitter draws, apart from the
// per-request and error streams of plan.go.
const jitterStream = 0x6a6974746572
