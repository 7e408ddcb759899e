// What capture writes into manifest.json before and after the run.

package capture

import (
	"cmp"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"slices"
	"sync/atomic"
	"time"

	"github.com/benchseal/benchseal/internal/digits"
	"github.com/benchseal/benchseal/internal/errcond"
	"github.com/benchseal/benchseal/schema"
)

// setNote sets manifest note k to v.
func setNote(m *schema.Manifest, k, v string) {
	if m.Notes == nil {
		m.Notes = map[string]string{}
	}
	m.Notes[k] = v
}

func writeManifest(dir string, m *schema.Manifest) error {
	b, err := schema.MarshalDocument(m)
	if err != nil {
		return fmt.Errorf("write manifest: %w", err)
	}
	return schema.WriteFileAtomic(filepath.Join(dir, schema.ManifestFile), b, 0o644)
}

// baseManifest fills what capture knows before the run.
func (r *runner) baseManifest() *schema.Manifest {
	o := r.o
	m := &schema.Manifest{}
	if o.Manifest != nil {
		*m = *o.Manifest
		m.Unknown = slices.Clone(o.Manifest.Unknown)
	}
	m.Schema = schema.ManifestSchemaV1
	if m.RunID == "" {
		m.RunID = schema.NewRunID()
	}
	if m.Evidence == "" {
		m.Evidence = schema.EvidenceSelfRun
	}
	m.Client.Name, m.Client.CaptureRevision = ClientName, schema.CaptureRevision
	if o.Request.Stream {
		m.Client.Boundary = schema.BoundaryClientStreaming
	} else {
		m.Client.Boundary = schema.BoundaryNonStreaming
		declareNonStreaming(m)
	}
	seed := o.Plan.Seed
	m.Client.Seed = &seed
	m.Model.Name = o.Request.Model
	m.Decoding.Streaming = o.Request.Stream
	m.Decoding.Temperature = o.Request.Temperature
	m.Decoding.Seed = o.Request.Seed
	if o.Request.API == APICompletions {
		m.Decoding.Endpoint = "/v1/completions"
	} else {
		m.Decoding.Endpoint = "/v1/chat/completions"
	}
	outs := map[int]bool{}
	ins := map[int]bool{}
	for _, it := range r.items {
		outs[it.OutputTokens] = true
		ins[it.InputTokens] = true
	}
	if len(outs) == 1 {
		for v := range outs {
			m.Decoding.MaxTokens = v
			if o.Request.ForceLength {
				m.Decoding.MinTokens = v
			}
		}
	}
	m.Decoding.IgnoreEOS = o.Request.ForceLength
	if o.Request.ForceLength {
		setNote(m, "decoding", "every request sets max_tokens to its item's output_tokens, and min_tokens = max_tokens and ignore_eos = true to force the output length")
	} else {
		setNote(m, "decoding", "every request sets max_tokens to its item's output_tokens; the server may stop earlier at end of sequence")
	}
	if o.Request.PerChunkUsage {
		setNote(m, "per_chunk_usage", "stream_options.continuous_usage_stats requested; chunk_tokens derived from cumulative usage where consistent")
	}
	m.Workload.Dataset = o.Dataset
	m.Workload.InputTokens = lengthDist(r.items, func(it *Item) int { return it.InputTokens })
	m.Workload.OutputTokens = lengthDist(r.items, func(it *Item) int { return it.OutputTokens })
	if d := m.Workload.OutputTokens; d != nil {
		d.Unit = schema.LengthTokens // the max_tokens sent
	}
	if tr := o.Trace; tr != nil {
		src := tr.Source
		m.Workload.Trace = &src
		m.Workload.Dataset = cmp.Or(o.Dataset, src.File)
		m.Workload.Description = fmt.Sprintf("%d requests of the %s trace %s (sha256 %s), each a synthetic prompt of the trace's input length (words of benchseal's vocabulary, or the served model's tokens when fitted: notes.input_tokens) asking for the trace's output length in tokens", src.Requests, src.Format, src.File, src.SHA256)
		m.Workload.InputTokens.Kind = "dataset"
	} else if o.Sessions != nil {
		describeSessions(m, o.Sessions, o.Dataset)
	} else if o.Prompts == nil {
		m.Workload.Description = "synthetic prompts of random common English words, one word per intended token, generated from the plan seed"
		if m.Workload.Dataset == "" {
			m.Workload.Dataset = "synthetic"
		}
		m.Workload.InputTokens.Kind = "fixed"
		if len(ins) > 1 {
			m.Workload.InputTokens.Kind = "dataset"
		}
		drawn(m.Workload.InputTokens, o.Plan.InputLengths)
		drawn(m.Workload.OutputTokens, o.Plan.OutputLengths)
	} else if m.Workload.Description == "" {
		m.Workload.Description = fmt.Sprintf("%d prompts from %s", len(o.Prompts), o.Dataset)
	}
	p := &o.Plan
	m.Load.Mode = p.Mode
	m.Load.Points = slices.Clone(p.Points)
	m.Load.Warmup = p.Warmup
	m.Load.Repeats = p.Repeats
	m.Load.RequestTimeout = p.RequestTimeout
	m.Load.MaxOutstanding = p.MaxOutstanding
	m.Load.Generator = schema.GeneratorBenchsealV1
	// Until the run ends and says whether every response carried usage.
	m.Client.TokenCounts = "server-usage"
	if c := p.Cancel; c != nil && c.Fraction > 0 {
		setNote(m, "cancellation", fmt.Sprintf("a seeded %s fraction of requests is cancelled by the client %s after its send (status cancelled)", digits.Sig(c.Fraction, 4), time.Duration(c.After)))
	}
	setNote(m, "schedule", scheduleNote(o))
	return m
}

