package simulator

import (
	"testing"
	"time"
)

// TestStepJitter: StepJitter 0 leaves every token's time the latency
// model's; above 0 each lies within [1 − j, 1 + j] of it and varies, and
// two jitter seeds draw different sequences; New refuses a jitter
// outside [0, 1).
func TestStepJitter(t *testing.T) {
	draw := func(j float64, seed int64) []time.Duration {
		cfg := DefaultConfig()
		cfg.StepJitter, cfg.JitterSeed = j, seed
		s, err := New(cfg)
		if err != nil {
			t.Fatal(err)
		}
		out := make([]time.Duration, 64)
		for i := range out {
			out[i] = s.tokenTime()
		}
		return out
	}
	base := DefaultConfig().DecodeBase
	for _, d := range draw(0, 1) {
		if d != base {
			t.Fatalf("jitter 0: %v, want %v", d, base)
		}
	}
	a, b := draw(0.2, 1), draw(0.2, 2)
	lo, hi := time.Duration(float64(base)*0.8), time.Duration(float64(base)*1.2)
	distinct, differ := map[time.Duration]bool{}, 0
	for i := range a {
		if a[i] < lo || a[i] > hi {
			t.Errorf("token %d: %v outside [%v, %v]", i, a[i], lo, hi)
		}
		distinct[a[i]] = true
		if a[i] != b[i] {
			differ++
		}
	}
	if len(distinct) < 32 || differ < 32 {
		t.Errorf("jitter 0.2: %d distinct times of 64, %d differ between seeds", len(distinct), differ)
	}
	for _, j := range []float64{-0.1, 1, 2} {
		cfg := DefaultConfig()
		cfg.StepJitter = j
		if _, err := New(cfg); err == nil {
			t.Errorf("StepJitter %v accepted", j)
		}
	}
}
