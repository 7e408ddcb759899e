package aiperf

import (
	"encoding/json"
	"strings"

	"github.com/benchseal/benchseal/importer/ingest"
	"github.com/benchseal/benchseal/schema"
)

// Phase is one entry of input_config.phases (schema 1.3): a warmup or
// profiling phase with its load.
type Phase struct {
	Name               string      `json:"name"`
	Type               string      `json:"type"`
	ExcludeFromResults bool        `json:"exclude_from_results"`
	Requests           json.Number `json:"requests"`
	Concurrency        json.Number `json:"concurrency"`
	// Duration (s) bounds a time-based phase; GracePeriod (s) is how long
	// AIPerf then waits for requests in flight.
	Duration    json.Number     `json:"duration"`
	GracePeriod json.Number     `json:"grace_period"`
	Raw         json.RawMessage `json:"-"`
}

// UnmarshalJSON keeps the phase's bytes for the manifest notes.
func (p *Phase) UnmarshalJSON(b []byte) error {
	type plain Phase
	var v plain
	if err := json.Unmarshal(b, &v); err != nil {
		return err
	}
	*p = Phase(v)
	p.Raw = append(json.RawMessage(nil), b...)
	return nil
}

func (p *Phase) warmup() bool {
	return p.ExcludeFromResults || strings.EqualFold(p.Name, "warmup")
}

// loadConfig is the offered load a summary states, from either layout:
// input_config.loadgen (schema ≤ 1.0) or input_config.phases (1.3).
type loadConfig struct {
	concurrency int64
	rate        float64
	arrival     string
	requests    int64
	warmup      int64
	// durationNS bounds a time-based profiling phase (0: count-based);
	// grace is its grace period as AIPerf wrote it (s).
	durationNS int64
	grace      json.Number
	// mode is the loadgen request_rate_mode; phaseType the profiling
	// phase's type (schema 1.3).
	mode, phaseType string
	// phase is the profiling phase's JSON when its type is not one this
	// importer understands (kept in the notes).
	phase json.RawMessage
}

func posInt(n json.Number) int64 {
	if v, err := ingest.Int(n); err == nil && v > 0 {
		return v
	}
	return 0
}

func (s *Summary) load() loadConfig {
	var ld loadConfig
	lg := s.InputConfig.Loadgen
	if lg.RequestRate != "" {
		if v, err := ingest.ToFloat(lg.RequestRate, 1); err == nil && v > 0 {
			ld.rate = v
			switch strings.ToLower(lg.ArrivalPattern + lg.RequestRateMode) {
			case "poisson":
				ld.arrival = schema.ArrivalPoisson
			case "constant":
				ld.arrival = schema.ArrivalConstant
			case "gamma":
				ld.arrival = schema.ArrivalGamma
			}
		}
	}
	ld.concurrency = posInt(lg.Concurrency)
	ld.requests = posInt(lg.RequestCount)
	ld.warmup = posInt(lg.WarmupRequests)
	ld.mode = lg.RequestRateMode
	ld.durationNS, ld.grace = seconds(lg.BenchmarkDuration), lg.GracePeriod
	for i := range s.InputConfig.Phases {
		ph := &s.InputConfig.Phases[i]
		if ph.warmup() {
			ld.warmup += posInt(ph.Requests)
			continue
		}
		ld.requests += posInt(ph.Requests)
		ld.phaseType = ph.Type
		if d := seconds(ph.Duration); d > 0 {
			ld.durationNS, ld.grace = d, ph.GracePeriod
		}
		if strings.EqualFold(ph.Type, "concurrency") {
			ld.concurrency = max(ld.concurrency, posInt(ph.Concurrency))
		} else {
			// 0.10.0 exports seen so far hold concurrency phases only;
			// any other kind is kept verbatim rather than guessed at.
			ld.phase = ph.Raw
		}
	}
	return ld
}

// seconds returns a positive number of seconds in ns (0 otherwise).
func seconds(n json.Number) int64 {
	if n == "" {
		return 0
	}
	v, err := ingest.NonNegNS(n, ingest.Second, "duration")
	if err != nil || v <= 0 {
		return 0
	}
	return v
}

var endpoints = map[string]string{
	"chat":        "/v1/chat/completions",
	"completions": "/v1/completions",
	"embeddings":  "/v1/embeddings",
}

// fillManifest fills m and its one load point pt from the summary's
// input configuration, run info, load phases and telemetry, in that order.
func fillManifest(m *schema.Manifest, s *Summary, pt *schema.Point) {
	fillModel(m, s)
	fillWorkload(m, s, pt)
	fillLoad(m, s, pt)
	fillHardware(m, s)
	fillNotes(m, s)
}

// fillModel takes the model, tokenizer, endpoint and streaming mode from
// the input configuration.
func fillModel(m *schema.Manifest, s *Summary) {
	ic := s.InputConfig
	if len(ic.Endpoint.ModelNames) > 0 {
		m.Model.Name = ic.Endpoint.ModelNames[0]
	} else if ic.Models != nil && len(ic.Models.Items) > 0 {
		m.Model.Name = ic.Models.Items[0].Name
	}
	if ic.Tokenizer.Name != "" {
		m.Model.Tokenizer = ic.Tokenizer.Name
		if ic.Tokenizer.Revision != "main" {
			m.Model.TokenizerRevision = ic.Tokenizer.Revision
		}
	}
	if ep, ok := endpoints[ic.Endpoint.Type]; ok {
		m.Decoding.Endpoint = ep
	}
	if ic.Endpoint.Streaming != nil {
		m.Decoding.Streaming = *ic.Endpoint.Streaming
		if !*ic.Endpoint.Streaming {
			m.Client.Boundary = schema.BoundaryNonStreaming
		}
	}
}