// scheduleNote says when the run's requests were sent (the manifest's
// "schedule" note).
func scheduleNote(o *Options) string {
	switch {
	case o.Trace != nil:
		return fmt.Sprintf("trace replay: request k is sent trace_ns/%s ns after the point's first (workload item k's trace_ns: its time in the trace less the window's first request's), the same in every repeat; records keep scheduled_ns and sent_ns", digits.Shortest(o.Trace.Source.Speedup))
	case o.Sessions != nil && o.Plan.Mode == schema.ModeRate:
		return "sessions arriving at a rate: session s starts at the s-th offset of the seeded schedule of the point's rate and arrival (one offset per session, first at 0), its turn 0's scheduled_ns; each later turn is sent when the turn before it ended, and its scheduled_ns is that end_ns (send lag: the client's delay); request k sends workload item k; records keep session and turn"
	case o.Sessions != nil:
		return "closed-loop sessions: each of the point's concurrency workers runs one session at a time and sends its next turn when the previous one ends (request k sends workload item k; records keep session and turn); no scheduled_ns"
	case o.Plan.Mode == schema.ModeRate:
		return "open loop: each rate point's send times are precomputed from the seed (first at 0, then constant, exponential or gamma gaps); records keep scheduled_ns and sent_ns"
	}
	return "closed loop: each of the point's concurrency workers sends its next request when the previous one ends; no scheduled_ns"
}

// describeSessions states a session run's workload: its conversations
// and how each turn is made.
func describeSessions(m *schema.Manifest, ss *SessionRun, dataset string) {
	src := ss.Source
	m.Workload.Sessions = &src
	m.Workload.Dataset = cmp.Or(dataset, src.File)
	m.Workload.Description = fmt.Sprintf("%d multi-turn sessions (%d turns) of the %s conversations %s (sha256 %s): each turn's chat messages are its question with the earlier questions and the dataset's answers to them", src.Sessions, src.Turns, src.Format, src.File, src.SHA256)
	m.Workload.InputTokens = nil
}

// drawn labels the summary d of lengths drawn from spec (nil: not drawn)
// with its kind and spec.
func drawn(d *schema.LengthDist, spec *LengthSpec) {
	if d != nil && spec != nil {
		d.Kind, d.Spec = spec.Kind, spec.String()
	}
}

