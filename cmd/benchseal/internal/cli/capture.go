package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/capture"
	"github.com/benchseal/benchseal/energy"
	"github.com/benchseal/benchseal/internal/digits"
	preplan "github.com/benchseal/benchseal/plan"
	"github.com/benchseal/benchseal/redact"
	"github.com/benchseal/benchseal/report"
	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/simulator"
)

type captureOptions struct {
	io   *IO
	live *liveProgress // the terminal progress line, when drawn

	endpoint, model, out, api string
	noStream                  bool
	serverMetrics             string
	serverMetricsInterval     time.Duration
	resetPrefixCache          bool
	serverFresh               bool
	apiKeyEnv                 string
	simulate                  bool
	simTimeScale              float64
	simGPUs                   int
	gpuMetricsMaxAge          time.Duration
	gpuMetrics                []string
	gpuMetricsInterval        time.Duration
	gpuCustom                 energy.Custom
	readyTimeout              time.Duration

	concurrency, rate  string
	arrival            string
	burstiness         float64
	requests           int
	duration           time.Duration
	warmupRequests     int
	warmupDuration     time.Duration
	repeats            int
	timeout            time.Duration
	maxOutstanding     int
	cancelFraction     float64
	cancelAfter        time.Duration
	seed               int64
	inputTokens        string
	outputTokens       string
	prompts            string
	trace              string
	traceSpeedup       float64
	traceWindow        string
	traceRun           *capture.TraceRun // read from --trace by buildPlan
	sharegpt           string
	sessions           int
	shareGPT           *capture.ShareGPT   // read from --sharegpt by buildPlan
	sessionRun         *capture.SessionRun // laid out from --sharegpt and --sessions by buildPlan
	forceLength        bool
	perChunkUsage      bool
	distinctPrompts    bool
	temperature        float64
	preset             string
	plan               string
	registered         *preplan.Plan // the --plan file, when it is a pre-registered plan
	location, gpuQuery string
	sets               []string
	overlay            string
	title, evidence    string
	grace              time.Duration
	progress           string
	noProbe            bool
	http2              bool
	noPreflight        bool
	maxErrorRate       float64
	shard              string
	shards             int
	startAt            string
}

// planFlags are the load flags a --plan file replaces.
var planFlags = []string{"concurrency", "rate", "arrival", "burstiness", "requests", "duration", "warmup-requests",
	"warmup-duration", "repeats", "timeout", "max-outstanding", "cancel-fraction", "cancel-after", "seed",
	"input-tokens", "output-tokens", "preset"}

func newCaptureCmd(io *IO) *cobra.Command {
	cmd, _ := newCaptureCommand(io)
	return cmd
}

// captureLong is the capture command's help text, kept out of
// newCaptureCommand so the flags it binds read together.
const captureLong = `capture drives an OpenAI-compatible server (/v1/chat/completions or
/v1/completions, streamed with stream_options.include_usage, or --no-stream) and
writes a run directory: manifest.json, records.jsonl (one line per request,
appended as requests finish) and workload.jsonl.

Load: --concurrency keeps N requests outstanding (closed loop); --rate sends on
an open-loop schedule precomputed from --seed (constant, poisson or gamma
arrivals with --burstiness), recording scheduled and actual send times; comma
lists sweep points; --preset protocol runs short/long prompts × short/long
outputs × increasing load; --plan reads a JSON plan. Warmup requests are
recorded with phase "warmup".

Timestamps are taken on one monotonic clock when a chunk's bytes are read;
only content-bearing chunks count. In-band stream errors are errors.

Ctrl-C (SIGINT) or SIGTERM stops sending, gives in-flight requests --grace to
finish and writes a valid run marked incomplete; the command then exits 130
(SIGINT) or 143 (SIGTERM), as every benchseal command stopped by a signal does,
and the run is kept. A request past --timeout or its planned cancellation is
timeout or cancelled by its own timestamps, however late the client noticed.

Exit codes: 0 complete run; 1 preflight failed (nothing written), a phase's
failures passed --max-error-rate (run kept, marked incomplete) or another
error; 2 usage (including no load flag: give --concurrency, --rate, --preset
or --plan); 130/143 interrupted by SIGINT/SIGTERM (run kept, marked
incomplete).

The API key is read from the environment variable
named by --api-key-env and never written to the run. --simulate runs against an
in-process simulator instead of --endpoint. Its evidence is "synthetic" whatever
--evidence, --set or --manifest say, and so is the evidence of any run whose
server answered once with the simulator's X-Benchseal-Simulator header.`

// captureExample is the capture command's examples.
const captureExample = `  benchseal capture --endpoint http://127.0.0.1:8000 --model M --out run --concurrency 8 --requests 200
  benchseal capture --endpoint http://127.0.0.1:8000 --model M --out run --rate 5,10,20 --requests 200 --warmup-requests 10
  benchseal capture --endpoint http://127.0.0.1:8000 --model M --out run --preset protocol --set engine.name=vllm
  benchseal capture --simulate --out demo-run --concurrency 1,4 --requests 20 --sim-time-scale 0.01`