// fillWorkload takes the command line, seed, dataset and mean token
// lengths, preferring the run info over the input configuration and the
// datasets list over schema ≤ 1.0's input section.
func fillWorkload(m *schema.Manifest, s *Summary, pt *schema.Point) {
	ic := s.InputConfig
	cmd := ic.CLICommand
	if s.RunInfo != nil && s.RunInfo.CLICommand != "" {
		cmd = s.RunInfo.CLICommand
	}
	if cmd != "" {
		m.Client.CommandLine = ingest.SplitCommand(cmd)
	}
	seed := ic.Input.RandomSeed
	if s.RunInfo != nil && s.RunInfo.RandomSeed != "" {
		seed = s.RunInfo.RandomSeed
	}
	if len(ic.Datasets) > 0 {
		d := ic.Datasets[0]
		switch {
		case d.Dataset != "":
			m.Workload.Dataset = d.Dataset
		case d.Path != "":
			m.Workload.Dataset = d.Path
		default:
			m.Workload.Dataset = d.Name
		}
		if d.Format != "" {
			ingest.SetNote(m, "aiperf.dataset_format", d.Format)
		}
		if n := posInt(d.Entries); n > 0 {
			m.Workload.Items = int(n)
		}
		if seed == "" {
			seed = d.RandomSeed
		}
	}
	if m.Workload.Dataset == "" {
		// Schema ≤ 1.0 names the dataset under input_config.input.
		in := ic.Input
		switch {
		case in.PublicDataset != "":
			m.Workload.Dataset = in.PublicDataset
		case in.File != "":
			m.Workload.Dataset = in.File
		}
		if in.CustomDatasetType != "" {
			ingest.SetNote(m, "aiperf.custom_dataset_type", in.CustomDatasetType)
		}
	}
	if seed != "" {
		if v, err := ingest.Int(seed); err == nil {
			m.Client.Seed = &v
		}
	}
	if n, err := ingest.Int(ic.Input.Prompt.OutputTokens.Mean); err == nil && n > 0 {
		m.Workload.OutputTokens = &schema.LengthDist{Mean: float64(n)}
		pt.OutputTokens = int(n)
	}
	if n, err := ingest.Int(ic.Input.Prompt.InputTokens.Mean); err == nil && n > 0 {
		m.Workload.InputTokens = &schema.LengthDist{Mean: float64(n)}
		pt.InputTokens = int(n)
	}
}

// fillLoad takes pt's rate, concurrency, requests and duration and m's
// warmup from the load the summary configured (Summary.load), keeping
// what has no schema field as notes.
func fillLoad(m *schema.Manifest, s *Summary, pt *schema.Point) {
	ld := s.load()
	if ld.rate > 0 {
		m.Load.Mode = schema.ModeRate
		pt.Rate, pt.Arrival = ld.rate, ld.arrival
	}
	pt.Concurrency = int(ld.concurrency)
	pt.Requests = int(ld.requests)
	if ld.durationNS > 0 {
		// A time-based run: AIPerf sends for this long, then waits up
		// to the grace period for the requests in flight.
		pt.Duration = schema.Duration(ld.durationNS)
		if ld.grace != "" {
			ingest.SetNote(m, "aiperf.grace_period_s", string(ld.grace))
		}
	}
	m.Load.Warmup.Requests = int(ld.warmup)
	if ld.mode != "" {
		ingest.SetNote(m, "aiperf.request_rate_mode", ld.mode)
	}
	if ld.phaseType != "" {
		ingest.SetNote(m, "aiperf.profiling_phase_type", ld.phaseType)
	}
	if ld.phase != nil {
		ingest.SetNote(m, "aiperf.profiling_phase", string(ld.phase))
	}
}

// fillHardware names the accelerator and its count when the telemetry
// saw GPUs of one name only.
func fillHardware(m *schema.Manifest, s *Summary) {
	if s.TelemetryData == nil {
		return
	}
	names := map[string]int{}
	count := 0
	for _, ep := range s.TelemetryData.Endpoints {
		for _, g := range ep.GPUs {
			names[g.GPUName]++
			count++
		}
	}
	if len(names) == 1 {
		for n := range names {
			m.Hardware.Accelerator = n
		}
		m.Hardware.AcceleratorCount = schema.Count(count)
	}
}

// fillNotes keeps the summary's identity and times as notes and marks a
// cancelled run incomplete.
func fillNotes(m *schema.Manifest, s *Summary) {
	if s.BenchmarkID != "" {
		ingest.SetNote(m, "aiperf.benchmark_id", s.BenchmarkID)
	}
	if s.SchemaVersion != "" {
		ingest.SetNote(m, "aiperf.schema_version", s.SchemaVersion)
	}
	if s.StartTime != "" {
		ingest.SetNote(m, "aiperf.start_time", s.StartTime)
	}
	if s.EndTime != "" {
		ingest.SetNote(m, "aiperf.end_time", s.EndTime)
	}
	if s.WasCancelled {
		m.Incomplete = true
		m.IncompleteReason = "AIPerf reports was_cancelled: true"
	}
}
