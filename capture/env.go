package capture

import (
	"bufio"
	"bytes"
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"time"

	"github.com/benchseal/benchseal/schema"
)

// HostInfo describes the machine whose root file system is fsys (use
// os.DirFS("/") for the real one; tests pass an fstest.MapFS). It reads
// proc/cpuinfo, proc/meminfo, proc/sys/kernel/osrelease and
// etc/os-release; missing files leave fields empty. The host name is not
// recorded.
func HostInfo(fsys fs.FS) *schema.Host {
	h := &schema.Host{}
	if b, err := fs.ReadFile(fsys, "proc/cpuinfo"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			k, v, ok := strings.Cut(sc.Text(), ":")
			if !ok {
				continue
			}
			switch strings.TrimSpace(k) {
			case "processor":
				h.Cores++
			case "model name":
				if h.CPU == "" {
					h.CPU = strings.TrimSpace(v)
				}
			}
		}
	}
	if b, err := fs.ReadFile(fsys, "proc/meminfo"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) >= 2 && f[0] == "MemTotal:" {
				if kb, err := strconv.ParseInt(f[1], 10, 64); err == nil {
					h.MemoryBytes = kb * 1024
				}
			}
		}
	}
	if b, err := fs.ReadFile(fsys, "proc/sys/kernel/osrelease"); err == nil {
		h.Kernel = "Linux " + strings.TrimSpace(string(b))
	}
	if b, err := fs.ReadFile(fsys, "etc/os-release"); err == nil {
		sc := bufio.NewScanner(bytes.NewReader(b))
		for sc.Scan() {
			if v, ok := strings.CutPrefix(sc.Text(), "PRETTY_NAME="); ok {
				h.OS = strings.Trim(v, `"'`)
			}
		}
	}
	return h
}

// CommandRunner runs an external program and returns its standard output.
// The cli passes one built on os/exec; tests pass a fake.
type CommandRunner func(ctx context.Context, name string, args ...string) ([]byte, error)

// ExecCommand is the CommandRunner that runs the program, for at most 20
// seconds, and returns its standard output.
func ExecCommand(ctx context.Context, name string, args ...string) ([]byte, error) {
	ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	return exec.CommandContext(ctx, name, args...).Output()
}

// describeMachine records the machine capture runs on in m, as
// Options.HostFS and Options.GPUQuery ask.
func (r *runner) describeMachine(ctx context.Context, m *schema.Manifest) error {
	o := r.o
	if o.HostFS == nil {
		return nil
	}
	host := HostInfo(o.HostFS)
	m.Client.Host = host
	if m.Client.Location == "same-host" {
		m.Hardware.Host = host
	}
	if o.GPUQuery == "" {
		return nil
	}
	m.Hardware.Host = host
	run := o.RunCommand
	if run == nil {
		run = ExecCommand
	}
	return QueryGPU(ctx, o.GPUQuery, run, &m.Hardware)
}

// GPU query tools understood by QueryGPU.
const (
	GPUQueryNvidia = "nvidia-smi"
	GPUQueryAMD    = "amd-smi"
)

// QueryGPU asks nvidia-smi or amd-smi about the accelerators of the
// machine it runs on and fills hw: the raw answer goes to
// hw.Details[tool]; for nvidia-smi the accelerator model, count, memory
// and driver are parsed from its CSV.
func QueryGPU(ctx context.Context, tool string, run CommandRunner, hw *schema.Hardware) error {
	var args []string
	switch tool {
	case GPUQueryNvidia:
		args = []string{"--query-gpu=name,memory.total,driver_version,pci.bus_id", "--format=csv,noheader"}
	case GPUQueryAMD:
		args = []string{"static", "--asic", "--vram", "--driver", "--json"}
	default:
		return fmt.Errorf("gpu query %q: want %s or %s", tool, GPUQueryNvidia, GPUQueryAMD)
	}
	out, err := run(ctx, tool, args...)
	if err != nil {
		return fmt.Errorf("query gpu with %s: %w", tool, err)
	}
	if hw.Details == nil {
		hw.Details = map[string]string{}
	}
	hw.Details[tool+" "+strings.Join(args, " ")] = string(out)
	if tool == GPUQueryNvidia {
		rows, err := csv.NewReader(bytes.NewReader(out)).ReadAll()
		if err != nil {
			return fmt.Errorf("parse %s output: %w", tool, err)
		}
		for _, r := range rows {
			if len(r) < 3 {
				continue
			}
			n, _ := hw.Accelerators()
			hw.AcceleratorCount = schema.Count(n + 1)
			if hw.Accelerator == "" {
				hw.Accelerator = strings.TrimSpace(r[0])
				hw.AcceleratorMemory = strings.TrimSpace(r[1])
				hw.Driver = "NVIDIA " + strings.TrimSpace(r[2])
			}
		}
	}
	return nil
}

