package cli

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/benchseal/benchseal/artifact"
	"github.com/benchseal/benchseal/schema"
)

type packOptions struct {
	io          *IO
	run         string
	out         string
	key         string
	maxProblems int
}

func newPackCmd(io *IO) *cobra.Command {
	o := &packOptions{io: io}
	cmd := &cobra.Command{
		Use:   "pack RUNDIR --out PATH [--key KEY]",
		Short: "Pack a run directory into a reproducible OCI bundle, optionally signed",
		Long: `pack validates RUNDIR (an invalid run is refused with the validation problems,
exit 3) and writes it as an OCI image layout: a directory, or a deterministic
tar when PATH ends in .tar. The layers are the manifest, the claims, the
workload, the records sharded by load point and repeat (zstd), and the
attachments. The same run gives byte-identical blobs and the same manifest
digest on any machine. org.opencontainers.image.created is SOURCE_DATE_EPOCH
when set, else the run's finish time. The write is atomic and PATH must not
exist. With --key the bundle is signed as by 'benchseal sign'.`,
		Example: `  benchseal pack demo-run --out demo.tar
  SOURCE_DATE_EPOCH=1767225600 benchseal pack demo-run --out demo --key publisher.key`,
		Args: exactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o.run = args[0]
			if o.maxProblems < 1 {
				return usagef("--max-problems must be ≥ 1")
			}
			return runPack(cmd.Context(), o)
		},
	}
	cmd.Flags().StringVar(&o.out, "out", "", "bundle to write: a directory, or a .tar file (required)")
	cmd.Flags().StringVar(&o.key, "key", "", "private key to sign the bundle with")
	cmd.Flags().IntVar(&o.maxProblems, "max-problems", 50, "report at most this many validation problems")
	cmd.MarkFlagRequired("out")
	return cmd
}

// sourceDateEpoch reads SOURCE_DATE_EPOCH; zero time when unset.
func sourceDateEpoch(io *IO) (time.Time, error) {
	s := io.Getenv("SOURCE_DATE_EPOCH")
	if s == "" {
		return time.Time{}, nil
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n < 0 {
		return time.Time{}, usagef("SOURCE_DATE_EPOCH must be a non-negative integer, got %q", s)
	}
	return time.Unix(n, 0).UTC(), nil
}

func runPack(ctx context.Context, o *packOptions) error {
	if err := checkBundleOut(o.out); err != nil {
		return err
	}
	created, err := sourceDateEpoch(o.io)
	if err != nil {
		return err
	}
	var signer *artifact.Signer
	if o.key != "" {
		if signer, err = loadSigner(o.io, o.key); err != nil {
			return err
		}
	}
	res, err := artifact.Pack(ctx, o.run, o.out, artifact.PackOptions{Created: created, MaxProblems: o.maxProblems, Signer: signer})
	reportReclaimed(o.io, resReclaimed(res))
	if err != nil {
		if errors.Is(err, schema.ErrInvalid) || errors.Is(err, artifact.ErrInvalid) {
			return rejected(err)
		}
		return err
	}
	fmt.Fprintf(o.io.Out, "packed %s\n  run        %s\n  manifest   %s\n  created    %s\n  layers     %d\n",
		res.Path, o.run, res.ManifestDigest, res.Created, len(res.Layers))
	if sig := res.Signature; sig != nil {
		printSigned(o.io, res.Path, sig)
	}
	return nil
}

func resReclaimed(res *artifact.PackResult) []schema.Reclaimed {
	if res == nil {
		return nil
	}
	return res.Reclaimed
}

// reportReclaimed says which leftovers of killed runs were removed.
func reportReclaimed(io *IO, rs []schema.Reclaimed) {
	for _, r := range rs {
		fmt.Fprintf(io.ErrOut, "benchseal: removed stale staging %s\n", r)
	}
}