func lengthDist(items []Item, f func(*Item) int) *schema.LengthDist {
	if len(items) == 0 {
		return nil
	}
	d := &schema.LengthDist{Kind: "dataset", Min: f(&items[0]), Max: f(&items[0])}
	var sum int64
	for i := range items {
		v := f(&items[i])
		d.Min = min(d.Min, v)
		d.Max = max(d.Max, v)
		sum += int64(v)
	}
	d.Mean = float64(sum) / float64(len(items))
	if d.Max == 0 {
		return nil
	}
	if d.Min == d.Max {
		d.Kind = "fixed"
	}
	return d
}

func applyServerInfo(m *schema.Manifest, si *ServerInfo) {
	if len(si.Answers) > 0 {
		if m.Engine.Server == nil {
			m.Engine.Server = map[string]string{}
		}
		// A reply is kept as the server sent it, except that control
		// characters other than newline and tab are escaped: the manifest
		// holds none (schema.IsControlRune; engine.server alone may keep a
		// reply's line breaks).
		for k, v := range si.Answers {
			m.Engine.Server[k] = schema.EscapeText(v, true)
		}
	}
	if si.Simulator {
		m.Evidence = schema.EvidenceSynthetic
		m.Engine.Name = SimulatorOwner
		if m.Hardware.Accelerator == "" {
			m.Hardware.Accelerator = schema.HardwareSimulated
			m.Hardware.Driver = schema.HardwareSimulated
			m.Hardware.Runtime = schema.HardwareSimulated
		}
		setNote(m, "simulator", "the server identified itself as benchseal's simulator: these are synthetic measurements, not an inference engine's")
	}
	if m.Engine.Name == "" {
		m.Engine.Name = schema.EscapeText(si.EngineName, false)
	}
	if m.Engine.Version == "" {
		m.Engine.Version = schema.EscapeText(si.EngineVersion, false)
	}
}

// finishManifest is the package's finishManifest for a run that may be
// against benchseal's simulator: once the run is known to be (Options.Simulator,
// or a response carried SimulatorHeader), the simulator's description goes
// in first (the overlay and assignments may still name the hardware it
// stands for), and the evidence is synthetic after them, whatever they say.
func (r *runner) finishManifest(m *schema.Manifest, overlay []byte, sets []string) error {
	r.prefix.note(m) // nothing before the first measured request ends
	sim := r.o.Simulator || r.simSeen.Load()
	if sim && !r.simApplied {
		r.simApplied = true
		applyServerInfo(m, &ServerInfo{Simulator: true})
	}
	if sim && r.o.SimGPUs > 0 && m.Hardware.AcceleratorCount == nil {
		m.Hardware.AcceleratorCount = schema.Count(r.o.SimGPUs)
	}
	if err := finishManifest(m, overlay, sets); err != nil {
		return err
	}
	if sim {
		m.Evidence = schema.EvidenceSynthetic
		if err := CheckSimulatedHardware(m.Hardware, r.o.Simulator, r.o.SimGPUs); err != nil {
			return err
		}
	}
	return nil
}

// ErrSimulatedHardware: the hardware stated contradicts the simulator's
// (Options.Simulator, Options.SimGPUs).
var ErrSimulatedHardware = errors.New("the stated hardware contradicts the simulator's")

// CheckSimulatedHardware checks the hardware h a run states against
// benchseal's simulator: run in-process (inProcess: capture --simulate),
// its records are the simulator's, so any other accelerator than
// schema.HardwareSimulated, or without simulated accelerators (n 0) a
// count other than 0, makes a run that validation rejects once captured
// (schema's validateSimulatedHardware states the rule); with n > 0
// accelerators scraped (--sim-gpus), their scrapes label every device
// the simulator's (schema.SimulatorModel) and list n of them, so another
// accelerator or count is rejected too. An empty accelerator or no count
// is not a contradiction (capture fills them).
func CheckSimulatedHardware(h schema.Hardware, inProcess bool, n int) error {
	if n <= 0 {
		return checkInProcessHardware(h, inProcess)
	}
	if a := h.Accelerator; a != "" && a != schema.HardwareSimulated {
		return errcond.Errorf(ErrSimulatedHardware, "the stated hardware contradicts the simulator's: hardware.accelerator is %q, but --sim-gpus %d scrapes %d simulated accelerator(s) labelled model %q (benchseal's simulator): leave hardware.accelerator unset (capture records %q and the run's hardware reads %q)",
			a, n, n, schema.SimulatorModel, schema.HardwareSimulated, schema.SimulatedHardwareOf(n))
	}
	if c, ok := h.Accelerators(); ok && c != n {
		return errcond.Errorf(ErrSimulatedHardware, "the stated hardware contradicts the simulator's: hardware.accelerator_count is %d, but --sim-gpus %d scrapes %d simulated accelerator(s): leave hardware.accelerator_count unset or give %d",
			c, n, n, n)
	}
	return nil
}