// ServerInfo is what the server says about itself.
type ServerInfo struct {
	// Answers maps an endpoint path (/v1/models, /version, /props) to its
	// body, and "Server" to the Server header of the first answer.
	Answers map[string]string
	// Simulator is true when the server identifies as benchseal's
	// simulator (owned_by or the X-Benchseal-Simulator header).
	Simulator bool
	// EngineName and EngineVersion are set when the server states them:
	// vLLM and SGLang by owned_by and /version; llama.cpp (EngineLlamaCpp)
	// by owned_by "llamacpp", its Server header "llama.cpp" or /props'
	// build_info, which is its version.
	EngineName, EngineVersion string
	// Speaks is the engine whose own endpoints the server offers
	// (EngineLlamaCpp), also when it is benchseal's simulator acting as
	// one; "" when not recognised.
	Speaks string
	// Slots is llama.cpp's /props total_slots (its parallel requests,
	// each with its own prompt cache), 0 when not stated.
	Slots int
}

// EngineLlamaCpp is the engine.name capture states for llama.cpp's
// server (the owned_by it sends, and servermetrics' name for it).
const EngineLlamaCpp = "llamacpp"

// SimulatorOwner is the owned_by value of the simulator's models, and
// SimulatorHeader the response header it sets.
const (
	SimulatorOwner  = schema.SimulatorOwner
	SimulatorHeader = schema.SimulatorHeader
)

// ProbeServer asks the server's /v1/models, /version and /props endpoints
// (each answer at most 64 KiB, each call bounded by a short timeout).
// Endpoints that fail are left out; an unreachable server is not an error
// here.
func ProbeServer(ctx context.Context, client *http.Client, base, apiKey string) *ServerInfo {
	si := &ServerInfo{Answers: map[string]string{}}
	for _, path := range []string{"/v1/models", "/version", "/props"} {
		body, hdr, ok := get(ctx, client, base+path, apiKey)
		if !ok {
			continue
		}
		si.Answers[path] = body
		if hdr.Get(SimulatorHeader) != "" {
			si.Simulator = true
		}
		if sv := hdr.Get("Server"); sv != "" && si.Answers["Server"] == "" {
			si.Answers["Server"] = sv
			if sv == "llama.cpp" && si.EngineName == "" {
				si.EngineName = EngineLlamaCpp
			}
			if sv == "llama.cpp" {
				si.Speaks = EngineLlamaCpp
			}
		}
		si.read(path, body)
	}
	if si.Simulator {
		si.EngineName = SimulatorOwner
	}
	return si
}

// read takes what one endpoint's answer says about the engine.
func (si *ServerInfo) read(path, body string) {
	switch path {
	case "/v1/models":
		var m struct {
			Data []struct {
				OwnedBy string `json:"owned_by"`
			} `json:"data"`
		}
		if json.Unmarshal([]byte(body), &m) == nil {
			for _, d := range m.Data {
				if d.OwnedBy == SimulatorOwner {
					si.Simulator = true
				}
				switch d.OwnedBy {
				case "vllm", "sglang", EngineLlamaCpp:
					si.EngineName, si.Speaks = d.OwnedBy, d.OwnedBy
				}
			}
		}
	case "/version":
		var v struct {
			Version string `json:"version"`
			Name    string `json:"name"`
		}
		if json.Unmarshal([]byte(body), &v) == nil {
			si.EngineVersion = v.Version
			if v.Name != "" {
				si.EngineName = v.Name
			}
		}
	case "/props":
		var p struct {
			BuildInfo  string `json:"build_info"`
			TotalSlots int    `json:"total_slots"`
		}
		if json.Unmarshal([]byte(body), &p) == nil && p.BuildInfo != "" {
			if si.EngineName == "" {
				si.EngineName = EngineLlamaCpp
			}
			si.Speaks = EngineLlamaCpp
			if si.EngineName == EngineLlamaCpp && si.EngineVersion == "" {
				si.EngineVersion = p.BuildInfo
			}
			if p.TotalSlots > 0 && p.TotalSlots <= maxSlots {
				si.Slots = p.TotalSlots
			}
		}
	}
}

// maxSlots bounds the slots capture erases one by one.
const maxSlots = 4096

func get(ctx context.Context, client *http.Client, url, apiKey string) (string, http.Header, bool) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return "", nil, false
	}
	if apiKey != "" {
		req.Header.Set("Authorization", "Bearer "+apiKey)
	}
	resp, err := client.Do(req)
	if err != nil {
		return "", nil, false
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	if err != nil || resp.StatusCode != http.StatusOK {
		return "", nil, false
	}
	return string(bytes.TrimSpace(b)), resp.Header, true
}

// WaitReady polls GET /v1/models until it answers 200 or ctx ends.
func WaitReady(ctx context.Context, client *http.Client, base, apiKey string) error {
	for {
		if _, _, ok := get(ctx, client, base+"/v1/models", apiKey); ok {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for server %s: %w", base, context.Cause(ctx))
		case <-time.After(100 * time.Millisecond):
		}
	}
}