// newCaptureCommand returns the capture command and the options its flags
// fill (k8s job parses capture's flags with it).
func newCaptureCommand(io *IO) (*cobra.Command, *captureOptions) {
	o := &captureOptions{io: io}
	cmd := &cobra.Command{
		Use:     "capture --endpoint URL --model NAME --out RUNDIR (--concurrency N[,N...] | --rate R[,R...] | --preset protocol | --plan PLAN.json)",
		Short:   "Benchmark an OpenAI-compatible endpoint and write a run directory as it goes",
		Long:    captureLong,
		Example: captureExample,
		Args:    noArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runCapture(cmd, o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.endpoint, "endpoint", "", "server base URL, e.g. http://127.0.0.1:8000")
	f.BoolVar(&o.simulate, "simulate", false, "run against an in-process simulator on 127.0.0.1 (synthetic evidence)")
	f.Float64Var(&o.simTimeScale, "sim-time-scale", 1, "with --simulate: multiply the simulator's latency model, in (0, 1000]")
	f.StringVar(&o.model, "model", "", "model name sent in every request (required, except with --simulate)")
	f.StringVar(&o.out, "out", "", "run directory to create (must not exist or be empty)")
	enumFlag(f, &o.api, "api", capture.APIChat, []string{capture.APIChat, capture.APICompletions}, "API: chat (/v1/chat/completions) or completions (/v1/completions)")
	f.BoolVar(&o.noStream, "no-stream", false, "non-streaming requests (measurement boundary non-streaming)")
	f.StringVar(&o.serverMetrics, "server-metrics", capture.ServerMetricsAuto, "engine Prometheus metrics URL scraped before, during and after every point (auto: the endpoint's /metrics when it answers with engine metrics; off: none)")
	f.DurationVar(&o.serverMetricsInterval, "server-metrics-interval", capture.DefaultServerMetricsInterval, "period of the server-metrics scrapes during a point")
	f.BoolVar(&o.resetPrefixCache, "reset-prefix-cache", false, "empty the engine's prefix cache before every point × repeat (POST /reset_prefix_cache, vLLM; /flush_cache, SGLang; POST /slots/ID?action=erase for every slot, llama.cpp started with --slot-save-path); each attempt is recorded, a failed one leaves that point's cache state to what the engine reports")
	f.BoolVar(&o.distinctPrompts, "distinct-prompts", false, "give every point × repeat synthetic prompts of its own (seeded, in the workload), so no prompt cache carries over between them")
	f.BoolVar(&o.serverFresh, "server-fresh", false, "declare that the server was freshly started for this run (measured instead when /metrics before the run holds the engine's counters; a contradicted declaration stops the run)")
	f.StringVar(&o.apiKeyEnv, "api-key-env", "", "name of the environment variable holding the API key (sent as Bearer, never recorded)")
	f.DurationVar(&o.readyTimeout, "ready-timeout", 0, "wait up to this long for GET /v1/models to answer before starting")
	f.StringVar(&o.concurrency, "concurrency", "", "closed loop: outstanding requests, or a comma list of points")
	f.StringVar(&o.rate, "rate", "", "open loop: requests per second, or a comma list of points (with --sessions: sessions started per second)")
	enumFlag(f, &o.arrival, "arrival", schema.ArrivalPoisson, []string{schema.ArrivalConstant, schema.ArrivalPoisson, schema.ArrivalGamma}, "rate arrivals: constant, poisson or gamma")
	f.Float64Var(&o.burstiness, "burstiness", 0, "gamma shape (1 = poisson, < 1 burstier); implies --arrival gamma")
	f.IntVar(&o.requests, "requests", 0, "measured requests per point")
	f.DurationVar(&o.duration, "duration", 0, "measured duration per point (with --requests: whichever ends first)")
	f.IntVar(&o.warmupRequests, "warmup-requests", 0, "warmup requests before each point and repeat")
	f.DurationVar(&o.warmupDuration, "warmup-duration", 0, "warmup duration before each point and repeat")
	f.IntVar(&o.repeats, "repeats", 1, "run the whole sweep this many times")
	f.DurationVar(&o.timeout, "timeout", 0, "per-request timeout (status timeout); 0: none")
	f.IntVar(&o.maxOutstanding, "max-outstanding", 0, "rate mode: cap on in-flight requests; later sends are recorded as rejected")
	f.Float64Var(&o.cancelFraction, "cancel-fraction", 0, "fraction of requests the client cancels after --cancel-after")
	f.DurationVar(&o.cancelAfter, "cancel-after", 0, "delay after send before a planned cancellation")
	f.Int64Var(&o.seed, "seed", 0, "seed of the request order, schedule, synthetic prompts and cancellations")
	f.BoolVar(&o.forceLength, "force-length", true, "also send min_tokens = max_tokens and ignore_eos (vLLM, SGLang, llama.cpp)")
	f.BoolVar(&o.perChunkUsage, "per-chunk-usage", false, "ask for usage on every chunk (vLLM continuous_usage_stats) to record chunk_tokens")
	f.Float64Var(&o.temperature, "temperature", 0, "sampling temperature to send (not sent unless given)")
	f.StringVar(&o.preset, "preset", "", "ready plan: protocol (short/long prompts × short/long outputs × load)")
	f.StringVar(&o.plan, "plan", "", "JSON plan file (see docs/capture.md)")
	f.StringVar(&o.location, "location", "", "client location relative to the server: same-host, same-rack, same-region, cross-region ...")
	enumFlag(f, &o.gpuQuery, "gpu-query", "", []string{capture.GPUQueryNvidia, capture.GPUQueryAMD}, "when run on the server host: query accelerators with nvidia-smi or amd-smi")
	f.StringArrayVar(&o.sets, "set", nil, "manifest field assignment dotted.path=value (repeatable), e.g. engine.name=vllm")
	f.StringVar(&o.overlay, "manifest", "", "partial manifest JSON merged over what capture fills (before --set)")
	f.StringVar(&o.title, "title", "", "run title")
	enumFlag(f, &o.evidence, "evidence", schema.EvidenceSelfRun, []string{schema.EvidenceSelfRun, schema.EvidenceVendorRun, schema.EvidenceIndependent}, "evidence class: self-run, vendor-run or independent (synthetic against a simulator)")
	f.DurationVar(&o.grace, "grace", 10*time.Second, "after Ctrl-C, how long in-flight requests may finish before they are cancelled")
	enumFlag(f, &o.progress, "progress", "auto", []string{"auto", "always", "never"}, "progress display on stderr: auto (when a terminal), always or never")
	f.BoolVar(&o.noProbe, "no-probe", false, "do not ask the server's /v1/models and /version")
	f.BoolVar(&o.http2, "http2", false, "speak HTTP/2 where an https:// server offers it (ALPN); http:// stays HTTP/1.1")
	f.BoolVar(&o.noPreflight, "no-preflight", false, "skip the checks before the run (the model is listed by /v1/models when offered; one probe request succeeds)")
	f.StringVar(&o.shard, "shard", "", "capture only shard I/N of the plan: the whole seeded schedule is generated and every N-th request sent (merge the shards with benchseal merge)")
	f.IntVar(&o.shards, "shards", 0, "capture one of N shards, its index from $JOB_COMPLETION_INDEX (a Kubernetes Indexed Job)")
	f.StringVar(&o.startAt, "start-at", "", "common start of all shards (RFC 3339): wait for it; a late shard records by how much")
	f.Float64Var(&o.maxErrorRate, "max-error-rate", 0.5, "stop the run (exit 1, run kept marked incomplete) when more than this fraction of a phase's requests failed, after 20 (0: never)")
	addWorkloadFlags(cmd, o) // after --plan and --distinct-prompts, which it excludes
	addGPUFlags(cmd, o)
	cmd.MarkFlagsMutuallyExclusive("endpoint", "simulate")
	cmd.MarkFlagsOneRequired("endpoint", "simulate")
	cmd.MarkFlagsMutuallyExclusive("concurrency", "rate")
	cmd.MarkFlagsMutuallyExclusive("plan", "preset")
	cmd.MarkFlagsMutuallyExclusive("shard", "shards")
	cmd.MarkFlagRequired("out")
	return cmd, o
}

// addGPUFlags adds the flags that scrape accelerator exporters for the
// energy of every point.
func addGPUFlags(cmd *cobra.Command, o *captureOptions) {
	f := cmd.Flags()
	f.StringArrayVar(&o.gpuMetrics, "gpu-metrics", nil, "accelerator exporter Prometheus URL (NVIDIA DCGM exporter, AMD device-metrics-exporter; repeatable, one per node) scraped before, during and after every point, for its energy")
	f.DurationVar(&o.gpuMetricsInterval, "gpu-metrics-interval", capture.DefaultGPUMetricsInterval, "period of the accelerator scrapes during a point (the energy bounds are about two periods of full power apart)")
	f.DurationVar(&o.gpuMetricsMaxAge, "gpu-metrics-max-age", capture.DefaultGPUMetricsMaxAge, "how old the exporter's readings may be when it answers: its own collection interval (dcgm-exporter -c, 30 s by default; run it with -c 1000 and give 1s here). The scrape after each point waits this long, and the energy bounds widen by it")
	f.StringVar(&o.gpuCustom.EnergyCounter, "energy-counter", "", "with --gpu-metrics: the name of a cumulative energy counter the built-in names do not cover (a node exporter, Redfish or IPMI)")
	f.StringVar(&o.gpuCustom.EnergyUnit, "energy-counter-unit", "J", "unit of --energy-counter: J, mJ, uJ, Wh or kWh")
	f.StringVar(&o.gpuCustom.PowerGauge, "power-gauge", "", "with --gpu-metrics: the name of a power gauge the built-in names do not cover (integrated over the scrapes it gives an estimate only)")
	f.StringVar(&o.gpuCustom.PowerUnit, "power-gauge-unit", "W", "unit of --power-gauge: W, mW or kW")
	f.IntVar(&o.simGPUs, "sim-gpus", 0, "with --simulate: simulate this many accelerators and scrape their DCGM-style metrics (as --gpu-metrics)")
}

// addWorkloadFlags adds the flags that choose the requests' prompts and
// lengths: synthetic lengths or distributions, a prompt file, a trace.
func addWorkloadFlags(cmd *cobra.Command, o *captureOptions) {
	f := cmd.Flags()
	f.StringVar(&o.inputTokens, "input-tokens", strconv.Itoa(capture.DefaultInputTokens), "synthetic prompt length: tokens of the served model, counted by its tokenizer endpoint (llama.cpp, vLLM, SGLang), else words (notes.input_tokens says which); N, or a seeded distribution: A..B (uniform), normal:MEAN,SD[,MIN,MAX], lognormal:MEAN,SD[,MIN,MAX], list:L1,L2,...")
	f.StringVar(&o.outputTokens, "output-tokens", strconv.Itoa(capture.DefaultOutputTokens), "target output length in tokens (max_tokens): N or a distribution as for --input-tokens")
	f.StringVar(&o.prompts, "prompts", "", "JSONL prompt file: {\"prompt\"|\"messages\", \"output_tokens\"} per line")
	f.StringVar(&o.trace, "trace", "", "replay a request trace on its own schedule, each request with its input and output lengths: Mooncake JSONL, Azure LLM inference CSV or BurstGPT CSV (see docs/capture.md)")
	f.Float64Var(&o.traceSpeedup, "trace-speedup", 1, "with --trace: divide the trace's times by this (10: ten times as fast)")
	f.StringVar(&o.traceWindow, "trace-window", "", "with --trace: replay only START..END of the trace (its time since the first request, e.g. 60s..120s; either side may be empty)")
	f.StringVar(&o.sharegpt, "sharegpt", "", "ShareGPT conversations (JSON list of {id, conversations: [{from, value}]}): each conversation's first question as a prompt asking for its answer's length in words, or with --sessions every turn (see docs/capture.md)")
	f.IntVar(&o.sessions, "sessions", 0, "with --sharegpt: run N multi-turn sessions per point, C at a time (--concurrency C) or starting at R sessions per second on the seeded --arrival schedule (--rate R), each sending its next turn (with the earlier questions and the dataset's answers) when the previous one ended")
	for _, n := range []string{"plan", "prompts", "distinct-prompts"} {
		cmd.MarkFlagsMutuallyExclusive("trace", n)
		cmd.MarkFlagsMutuallyExclusive("sharegpt", n)
	}
	cmd.MarkFlagsMutuallyExclusive("trace", "sharegpt")
}

// shareGPTWorkload gives opts the workload --sharegpt read: its sessions
// (--sessions) or its conversations' first turns as prompts.
func (o *captureOptions) shareGPTWorkload(cmd *cobra.Command, opts *capture.Options) {
	opts.Sessions = o.sessionRun
	if o.shareGPT == nil || o.sessionRun != nil {
		return
	}
	out := 0
	if cmd.Flags().Changed("output-tokens") {
		out = opts.Plan.OutputTokens
	}
	opts.Prompts, opts.Dataset = o.shareGPT.FirstTurns(out), o.sharegpt
}

// readShareGPTFlag reads --sharegpt and, with --sessions, lays out the
// sessions; outputTokens is --output-tokens when given (0: the dataset
// answers' lengths).
func readShareGPTFlag(o *captureOptions, outputTokens int) error {
	if o.sharegpt == "" {
		if o.sessions != 0 {
			return usagef("--sessions needs --sharegpt: the conversations to run")
		}
		return nil
	}
	data, err := readTraceFile(o.sharegpt)
	if err != nil {
		return fmt.Errorf("--sharegpt: %w", err) // a file it cannot read: exit 1, not usage
	}
	if o.shareGPT, err = capture.ReadShareGPT(data, o.sharegpt); err != nil {
		return usagef("--sharegpt: %v", err)
	}
	if o.sessions != 0 {
		if o.sessionRun, err = o.shareGPT.Sessions(o.sessions, o.seed, outputTokens); err != nil {
			return usagef("%v", err)
		}
	}
	return nil
}

func parseList[T any](s, flag string, parse func(string) (T, error)) ([]T, error) {
	var out []T
	for _, p := range strings.Split(s, ",") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		v, err := parse(p)
		if err != nil {
			var ne *strconv.NumError
			if errors.As(err, &ne) {
				kind := "a number"
				if ne.Func == "Atoi" || strings.HasPrefix(ne.Func, "ParseInt") {
					kind = "a whole number"
				}
				if errors.Is(ne.Err, strconv.ErrRange) {
					return nil, usagef("--%s %q: %q is out of range", flag, s, p)
				}
				return nil, usagef("--%s %q: %q is not %s", flag, s, p, kind)
			}
			return nil, usagef("--%s %q: %v", flag, s, err)
		}
		out = append(out, v)
	}
	if len(out) == 0 {
		return nil, usagef("--%s: empty list", flag)
	}
	return out, nil
}

