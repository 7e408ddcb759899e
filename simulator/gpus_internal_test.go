package simulator

import (
	"testing"
	"time"
)

func TestSimulatedPowerRisesWithTheRunningRequestsAndIsIntegrated(t *testing.T) {
	t0 := time.Unix(0, 0)
	g := newGPUs(2, t0)
	if g.powerW() != GPUIdleW {
		t.Fatalf("idle power %v", g.powerW())
	}
	g.advance(t0.Add(time.Second)) // 1 s idle
	g.running = 4                  // 2 per device
	g.advance(t0.Add(3 * time.Second))
	if want := (GPUIdleW + (GPUIdleW+2*GPUPerRequestW)*2) * 1e3; g.mJ != want {
		t.Errorf("energy %v mJ, want %v", g.mJ, want)
	}
	g.running = 1000
	if g.powerW() != GPUMaxW {
		t.Errorf("power %v, want the clamp %v", g.powerW(), GPUMaxW)
	}
}