// checkInProcessHardware is CheckSimulatedHardware without simulated
// accelerators.
func checkInProcessHardware(h schema.Hardware, inProcess bool) error {
	if !inProcess {
		return nil
	}
	if a := h.Accelerator; a != "" && a != schema.HardwareSimulated {
		return errcond.Errorf(ErrSimulatedHardware, "the stated hardware contradicts the simulator's: hardware.accelerator is %q, but --simulate runs benchseal's simulator in-process: the records are the simulator's, not that accelerator's; leave hardware.accelerator unset (it is then %q)",
			a, schema.HardwareSimulated)
	}
	if c, ok := h.Accelerators(); ok && c != 0 {
		return errcond.Errorf(ErrSimulatedHardware, "the stated hardware contradicts the simulator's: hardware.accelerator_count is %d, but --simulate without --sim-gpus simulates no accelerator: leave hardware.accelerator_count unset, or give --sim-gpus %d",
			c, c)
	}
	return nil
}

// simulatorSpotter is a RoundTripper that notes every response carrying
// SimulatorHeader.
type simulatorSpotter struct {
	rt   http.RoundTripper
	seen *atomic.Bool
}

// spotSimulator wraps rt (nil: http.DefaultTransport) so that a response
// from benchseal's simulator, on any request, marks the run synthetic.
func (r *runner) spotSimulator(rt http.RoundTripper) http.RoundTripper {
	if rt == nil {
		rt = http.DefaultTransport
	}
	return simulatorSpotter{rt: rt, seen: &r.simSeen}
}

// RoundTrip implements http.RoundTripper.
func (s simulatorSpotter) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := s.rt.RoundTrip(req)
	if resp != nil && resp.Header.Get(SimulatorHeader) != "" {
		s.seen.Store(true)
	}
	return resp, err
}

// CloseIdleConnections closes the wrapped transport's idle connections.
func (s simulatorSpotter) CloseIdleConnections() {
	if c, ok := s.rt.(interface{ CloseIdleConnections() }); ok {
		c.CloseIdleConnections()
	}
}

// finishManifest applies the publisher's overlay and assignments, then
// lists in m.Unknown every must-state field still empty (and drops from it
// every field now set), so the manifest validates.
func finishManifest(m *schema.Manifest, overlay []byte, sets []string) error {
	if m.Unknown == nil {
		m.Unknown = []string{}
	}
	if err := schema.ApplyOverlay(m, overlay, sets); err != nil {
		return fmt.Errorf("capture failed: %w", err)
	}
	m.Unknown = append(m.Unknown, schema.MissingMustState(m)...)
	slices.Sort(m.Unknown)
	m.Unknown = slices.Compact(m.Unknown)
	return nil
}

// declareNonStreaming states in manifest.provenance what a non-streaming
// capture measures: the whole response's arrival, stored as the single
// element of chunks_ns, and no first-token time, so replay nulls TTFT,
// TPOT and ITL with this reason.
func declareNonStreaming(m *schema.Manifest) {
	if m.Provenance == nil {
		m.Provenance = &schema.Provenance{}
	}
	m.Provenance.Set(schema.FieldFirstChunk, schema.FieldAbsent,
		"non-streaming: the response arrived whole, so there is no first-token time; chunks_ns[0] is the whole response's arrival")
	m.Provenance.Set(schema.FieldChunks, schema.FieldDerived,
		"non-streaming: one element, the whole response's arrival (no chunk times between tokens)")
}