// buildPlan turns the flags into a plan.
func buildPlan(cmd *cobra.Command, o *captureOptions) (*capture.Plan, error) {
	fl := cmd.Flags()
	if o.plan != "" {
		for _, n := range planFlags {
			if fl.Changed(n) {
				return nil, usagef("--%s cannot be combined with --plan (the plan file sets it)", n)
			}
		}
		p, reg, err := readCapturePlan(o.plan)
		if err != nil {
			return nil, err
		}
		o.registered = reg
		return p, nil
	}
	if o.repeats < 1 { // a plan's omitted repeats means 1; the flag's 0 is a mistake
		return nil, usagef("--repeats %d: want at least 1", o.repeats)
	}
	spec := capture.LoadSpec{
		Requests:       o.requests,
		Duration:       o.duration,
		Warmup:         schema.Warmup{Requests: o.warmupRequests, Duration: schema.Duration(o.warmupDuration)},
		Repeats:        o.repeats,
		Timeout:        o.timeout,
		MaxOutstanding: o.maxOutstanding,
		CancelFraction: o.cancelFraction,
		CancelAfter:    o.cancelAfter,
		Seed:           o.seed,
		Preset:         o.preset,
	}
	if fl.Changed("sessions") && o.sessions < 1 {
		return nil, usagef("--sessions %d: want at least 1 session", o.sessions)
	}
	if fl.Changed("arrival") {
		spec.Arrival = o.arrival
	}
	if fl.Changed("burstiness") {
		spec.Burstiness = &o.burstiness
	}
	for _, l := range []struct {
		flag, v string
		n       **int
		dist    **capture.LengthSpec
	}{{"input-tokens", o.inputTokens, &spec.InputTokens, &spec.InputLengths}, {"output-tokens", o.outputTokens, &spec.OutputTokens, &spec.OutputLengths}} {
		if !fl.Changed(l.flag) {
			continue
		}
		d, err := capture.ParseLengthSpec(l.v)
		if err != nil {
			return nil, usagef("--%s: %v", l.flag, err)
		}
		if d.Fixed() {
			*l.n = &d.Lo
		} else {
			*l.dist = &d
		}
	}
	var err error
	switch {
	case o.rate != "":
		if spec.Rate, err = parseList(o.rate, "rate", func(s string) (float64, error) { return strconv.ParseFloat(s, 64) }); err != nil {
			return nil, err
		}
	case o.concurrency != "":
		if spec.Concurrency, err = parseList(o.concurrency, "concurrency", strconv.Atoi); err != nil {
			return nil, err
		}
	}
	out := 0
	if spec.OutputTokens != nil {
		out = *spec.OutputTokens
	} else if spec.OutputLengths != nil && o.sharegpt != "" {
		return nil, usagef("--output-tokens %q: with --sharegpt, give one length (or none: each answer's length in words)", o.outputTokens)
	}
	if err := readShareGPTFlag(o, out); err != nil {
		return nil, err
	}
	spec.Sessions = o.sessionRun
	if o.trace != "" {
		if spec.Trace, err = readTrace(o); err != nil {
			return nil, err
		}
		o.traceRun = spec.Trace
	} else if fl.Changed("trace-speedup") || fl.Changed("trace-window") {
		return nil, usagef("--trace-speedup and --trace-window need --trace")
	}
	p, err := spec.Plan()
	if err != nil {
		return nil, usagef("%v", err)
	}
	return p, nil
}

