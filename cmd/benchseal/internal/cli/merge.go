package cli

import (
	"context"
	"errors"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/benchseal/benchseal/merge"
	"github.com/benchseal/benchseal/replay"
	"github.com/benchseal/benchseal/report"
	"github.com/benchseal/benchseal/schema"
)

type mergeOptions struct {
	io              *IO
	shardDirs       []string
	out             string
	shards          int
	allowIncomplete bool
	commandLine     []string
	pull            mergePullFlags
	// pulled records, per shard index, the bundle merge --pull took it from.
	pulled map[int]*schema.ShardPull
}

func newMergeCmd(io *IO, d *Deps) *cobra.Command {
	o := &mergeOptions{io: io, pull: mergePullFlags{deps: d}}
	cmd := &cobra.Command{
		Use:   "merge (SHARD_RUNDIR... | --pull REF --shards N (--key PUB ... | --certificate-identity ID ...)) --out RUNDIR",
		Short: "Join the shard runs of a sharded capture into one run (exit 3 when refused)",
		Long: `merge joins the run directories written by capture --shard I/N (or --shards N
in a Kubernetes Indexed Job) into one run directory. Each shard run must
validate; all must come from the same plan, seed and manifest (everything but
the run id, times, epoch, shard, host and command line equal), hold distinct
shard indices of one count, and together cover every scheduled request of every
point × repeat. A missing or incomplete shard is refused unless
--allow-incomplete, which writes the run marked incomplete with the missing
requests counted as not sent.

Records keep their global request numbers and say which shard sent them. Each
shard's times move by its offset (its epoch minus the earliest, by the
machines' wall clocks); chunk times are relative to sent_ns, so no per-request
latency depends on two clocks. The offsets are as good as the clocks: the
manifest's shards.timeline_uncertainty_ns sums the two largest error bounds the
shards' kernels stated (null when a clock gave none), and replay prints the
window, throughput and goodput with that uncertainty.

The run is built beside --out and renamed into place only after it validates.

--pull REF --shards N collects the shards a Kubernetes Job of 'benchseal k8s
job' pushed: it pulls REF-shard-0 … REF-shard-(N-1), verifies each bundle as
'benchseal verify' does (only the keys given with --key, or the keyless
identity with --trusted-root; every key must have signed; --allow-unsigned
checks integrity only and says so), unpacks the verified bundles into a
temporary directory and merges them. A shard that fails verification is
refused (exit 3); a shard the registry does not have is refused too, or with
--allow-incomplete counted missing. Registry credentials as for pull.

Exit codes: 0 merged; 3 refused (a shard invalid, missing, overlapping, from
another plan or seed); 1 I/O; 2 usage.`,
		Example: `  benchseal capture --simulate --rate 200 --requests 1000 --seed 7 --shard 0/2 --out s0
  benchseal capture --simulate --rate 200 --requests 1000 --seed 7 --shard 1/2 --out s1
  benchseal merge s0 s1 --out run
  benchseal merge --pull registry.example/bench/run:v1 --shards 8 --key publisher.pub --out run`,
		Args: cobra.ArbitraryArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			o.shardDirs = args
			o.commandLine = commandLine(cmd)
			if o.pull.ref != "" {
				return runMergePull(cmd.Context(), o)
			}
			if name := o.pull.strayFlag(cmd.Flags()); name != "" {
				return usagef("--%s goes with --pull", name)
			}
			if len(args) == 0 {
				return usagef("give the shard run directories to merge")
			}
			if o.shards < 0 || o.shards > schema.MaxShards {
				return usagef("--shards %d: want 1..%d", o.shards, schema.MaxShards)
			}
			return runMerge(cmd.Context(), o)
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.out, "out", "", "run directory to create (must not exist or be empty)")
	f.IntVar(&o.shards, "shards", 0, "the shard count expected (default: the count the shards state); set it when a whole shard may be absent")
	f.BoolVar(&o.allowIncomplete, "allow-incomplete", false, "write the run marked incomplete when a shard is missing or incomplete (its requests counted as not sent) instead of refusing")
	o.pull.bind(f)
	cmd.MarkFlagRequired("out")
	return cmd
}

func runMerge(ctx context.Context, o *mergeOptions) error {
	for _, d := range o.shardDirs {
		if err := checkRunDirArg(d); err != nil {
			return err
		}
	}
	if err := refuseInputAsOut("--out", o.out, o.shardDirs); err != nil {
		return err
	}
	res, err := merge.Merge(ctx, o.shardDirs, o.out, merge.Options{
		AllowIncomplete: o.allowIncomplete,
		Shards:          o.shards,
		CommandLine:     o.commandLine,
		Pulled:          o.pulled,
	})
	if err != nil {
		return mergeError(err)
	}
	if err := report.MergeText(o.io.Out, res); err != nil {
		// The merged run is complete on disk; only its summary was lost,
		// and a summary nobody saw is not a success to report with exit 0.
		return fmt.Errorf("merged into %s, but its summary could not be written: %w", res.Dir, err)
	}
	warnShardsApart(ctx, o.io, res.Dir)
	return nil
}

// warnShardsApart warns on stderr of every point whose shards measured it
// at different times (replay.ShardsApart): the merged run is written and
// valid, but its offered load was never offered at once. The merge is
// done either way, so a check that cannot run is a warning too.
func warnShardsApart(ctx context.Context, io *IO, dir string) {
	rd, err := schema.OpenRunDir(dir)
	var notes []string
	if err == nil {
		notes, err = replay.ShardsApart(ctx, rd)
	}
	if err != nil {
		fmt.Fprintf(io.ErrOut, "benchseal: warning: could not check whether the shards measured together (replay notes it): %v\n", err)
	}
	for _, n := range notes {
		fmt.Fprintln(io.ErrOut, "benchseal: warning:", n)
	}
}

// mergeError maps an error of package merge to its exit code: a refused
// merge is "checked and rejected" (3), anything else an error (1).
func mergeError(err error) error {
	if errors.Is(err, merge.ErrMerge) {
		return rejected(err)
	}
	return err
}
