package simulator_test

import (
	"testing"

	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/simulator"
)

// The simulator identifies itself by the names schema checks a run for
// (schema.SimulatorIdentity, artifact.CheckServerEvidence): they stay in
// step.
func TestSelfIdentificationMatchesWhatValidateChecks(t *testing.T) {
	if simulator.Owner != schema.SimulatorOwner || simulator.Header != schema.SimulatorHeader || simulator.DefaultConfig().Model != schema.SimulatorModel {
		t.Errorf("simulator %q %q %q, schema %q %q %q", simulator.Owner, simulator.Header, simulator.DefaultConfig().Model,
			schema.SimulatorOwner, schema.SimulatorHeader, schema.SimulatorModel)
	}
}

// The simulated accelerators' power model is the one artifact holds a
// simulator run's readings to (schema.SimGPUIdleW and the rest): they stay
// in step.
func TestGPUPowerModelMatchesWhatVerifyChecks(t *testing.T) {
	if simulator.GPUIdleW != schema.SimGPUIdleW || simulator.GPUPerRequestW != schema.SimGPUPerRequestW || simulator.GPUMaxW != schema.SimGPUMaxW {
		t.Errorf("simulator %v %v %v W, schema %v %v %v W", simulator.GPUIdleW, simulator.GPUPerRequestW, simulator.GPUMaxW,
			schema.SimGPUIdleW, schema.SimGPUPerRequestW, schema.SimGPUMaxW)
	}
}