// readTrace reads --trace and selects its --trace-window.
func readTrace(o *captureOptions) (*capture.TraceRun, error) {
	var w capture.TraceWindow
	if o.traceWindow != "" {
		var err error
		if w, err = capture.ParseTraceWindow(o.traceWindow); err != nil {
			return nil, usagef("--trace-window %v", err)
		}
	}
	data, err := readTraceFile(o.trace)
	if err != nil {
		return nil, fmt.Errorf("--trace: %w", err) // a file it cannot read: exit 1, not usage
	}
	t, err := capture.ReadTrace(bytes.NewReader(data), o.trace)
	if err != nil {
		return nil, usagef("--trace: %v", err)
	}
	run, err := capture.ReplayTrace(t, data, w, o.traceSpeedup, o.seed)
	if err != nil {
		return nil, usagef("--trace: %v", err)
	}
	return run, nil
}

// commandLine rebuilds the exact invocation from the flags given.
func commandLine(cmd *cobra.Command) []string {
	out := strings.Fields(cmd.CommandPath())
	cmd.Flags().Visit(func(f *pflag.Flag) {
		if sv, ok := f.Value.(pflag.SliceValue); ok {
			for _, v := range sv.GetSlice() {
				out = append(out, "--"+f.Name+"="+v)
			}
			return
		}
		out = append(out, "--"+f.Name+"="+f.Value.String())
	})
	return out
}

