package cli

import (
	"context"
	"fmt"
	"net"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchseal/benchseal/simulator"
)

type simulateOptions struct {
	io       *IO
	listen   string
	duration time.Duration
	cfg      simulator.Config
}

func newSimulateCmd(io *IO) *cobra.Command {
	o := &simulateOptions{io: io, cfg: simulator.DefaultConfig()}
	cmd := &cobra.Command{
		Use:   "simulate [--listen 127.0.0.1:PORT] [--seed N] [--duration D] [model flags]",
		Short: "Serve a simulated OpenAI-compatible streaming server on loopback (synthetic evidence)",
		Long: `simulate serves /v1/chat/completions, /v1/completions (streamed as server-sent
events or not), /v1/models and /version on a loopback address with a seeded
latency model: prefill time growing with prompt length, per-token decode time
growing with the number of requests being served, a queue limit answering 429,
multi-token chunks, optional stalls, keep-alive comments, reasoning content and
in-band errors, and a usage chunk. It is a simulator, labelled as such in every
answer (model owned_by "benchseal-simulator", header X-Benchseal-Simulator), so
a capture against it is marked evidence "synthetic".

It prints its address and runs until interrupted (Ctrl-C, SIGTERM) or until
--duration has passed. Only loopback addresses are accepted.`,
		Example: `  benchseal simulate --listen 127.0.0.1:8089
  benchseal simulate --listen 127.0.0.1:0 --duration 30s --time-scale 0.1 --chunk-tokens 4`,
		Args: noArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkLoopback(o.listen); err != nil {
				return err
			}
			if o.duration < 0 {
				return usagef("--duration must not be negative")
			}
			return runSimulate(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	c := &o.cfg
	f.StringVar(&o.listen, "listen", "127.0.0.1:8089", "loopback address to listen on (port 0 picks a free one)")
	f.DurationVar(&o.duration, "duration", 0, "stop by itself after this long (0: run until interrupted)")
	f.Int64Var(&c.Seed, "seed", 0, "seed of every per-request random choice")
	f.StringVar(&c.Model, "model", c.Model, "the model name served")
	f.BoolVar(&c.AnyModel, "any-model", false, "accept requests for any model name")
	f.Float64Var(&c.TimeScale, "time-scale", 1, "multiply every duration of the latency model, in (0, 1000] (e.g. 0.01 for tests)")
	f.DurationVar(&c.PrefillBase, "prefill-base", c.PrefillBase, "fixed part of prefill time")
	f.DurationVar(&c.PrefillPerToken, "prefill-per-token", c.PrefillPerToken, "prefill time per prompt token (word)")
	f.DurationVar(&c.DecodeBase, "decode-base", c.DecodeBase, "time per output token with no other request running")
	f.DurationVar(&c.DecodePerRunning, "decode-per-running", c.DecodePerRunning, "extra time per output token per other running request")
	f.Float64Var(&c.StepJitter, "step-jitter", 0, "vary each output token's time by a uniform factor in [1-F, 1+F], F in [0, 1): step-by-step variation of a live server")
	f.Int64Var(&c.JitterSeed, "jitter-seed", 0, "seed of the --step-jitter draws only (two servers of one --seed and two jitter seeds time the same answers differently)")
	f.IntVar(&c.MaxRunning, "max-running", c.MaxRunning, "requests served at once")
	f.IntVar(&c.QueueLimit, "queue-limit", c.QueueLimit, "requests waiting for a slot before answers become 429")
	f.IntVar(&c.MaxChunkTokens, "chunk-tokens", c.MaxChunkTokens, "each chunk carries 1..N tokens")
	f.Float64Var(&c.StallProb, "stall-prob", 0, "probability of a stall before each chunk")
	f.DurationVar(&c.Stall, "stall", 0, "length of a stall")
	f.Float64Var(&c.ErrorRate, "error-rate", 0, "probability that a stream fails with an in-band error, drawn per request (seeded by --seed and the request's number)")
	f.IntVar(&c.ReasoningTokens, "reasoning-tokens", 0, "first N tokens of chat answers sent as reasoning_content")
	f.DurationVar(&c.KeepAlive, "keep-alive", 0, "send ': keep-alive' comments at this interval while a request waits (0: never)")
	f.IntVar(&c.DefaultMaxTokens, "default-max-tokens", c.DefaultMaxTokens, "output length when a request sets no max_tokens")
	f.BoolVar(&c.PrefixCaching, "prefix-caching", false, "model a prefix cache: a prompt seen since the start or the last reset skips its per-token prefill")
	f.DurationVar(&c.ColdStart, "cold-start", 0, "extra prefill time of the first request after start")
	f.StringVar(&c.Flavor, "flavor", simulator.FlavorVLLM, "the engine to answer like: vllm, or llamacpp (llama.cpp's names, /props, /tokenize, /slots, a slot prompt cache reported in usage and timings)")
	f.BoolVar(&c.CloseAfterStream, "close-after-stream", false, "close the connection a few ms after every streamed answer, although it said keep-alive (as llama.cpp's server does)")
	f.BoolVar(&c.SlotSave, "slot-save", false, "llamacpp flavor: act as started with --slot-save-path (slot erase allowed; 501 otherwise)")
	f.BoolVar(&c.NoTokenize, "no-tokenize", false, "llamacpp flavor: serve no /tokenize and /apply-template (404), as a server without a tokenizer endpoint")
	f.BoolVar(&c.NoHostCache, "no-host-cache", false, "llamacpp flavor: act as started with --cache-ram 0 (no host prompt cache behind the slots)")
	f.IntVar(&c.GPUs, "gpus", 0, "simulate N accelerators and serve their metrics at /gpu-metrics on the same address (DCGM exporter names; power rising with the running requests; modelName benchseal-sim)")
	f.StringVar(&c.CacheResetPath, "cache-reset-path", simulator.ResetPathVLLM, "POST endpoint that empties the prefix cache: /reset_prefix_cache (vLLM), /flush_cache (SGLang) or none")
	return cmd
}

// checkLoopback accepts host:port addresses on the loopback interface only.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usagef("--listen %q: %v", addr, err)
	}
	if host == "localhost" {
		return nil
	}
	ip := net.ParseIP(host)
	if ip == nil || !ip.IsLoopback() {
		return usagef("--listen %q: the simulator serves on loopback only (127.0.0.1, ::1 or localhost)", addr)
	}
	return nil
}

