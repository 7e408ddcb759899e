package cli

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	"github.com/benchseal/benchseal/schema"
	"github.com/benchseal/benchseal/synth"
)

// zstdAuto is the request count from which synth compresses records by
// default.
const zstdAuto = 100000

type synthOptions struct {
	io     *IO
	out    string
	points string
	zstd   bool
	opts   synth.Options
}

func newSynthCmd(io *IO) *cobra.Command {
	o := &synthOptions{io: io, opts: synth.DefaultOptions()}
	cmd := &cobra.Command{
		Use:   "synth --out RUNDIR",
		Short: "Write a deterministic synthetic run (same seed, same bytes)",
		Long: `synth simulates a benchmark of an LLM server with a queueing model and writes
a run directory: manifest.json (evidence "synthetic"), workload.jsonl and the
records. Latency grows with load in both concurrency sweeps (closed loop) and
rate sweeps (open loop, Poisson arrivals, with scheduled_ns and send lag). The
run has multi-token chunks, one-token answers, stalls, warmup records, repeats
and failures of every status. Records are written zstd-compressed
(records.jsonl.zst) from 100000 requests on, or when --zstd is given.

With no flags it writes a small demo run: concurrency 4, 16 and 64 (past the
server's 48 batch slots) × 2 repeats, 1800 measured requests.`,
		Example: `  benchseal synth --out demo-run
  benchseal synth --out sweep --mode rate --points 4,12,24 --repeats 3
  benchseal synth --out big --requests 1000002`,
		Args: noArgs(),
		RunE: func(cmd *cobra.Command, _ []string) error {
			if !cmd.Flags().Changed("zstd") {
				o.zstd = o.opts.Requests >= zstdAuto
			}
			if err := o.parsePoints(cmd.Flags().Changed("points")); err != nil {
				return err
			}
			return runSynth(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.out, "out", "", "run directory to create (must not exist or be empty; required)")
	f.Uint64Var(&o.opts.Seed, "seed", o.opts.Seed, "seed of the pseudo-random stream")
	f.IntVar(&o.opts.Requests, "requests", o.opts.Requests, "measured requests over all points and repeats")
	enumFlag(f, &o.opts.Mode, "mode", o.opts.Mode, []string{schema.ModeConcurrency, schema.ModeRate}, "load mode: concurrency (closed loop) or rate (open loop, Poisson)")
	f.StringVar(&o.points, "points", "", "comma-separated concurrency levels or rates in requests/s (default 4,16,64 or 8,24,48)")
	f.IntVar(&o.opts.Repeats, "repeats", o.opts.Repeats, "measured repeats of every point")
	f.IntVar(&o.opts.Warmup, "warmup", o.opts.Warmup, "warmup requests before each point")
	f.IntVar(&o.opts.WorkloadItems, "items", o.opts.WorkloadItems, "workload items (lines of workload.jsonl)")
	f.BoolVar(&o.zstd, "zstd", false, "write records.jsonl.zst (default: from 100000 requests on)")
	cmd.MarkFlagRequired("out")
	return cmd
}

func (o *synthOptions) parsePoints(given bool) error {
	if !given {
		if o.opts.Mode == schema.ModeRate {
			o.opts.Points = synth.DefaultRatePoints
		}
		return nil
	}
	o.opts.Points = nil
	for _, s := range strings.Split(o.points, ",") {
		v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
		if err != nil {
			return usagef("--points: %q is not a number", s)
		}
		o.opts.Points = append(o.opts.Points, v)
	}
	return nil
}

func runSynth(ctx context.Context, o *synthOptions) error {
	if err := o.opts.Validate(); err != nil {
		return usageError{err}
	}
	m, n, err := synth.WriteRun(ctx, o.out, o.opts, o.zstd)
	if err != nil {
		return err
	}
	file := schema.RecordsFile
	if o.zstd {
		file = schema.RecordsZstdFile
	}
	fmt.Fprintf(o.io.Out, "wrote %s: %d records (%d points × %d repeats, %s mode) in %s, workload %s\n",
		o.out, n, len(m.Load.Points), m.Load.Repeats, m.Load.Mode, file, m.Workload.SHA256[:12])
	if _, _, note := o.opts.Split(); note != "" {
		fmt.Fprintln(o.io.Out, note)
	}
	return nil
}