// redactArgs returns args with credentials (and the API key itself, if
// an argument repeats it) masked, warning on w (when not nil) for each
// argument changed: the command line and --set values are kept in the
// manifest and published with the run.
func redactArgs(w io.Writer, args []string, apiKey string) []string {
	out, changed := redact.Args(args, apiKey, "the --api-key-env key")
	for _, c := range changed {
		if w != nil {
			fmt.Fprintf(w, "warning: command-line argument %d holds a credential (%s); it is recorded as %q\n", c.Index, c.Kind, c.Redacted)
		}
	}
	return out
}

// runCapture is the command: the flags become capture.Options, then one
// capture.Run (against the in-process simulator with --simulate).
func runCapture(cmd *cobra.Command, o *captureOptions) error {
	ctx := cmd.Context()
	if err := refuseInputAsOut("--out", o.out, []string{o.plan, o.prompts, o.trace, o.sharegpt, o.overlay}); err != nil {
		return err
	}
	opts, err := o.captureOptions(cmd)
	if err != nil {
		return err
	}
	if o.simulate {
		stop, err := o.startSimulator(ctx, &opts)
		if err != nil {
			return err
		}
		defer stop()
		if statesEvidence(cmd, o.sets) {
			fmt.Fprintf(o.io.ErrOut, "warning: --simulate: the run's evidence is %q, whatever --evidence or --set evidence= state\n", schema.EvidenceSynthetic)
		}
	}
	res, err := capture.Run(ctx, opts)
	if o.live != nil {
		o.live.end()
	}
	if errors.Is(err, capture.ErrTooManyFailures) && res != nil {
		printCaptureSummary(ctx, o.io.Out, res)
		return fmt.Errorf("%w; %s is kept, marked incomplete", err, res.Dir)
	}
	if err != nil {
		if errors.Is(err, preplan.ErrPlan) {
			return usagef("%v", err)
		}
		return err
	}
	// The run as pack will check it, before the summary calls it complete.
	if !res.Stopped && !res.Manifest.Incomplete {
		if err := artifact.CheckCapturedRun(ctx, res.Dir, 20); err != nil {
			return err
		}
	}
	printCaptureSummary(ctx, o.io.Out, res)
	if res.EnergyWarning != "" {
		fmt.Fprintf(o.io.ErrOut, "warning: %s\n", res.EnergyWarning)
	}
	if res.Stopped {
		fmt.Fprintf(o.io.ErrOut, "benchseal: capture interrupted; %s is a valid run marked incomplete\n", res.Dir)
		return silentExit{ExitError}
	}
	return nil
}