func runSimulate(ctx context.Context, o *simulateOptions) error {
	if err := simulator.CheckTimeScale(o.cfg.TimeScale); err != nil {
		return usagef("--time-scale: %v", err)
	}
	s, err := simulator.New(o.cfg)
	if err != nil {
		return usagef("%v", err)
	}
	ln, err := net.Listen("tcp", o.listen)
	if err != nil {
		return fmt.Errorf("simulate: %w", err)
	}
	if o.duration > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.duration)
		defer cancel()
	}
	// The accelerators' path is said without a second URL: scripts take
	// the endpoint as the line's one http:// address.
	gpus := ""
	if n := s.Config().GPUs; n > 0 {
		gpus = fmt.Sprintf(" (and the metrics of %d simulated accelerator(s) at path /gpu-metrics: capture --gpu-metrics ENDPOINT/gpu-metrics --gpu-metrics-max-age 0s, since their readings are computed on every scrape)", n)
	}
	fmt.Fprintf(o.io.Out, "benchseal simulator (synthetic: not an inference engine) serving model %q on http://%s%s\n", s.Config().Model, ln.Addr(), gpus)
	err = s.Serve(ctx, ln)
	served, rejected := s.Stats()
	fmt.Fprintf(o.io.Out, "simulator stopped: %d requests served, %d answered 429\n", served, rejected)
	return err
}
