// The simulator's accelerators: a DCGM-exporter-style /gpu-metrics whose
// power rises with the load being served and whose energy counter
// integrates that power.

package simulator

import (
	"fmt"
	"io"
	"math"
	"net/http"
	"sync"
	"time"

	"github.com/benchseal/benchseal/internal/digits"
)

// GPUMetricsPath is where a simulator with Config.GPUs > 0 serves its
// accelerators' metrics, in the DCGM exporter's names, on its own port
// (one server, one address: capture --simulate --sim-gpus scrapes it
// there).
const GPUMetricsPath = "/gpu-metrics"

// The simulated accelerators' power model: each draws GPUIdleW with
// nothing running, GPUPerRequestW more for each running request's share
// on it (the running requests spread evenly over the devices), at most
// GPUMaxW (schema.SimGPUIdleW and the rest, which verify holds a
// simulator run's readings to). Utilization is GPUUtilPerRequest percent per running request
// on a device, at most 100; memory in use is GPUBaseMiB plus
// GPUPerRequestMiB per request on it. The numbers are a plausible shape,
// not any real accelerator.
const (
	GPUIdleW          = 90.0
	GPUPerRequestW    = 30.0
	GPUMaxW           = 700.0
	GPUUtilPerRequest = 12.5
	GPUBaseMiB        = 40960.0
	GPUPerRequestMiB  = 64.0
	// GPUModelName and GPUHostname label every series, so a scrape of
	// them reads as simulated (modelName is the simulator's model name,
	// which validate's synthetic-evidence check looks for).
	GPUModelName = "benchseal-sim" // schema.SimulatorModel
	GPUHostname  = "benchseal-simulator"
)

// gpus integrates the power of n simulated devices over real time.
type gpus struct {
	mu      sync.Mutex
	n       int
	last    time.Time
	running int64
	// mJ is each device's energy since the simulator started.
	mJ float64
}

func newGPUs(n int, now time.Time) *gpus { return &gpus{n: n, last: now} }

// perDevice is each device's share of the running requests.
func (g *gpus) perDevice() float64 { return float64(g.running) / float64(g.n) }

func (g *gpus) powerW() float64 {
	return math.Min(GPUMaxW, GPUIdleW+float64(GPUPerRequestW*g.perDevice()))
}

// advance adds the energy since the last change at the power of the
// running requests then; g.mu held.
func (g *gpus) advance(now time.Time) {
	if dt := now.Sub(g.last); dt > 0 {
		g.mJ += float64(g.powerW() * dt.Seconds() * 1e3)
		g.last = now
	}
}

// change records that the running requests changed by delta.
func (g *gpus) change(delta int64) {
	if g == nil {
		return
	}
	g.mu.Lock()
	g.advance(time.Now())
	g.running += delta
	g.mu.Unlock()
}

// write prints the devices' metrics in the DCGM exporter's names, units
// and labels (energy in mJ, an integer counter; power in W; FB_USED in
// MiB; SM clock in MHz).
func (g *gpus) write(w io.Writer) {
	g.mu.Lock()
	g.advance(time.Now())
	mJ, p, per := math.Floor(g.mJ), g.powerW(), g.perDevice()
	g.mu.Unlock()
	util := math.Min(100, GPUUtilPerRequest*per)
	mem := GPUBaseMiB + float64(GPUPerRequestMiB*per)
	clock := 345.0
	if per > 0 {
		clock = 1980
	}
	for _, f := range []struct {
		name, kind, help string
		v                float64
	}{
		{"DCGM_FI_DEV_SM_CLOCK", "gauge", "SM clock frequency (in MHz).", clock},
		{"DCGM_FI_DEV_POWER_USAGE", "gauge", "Power draw (in W).", p},
		{"DCGM_FI_DEV_TOTAL_ENERGY_CONSUMPTION", "counter", "Total energy consumption since boot (in mJ).", mJ},
		{"DCGM_FI_DEV_GPU_UTIL", "gauge", "GPU utilization (in %).", util},
		{"DCGM_FI_DEV_FB_USED", "gauge", "Framebuffer memory used (in MiB).", mem},
	} {
		fmt.Fprintf(w, "# HELP %s %s\n# TYPE %s %s\n", f.name, f.help, f.name, f.kind)
		for i := range g.n {
			fmt.Fprintf(w, "%s{gpu=\"%d\",UUID=\"GPU-benchseal-sim-%04d\",device=\"nvidia%d\",modelName=%q,Hostname=%q} %s\n",
				f.name, i, i, i, GPUModelName, GPUHostname, digits.Decimal(f.v))
		}
	}
}

func (s *Server) serveGPUMetrics(w http.ResponseWriter, _ *http.Request) {
	s.mark(w)
	w.Header().Set("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
	s.gpus.write(w)
}

// MaxGPUs bounds Config.GPUs.
const MaxGPUs = 64