// statesEvidence tells whether the command line states an evidence class
// other than synthetic (--evidence, or --set evidence=...).
func statesEvidence(cmd *cobra.Command, sets []string) bool {
	if cmd.Flags().Changed("evidence") {
		return true
	}
	for _, s := range sets {
		if v, ok := strings.CutPrefix(strings.TrimSpace(s), "evidence="); ok && strings.TrimSpace(v) != schema.EvidenceSynthetic {
			return true
		}
	}
	return false
}

// readPromptsFlag reads --prompts (nil, nil without it).
func readPromptsFlag(o *captureOptions) ([]capture.Item, error) {
	if o.prompts == "" {
		return nil, nil
	}
	out, err := capture.ParseLengthSpec(o.outputTokens)
	if err != nil || !out.Fixed() {
		return nil, usagef("--output-tokens %q: with --prompts, give one length (the default of items that state none)", o.outputTokens)
	}
	f, err := os.Open(o.prompts)
	if err != nil {
		return nil, fmt.Errorf("--prompts: %w", err) // a file it cannot read: exit 1, not usage
	}
	defer f.Close()
	items, err := capture.ReadPrompts(f, o.prompts, out.Lo)
	if err != nil {
		return nil, usagef("--prompts: %v", err)
	}
	return items, nil
}

