package cli

import (
	"context"
	"fmt"

	"github.com/spf13/cobra"

	"github.com/benchseal/benchseal/artifact/registry"
)

type pullOptions struct {
	io    *IO
	ref   string
	out   string
	flags registryFlags
}

func newPullCmd(io *IO) *cobra.Command {
	o := &pullOptions{io: io}
	cmd := &cobra.Command{
		Use:   "pull REF --out PATH [--plain-http]",
		Short: "Pull a bundle and its signatures from an OCI registry",
		Long: `pull fetches REF (host[:port]/repository:tag or @sha256:<digest>) into a new bundle
at PATH: a directory, or a deterministic tar when PATH ends in .tar. The result
has the same blobs, run manifest digest and index.json as the bundle pushed,
with every signature the registry lists for the run manifest (referrers API, or
the referrers tag sha256-<hex>), so 'benchseal verify' treats it the same way.

Every size is checked against the bundle limits before reading and every digest
while the bytes stream; the run manifest is checked before any layer is
fetched; referrers that are not benchseal signatures of this run are skipped
and listed. Any mismatch fails the pull (exit 3) and leaves nothing at PATH;
PATH must not exist. pull does not check signatures: run verify.

A registry that sends no response headers within --response-timeout of a
request, or does not finish the whole pull within --timeout (a registry that
accepts and never answers, or trickles), fails the pull (exit 1) with an error
naming the timeout. A request that timed out is not retried, so a silent
registry fails the pull after one --response-timeout (once connected; connecting
is bounded by 30 s); reset connections, cut-off answers and 5xx, 408 and 429
answers are retried up to 5 times, 0.2-3 s apart. A negative timeout is a usage
error (exit 2). Credentials as for push.`,
		Example: `  benchseal pull 127.0.0.1:5000/bench/run:v1 --out run.tar --plain-http
  benchseal verify run.tar --key publisher.pub`,
		Args: exactArgs(1, "one registry reference"),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.ref = args[0]
			return runPull(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.out, "out", "", "bundle to write: a directory, or a .tar file (required)")
	cmd.MarkFlagRequired("out")
	o.flags.bind(cmd)
	return cmd
}

func runPull(ctx context.Context, o *pullOptions) error {
	if err := checkBundleOut(o.out); err != nil {
		return err
	}
	opts, err := o.flags.options(o.io, o.ref)
	if err != nil {
		return err
	}
	res, err := registry.Pull(ctx, o.ref, o.out, opts)
	if err != nil {
		return registryError(err)
	}
	fmt.Fprintf(o.io.Out, "pulled %s\n  into       %s\n  run id     %s\n  manifest   %s\n  layers     %d\n",
		res.Reference, res.Path, res.RunID, res.ManifestDigest, res.Layers)
	for _, r := range res.Referrers {
		fmt.Fprintf(o.io.Out, "  referrer   %s\n", r)
	}
	for _, s := range res.Skipped {
		fmt.Fprintf(o.io.Out, "  skipped    %s (%s)\n", s.Digest, s.Reason)
	}
	return nil
}
