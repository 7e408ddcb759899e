package capture_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/simulator"
)

// hideSimulator serves the simulator without its identifying header, as a
// server in front of it could.
type hideSimulator struct{ h http.Handler }

func (s hideSimulator) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.h.ServeHTTP(&headerless{ResponseWriter: w}, r)
}

type headerless struct {
	http.ResponseWriter
	wrote bool
}

func (w *headerless) WriteHeader(code int) {
	if !w.wrote {
		w.wrote = true
		w.ResponseWriter.Header().Del(capture.SimulatorHeader)
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *headerless) Write(b []byte) (int, error) {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	return w.ResponseWriter.Write(b)
}

func (w *headerless) Flush() {
	if !w.wrote {
		w.WriteHeader(http.StatusOK)
	}
	w.ResponseWriter.(http.Flusher).Flush()
}

// TestSimulatorRunIsSyntheticWhateverTheFlags: a run against benchseal's
// simulator is synthetic whether or not the server was probed, whether
// the simulator is known from its header on any response or declared by
// the caller, and whatever the publisher's assignments state
// (--no-probe and --set evidence=self-run made a
// simulated run self-run).
func TestSimulatorRunIsSyntheticWhateverTheFlags(t *testing.T) {
	cfg := simulator.DefaultConfig()
	cfg.Seed = 7
	cfg.TimeScale = 0.01
	sim, err := simulator.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name                    string
		hidden                  bool // the header is stripped
		probe, preflight, known bool
		sets                    []string
	}{
		{"no probe", false, false, true, false, nil},
		{"no probe, evidence stated", false, false, true, false, []string{"evidence=self-run"}},
		{"probe, evidence stated", false, true, true, false, []string{"evidence=independent"}},
		{"header on run responses only", false, false, false, false, []string{"evidence=self-run"}},
		{"declared, header hidden", true, false, true, true, []string{"evidence=self-run"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var h http.Handler = sim
			if c.hidden {
				h = hideSimulator{sim}
			}
			ts := httptest.NewServer(h)
			defer ts.Close()
			o := baseOptions(t, ts.URL)
			o.Probe = c.probe
			o.SkipPreflight = !c.preflight
			o.Simulator = c.known
			o.Sets = c.sets
			if !c.known {
				// A server spotted by its header may stand for the hardware
				// it is stated to; capture --simulate's may not
				// (CheckSimulatedHardware).
				o.Sets = append([]string{"hardware.accelerator=NVIDIA H200", "hardware.accelerator_count=8"}, c.sets...)
			}
			res, err := capture.Run(context.Background(), o)
			if err != nil {
				t.Fatal(err)
			}
			rf := readRun(t, o.OutDir)
			for _, m := range []*schema.Manifest{res.Manifest, rf.m} {
				if m.Evidence != schema.EvidenceSynthetic {
					t.Errorf("evidence %q, want %q", m.Evidence, schema.EvidenceSynthetic)
				}
				if m.Engine.Name != capture.SimulatorOwner || m.Notes["simulator"] == "" {
					t.Errorf("engine %q, notes %v", m.Engine.Name, m.Notes)
				}
				if want := map[bool]string{false: "NVIDIA H200", true: schema.HardwareSimulated}[c.known]; m.Hardware.Accelerator != want {
					t.Errorf("hardware %q: the publisher's assignment is kept", m.Hardware.Accelerator)
				}
			}
		})
	}
}