// captureOptions checks the flags and turns them into capture.Options;
// every mistake is a usage error.
func (o *captureOptions) captureOptions(cmd *cobra.Command) (capture.Options, error) {
	var none capture.Options
	if err := o.checkScrapeFlags(); err != nil {
		return none, err
	}
	plan, err := buildPlan(cmd, o)
	if err != nil {
		return none, err
	}
	var apiKey string
	if o.apiKeyEnv != "" {
		apiKey = o.io.Getenv(o.apiKeyEnv)
		if apiKey == "" {
			return none, usagef("--api-key-env %s: the variable is empty or unset", o.apiKeyEnv)
		}
	}
	opts := o.baseOptions(plan, apiKey)
	if cmd.Flags().Changed("temperature") {
		t := o.temperature
		opts.Request.Temperature = &t
	}
	if err := shardOptions(cmd, o, &opts); err != nil {
		return none, err
	}
	if err := o.workloadAndOverlay(cmd, &opts); err != nil {
		return none, err
	}
	opts.SimGPUs = o.simGPUs
	if o.endpoint != "" {
		if capture.CheckEndpoint(o.endpoint) != nil {
			return none, usagef("--endpoint %q: want an http:// or https:// URL, e.g. http://127.0.0.1:8000", o.endpoint)
		}
	}

	m := &schema.Manifest{Title: o.title, Evidence: o.evidence}
	m.Client.Version = Version
	m.Client.Build = currentBuild(o.io)
	m.Client.Location = o.location
	m.Client.CommandLine = redactArgs(o.io.ErrOut, commandLine(cmd), apiKey)
	opts.Manifest = m
	opts.HostFS = os.DirFS("/")
	opts.GPUQuery = o.gpuQuery
	opts.Registered = o.registered
	opts.ReadyTimeout = o.readyTimeout

	if !o.simulate && o.model == "" {
		return none, usagef("--model is required")
	}
	o.progressOptions(&opts)
	return opts, nil
}

// checkScrapeFlags is captureOptions' first check: the server-metrics
// and accelerator scrape flags and the stop rule, each a usage error.
func (o *captureOptions) checkScrapeFlags() error {
	if o.serverMetricsInterval <= 0 {
		return usagef("--server-metrics-interval %s: want a positive duration", o.serverMetricsInterval)
	}
	if v := o.serverMetrics; v != "off" && v != capture.ServerMetricsAuto && !strings.HasPrefix(v, "http://") && !strings.HasPrefix(v, "https://") {
		return usagef("--server-metrics %q: want auto, off or an http(s) URL", v)
	}
	if !(o.maxErrorRate >= 0 && o.maxErrorRate <= 1) {
		return usagef("--max-error-rate %s: want a fraction from 0 to 1", digits.Shortest(o.maxErrorRate))
	}
	return o.checkGPUFlags()
}

// baseOptions is the capture.Options the flags give directly, with plan
// and the API key; captureOptions adds what needs checking or reading.
func (o *captureOptions) baseOptions(plan *capture.Plan, apiKey string) capture.Options {
	opts := capture.Options{
		Endpoint: o.endpoint,
		APIKey:   apiKey,
		Request: capture.RequestOptions{Model: o.model, API: o.api, Stream: !o.noStream,
			ForceLength: o.forceLength, PerChunkUsage: o.perChunkUsage},
		Plan:                  *plan,
		OutDir:                o.out,
		ServerMetrics:         serverMetricsOption(o.serverMetrics),
		ServerMetricsInterval: o.serverMetricsInterval,
		GPUMetrics:            o.gpuMetrics,
		GPUMetricsInterval:    o.gpuMetricsInterval,
		GPUMetricsMaxAge:      o.gpuMetricsMaxAge,
		GPUCustom:             o.gpuCustom,
		ResetPrefixCache:      o.resetPrefixCache,
		ServerFresh:           o.serverFresh,
		Sets:                  redactArgs(nil, o.sets, apiKey),
		Probe:                 !o.noProbe,
		Grace:                 o.grace,
		HTTP2:                 o.http2,
		SkipPreflight:         o.noPreflight,
		MaxErrorRate:          o.maxErrorRate,
		OnFailure:             failurePrinter(o.io.ErrOut, maxFailuresShown),
	}
	opts.Plan.DistinctPrompts = opts.Plan.DistinctPrompts || o.distinctPrompts
	opts.Trace = o.traceRun
	return opts
}

// workloadAndOverlay reads --prompts and the ShareGPT workload into opts,
// and --manifest, then applies the overlay and --set to a scratch manifest
// as capture will later, so a malformed one is a usage error before
// anything runs.
func (o *captureOptions) workloadAndOverlay(cmd *cobra.Command, opts *capture.Options) error {
	var err error
	if opts.Prompts, err = readPromptsFlag(o); err != nil {
		return err
	}
	opts.Dataset = o.prompts
	o.shareGPTWorkload(cmd, opts)
	if o.overlay != "" {
		b, err := os.ReadFile(o.overlay)
		if err != nil {
			return fmt.Errorf("--manifest: %w", err) // a file it cannot read: exit 1, not usage
		}
		opts.Overlay = b
	}
	// The same merge capture does later, on a scratch manifest now, so a
	// malformed --set or --manifest is a usage error before anything runs.
	scratch := &schema.Manifest{}
	if err := schema.ApplyOverlay(scratch, opts.Overlay, opts.Sets); err != nil {
		return usagef("%v", err)
	}
	return o.checkStated(scratch)
}

// progressOptions sets how capture reports progress: the live display on
// a terminal (or with --progress always), a plain line now and then
// otherwise under auto, nothing with never.
func (o *captureOptions) progressOptions(opts *capture.Options) {
	switch {
	case o.progress == "always" || (o.progress == "auto" && isTerminal(o.io.ErrOut)):
		o.live = &liveProgress{w: o.io.ErrOut}
		opts.Progress = o.live.render
	case o.progress == "auto":
		// Not a terminal (a log, CI): a plain line now and then.
		opts.Progress = func(p capture.Progress) { fmt.Fprintln(o.io.ErrOut, report.ProgressLine(p)) }
		opts.ProgressInterval = progressLineInterval
	}
}

// startSimulator starts the in-process simulator on 127.0.0.1 and points
// opts at it; stop shuts it down.
func (o *captureOptions) startSimulator(ctx context.Context, opts *capture.Options) (stop func(), err error) {
	if err := simulator.CheckTimeScale(o.simTimeScale); err != nil {
		return nil, usagef("--sim-time-scale: %v", err)
	}
	if o.model == "" {
		opts.Request.Model = simulator.DefaultConfig().Model
	}
	cfg := simulator.DefaultConfig()
	cfg.Seed = o.seed
	cfg.TimeScale = o.simTimeScale
	cfg.Model = opts.Request.Model
	cfg.MaxRunning = 4096
	cfg.QueueLimit = 4096
	cfg.GPUs = o.simGPUs
	endpoint, stop, err := simulator.Start(ctx, cfg)
	if errors.Is(err, simulator.ErrConfig) {
		return nil, usagef("--sim-time-scale: %v", err)
	}
	if err != nil {
		return nil, err
	}
	opts.Endpoint = endpoint
	opts.Simulator = true
	if o.simGPUs > 0 {
		opts.GPUMetrics = append(opts.GPUMetrics, endpoint+simulator.GPUMetricsPath)
		opts.GPUServing = schema.ServingSimulator
	}
	return stop, nil
}

// checkStated checks what --set and --manifest state (merged into
// scratch) for mistakes known from the flags alone, said before the run,
// not after it: an SLO that cannot be valid (a tpot limit without
// one_token), hardware other than the simulator's accelerators --sim-gpus
// scrapes.
func (o *captureOptions) checkStated(scratch *schema.Manifest) error {
	if ps := schema.ValidateSLO(scratch.SLO); len(ps) > 0 {
		return usagef("--set/--manifest: field %q: %s", ps[0].Field, ps[0].Message)
	}
	if err := capture.CheckSimulatedHardware(scratch.Hardware, o.simulate, o.simGPUs); err != nil {
		return usagef("--set/--manifest: %v", err)
	}
	return nil
}

// checkGPUFlags checks the accelerator-metrics flags.
func (o *captureOptions) checkGPUFlags() error {
	if o.gpuMetricsMaxAge < 0 {
		return usagef("--gpu-metrics-max-age %s: want a duration of 0 or more", o.gpuMetricsMaxAge)
	}
	if o.gpuMetricsInterval <= 0 {
		return usagef("--gpu-metrics-interval %s: want a positive duration", o.gpuMetricsInterval)
	}
	for _, u := range o.gpuMetrics {
		if !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			return usagef("--gpu-metrics %q: want an http(s) URL", u)
		}
	}
	switch {
	case o.simGPUs < 0 || o.simGPUs > simulator.MaxGPUs:
		return usagef("--sim-gpus %d: want 0 to %d", o.simGPUs, simulator.MaxGPUs)
	case o.simGPUs > 0 && !o.simulate:
		return usagef("--sim-gpus needs --simulate")
	case o.simGPUs > 0 && len(o.gpuMetrics) > 0:
		return usagef("--sim-gpus scrapes the simulator's accelerators: give it without --gpu-metrics")
	case (o.gpuCustom.EnergyCounter != "" || o.gpuCustom.PowerGauge != "") && len(o.gpuMetrics) == 0 && o.simGPUs == 0:
		return usagef("--energy-counter and --power-gauge name metrics of a --gpu-metrics endpoint (or --sim-gpus): give one")
	}
	if _, err := o.gpuCustom.Names(); err != nil {
		return usagef("%v", err)
	}
	return nil
}

// serverMetricsOption maps --server-metrics to capture.Options.ServerMetrics.
func serverMetricsOption(v string) string {
	if v == "off" {
		return ""
	}
	return v
}

// readTraceFile reads a whole trace file, which the run keeps: at most
// schema.MaxAttachmentSize bytes.
func readTraceFile(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	data, err := io.ReadAll(io.LimitReader(f, schema.MaxAttachmentSize+1))
	if err == nil && len(data) > schema.MaxAttachmentSize {
		err = fmt.Errorf("%s is larger than the %d bytes a run keeps of its trace file; cut the part to replay into a file of its own", name, schema.MaxAttachmentSize)
	}
	return data, err
}
